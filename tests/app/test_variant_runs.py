"""A sweep over two encoders: one parent run per encoder, comparable columns, the control said."""

from __future__ import annotations

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from regbias.study.variant_runs import CONTROL_TAG, VARIANT_ROLE
from tests.cli import run_cli, runs

SWEEP = [
    "-m",
    "seed=0",
    "experiment=smoke",
    "encoder=minilm_l6,tiny",
    "trainer.enable_progress_bar=false",
    # Five models and two repetitions: enough to resample, so the primary has an interval.
    "finetune.k_folds=5",
    "distance.repetitions=2",
]


@pytest.fixture(scope="module")
def swept(tmp_path_factory, shared_data_dir):
    workdir = tmp_path_factory.mktemp("variants")
    done = run_cli(workdir, *SWEEP, data_dir=shared_data_dir)
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir, runs(workdir)


def by_role(all_runs, role):
    return [r for r in all_runs if r.data.tags.get("regbias.role") == role]


@pytest.mark.slow
def test_each_encoder_is_a_parent_of_its_jobs_under_the_sweep(swept):
    _, all_runs = swept
    (sweep,) = by_role(all_runs, "sweep")
    variants = by_role(all_runs, VARIANT_ROLE)
    assert len(variants) == 2 and {v.info.status for v in variants} == {"FINISHED"}
    assert {v.data.tags["mlflow.parentRunId"] for v in variants} == {sweep.info.run_id}
    jobs = [r for r in all_runs if r.data.tags.get("job_num") is not None]
    assert len(jobs) == 2
    own = {v.data.tags["regbias.variant"]: v.info.run_id for v in variants}
    for job in jobs:  # nested under its encoder's run, not the sweep's
        assert job.data.tags["mlflow.parentRunId"] == own[job.data.tags["regbias.variant"]]


@pytest.mark.slow
def test_the_encoders_runs_have_the_same_columns_and_the_control_says_so(swept):
    workdir, all_runs = swept
    variants = {v.data.params["encoder.name"]: v for v in by_role(all_runs, VARIANT_ROLE)}
    assert set(variants) == {"minilm_l6", "tiny"}
    trained, toy = variants["minilm_l6"], variants["tiny"]
    assert "seed" not in trained.data.params
    # The same names in both (a correlation whose value is undefined for a toy is not logged).
    names = [
        {k for k in v.data.metrics if k.startswith(("headline/", "dist_mean/"))}
        for v in (trained, toy)
    ]
    # The tiny encoder's models score every region alike (every text's correctness 0.5), so its
    # primary has a constant column and no rho: the one headline a toy may lack.
    undefined = {
        f"headline/primary_{name}" for name in ("rho", "p", "significant", "ci_low", "ci_high")
    }
    assert names[1] <= names[0] and names[0] - names[1] <= undefined
    assert any(k.startswith("dist_mean/") for k in names[0])
    assert (
        "corr/dist_sinkhorn_long/gap_accuracy/rho"
        in toy.data.metrics.keys() & trained.data.metrics.keys()
    )
    assert all(not k.startswith("variant") for k in trained.data.metrics)
    assert trained.data.tags[CONTROL_TAG] == "false" and toy.data.tags[CONTROL_TAG] == "true"
    assert "(random weights: a control)" in toy.info.run_name
    assert "encoder=tiny" in toy.info.run_name and "encoder=minilm_l6" in trained.info.run_name
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    assert {"report.md", "report.html"} <= {a.path for a in client.list_artifacts(toy.info.run_id)}
    note = toy.data.tags["mlflow.note.content"]
    # The random encoder's warning first, then the bottom line (issue 60).
    assert note.startswith("**Warning: random encoder.**") and "\n\n**Bottom line.**" in note
    (sweep,) = by_role(all_runs, "sweep")  # the comparison page still reads the copies
    folders = {a.path for a in client.list_artifacts(sweep.info.run_id)}
    assert {f"variant-{v.data.tags['regbias.variant']}" for v in variants.values()} <= folders


@pytest.mark.slow
def test_the_comparison_s_primary_intervals_are_the_encoders_own(swept, tmp_path):
    """Each encoder's interval on the page is its report's (resampling MiniLM's texts too)."""
    workdir, all_runs = swept
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    (sweep,) = by_role(all_runs, "sweep")
    table = pd.read_csv(
        client.download_artifacts(sweep.info.run_id, "comparison/primary.csv", tmp_path)
    )
    (row,) = table.to_dict("records")
    variants = {v.data.params["encoder.name"]: v for v in by_role(all_runs, VARIANT_ROLE)}
    for side in ("first", "second"):
        name = "minilm_l6" if "minilm" in row[side] else "tiny"
        folder = tmp_path / name
        path = client.download_artifacts(variants[name].info.run_id, "analysis/primary.csv", folder)
        (own,) = pd.read_csv(path).to_dict("records")
        ends = (row[f"rho_{side}_ci_low"], row[f"rho_{side}_ci_high"])
        if pd.isna(own["spearman_ci_low"]):  # no interval in its report: none here either
            assert pd.isna(list(ends)).all()
            continue
        assert ends == pytest.approx((own["spearman_ci_low"], own["spearman_ci_high"]))


@pytest.mark.slow
def test_running_the_sweep_again_reuses_each_encoders_run(swept, shared_data_dir):
    workdir, before = swept
    again = run_cli(workdir, *SWEEP, data_dir=shared_data_dir)
    assert again.returncode == 0, again.stderr[-4000:]
    after = runs(workdir)
    ids = {r.info.run_id for r in by_role(before, VARIANT_ROLE)}
    assert {r.info.run_id for r in by_role(after, VARIANT_ROLE)} == ids
    assert {r.info.status for r in by_role(after, VARIANT_ROLE)} == {"FINISHED"}
    jobs = [r for r in after if r.data.tags.get("job_num") is not None]
    assert len(jobs) == 2 and {j.data.tags["mlflow.parentRunId"] for j in jobs} == ids
