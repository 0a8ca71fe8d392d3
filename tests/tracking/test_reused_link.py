"""A study lists every job under its parent: a reused run from elsewhere gets a linked child."""

from __future__ import annotations

from mlflow.tracking import MlflowClient

from regbias.tracking.runs import REUSED_TAG, link_reused_run, linked_runs, start_run


def test_a_reused_run_is_linked_under_the_parent_with_its_params_and_metrics(tmp_path) -> None:
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    experiment = client.create_experiment("e", artifact_location=str(tmp_path / "art"))
    single = start_run(client, experiment, "seed0", {"seed": "0", "regbias.config_hash": "h"})
    client.log_param(single.run_id, "seed", "0")
    single.metrics({"headline/primary_rho": -0.011, "time/total_s": 200.0})
    client.set_terminated(single.run_id, "FINISHED")
    parent = start_run(client, experiment, "study", {})

    link = link_reused_run(client, experiment, parent.run_id, single.run_id, "job0 (reused)")
    assert link is not None
    run = client.get_run(link)
    assert run.info.status == "FINISHED"
    assert run.data.tags["mlflow.parentRunId"] == parent.run_id
    assert run.data.tags[REUSED_TAG] == single.run_id
    assert single.run_id in run.data.tags["mlflow.note.content"]
    assert "regbias.config_hash" not in run.data.tags  # a link is never found as the job itself
    assert run.data.params == {"seed": "0"}
    assert run.data.metrics["headline/primary_rho"] == -0.011
    assert linked_runs(client, single.run_id) == [link]
    children = client.search_runs([experiment], f"tags.mlflow.parentRunId = '{parent.run_id}'")
    assert [c.info.run_name for c in children] == ["job0 (reused)"]
    # The original stays where it was.
    assert "mlflow.parentRunId" not in client.get_run(single.run_id).data.tags


def test_a_run_already_under_this_parent_gets_no_link(tmp_path) -> None:
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    experiment = client.create_experiment("e", artifact_location=str(tmp_path / "art"))
    parent = start_run(client, experiment, "study", {})
    child = start_run(client, experiment, "job0", {}, parent.run_id)
    assert link_reused_run(client, experiment, parent.run_id, child.run_id, "x") is None
    assert linked_runs(client, child.run_id) == []
    # A rerun of a sweep of several variants: its jobs sit under the variants' runs.
    variant = start_run(client, experiment, "variant", {}, parent.run_id)
    grandchild = start_run(client, experiment, "job1", {}, variant.run_id)
    assert link_reused_run(client, experiment, parent.run_id, grandchild.run_id, "y") is None
