"""The sweep's end: pooled matrices, concatenated models, failed jobs named, parent FAILED."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.study import StudyResults
from regbias.app.settings import read_settings
from regbias.app.sweep import SweepCallback
from regbias.distances.matrix import DistanceMatrix
from regbias.study.aggregate import aggregate_sweep, pool_results
from regbias.tracking.ledger import JOB_FILE, PARENT_FILE, JobRecord
from regbias.tracking.runs import connect, start_run
from tests.conftest import ROOT, local_tracking

GROUPS = ["au", "ca", "nz", "uk", "us"]


def fake_job(seed: int) -> StudyResults:
    rng = np.random.default_rng(seed)
    values = rng.uniform(1, 2, size=(3, 5, 5))
    values = (values + values.transpose(0, 2, 1)) / 2
    for r in range(3):
        np.fill_diagonal(values[r], 0)
    matrix = DistanceMatrix.from_repetitions("sinkhorn_short", GROUPS, values)
    rows = [
        (f"seed{seed}/fold{f}", seed, f, g, rep, "accuracy", rng.uniform(0.6, 0.9), 20)
        for f in range(2)
        for g in GROUPS
        for rep in range(2)
    ]
    columns = ["model", "seed", "fold", "group", "repetition", "metric", "value", "n_texts"]
    per_model = pd.DataFrame(rows, columns=columns)
    sizes = {g: 100 for g in GROUPS}
    return StudyResults(GROUPS, {"sinkhorn_short": matrix}, per_model, sizes, {"seed": seed})


def log_fake_job(client, experiment, parent_id, results):
    run = start_run(client, experiment, "job", {}, parent_run_id=parent_id)
    matrix = results.distances["sinkhorn_short"]
    run.json(matrix.to_dict(), "distances/sinkhorn_short.json")
    run.table(results.per_model, "performance/per_model.csv")
    meta = {"groups": results.groups, "group_sizes": results.group_sizes, "meta": results.meta}
    run.json(meta, "results/study.json")
    draws = {"kind": ["long", "long_twin"], "texts": [30, 10], "texts_in_full": [20, 5]}
    run.table(pd.DataFrame(draws), "data/draws.csv")
    client.set_terminated(run.run_id, "FINISHED")
    return run.run_id


def composed(*overrides: str):
    """The real config with Hydra's node (the sweep callback reads its sweep dir)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=True)


@pytest.fixture
def store(tmp_path):
    settings = local_tracking(tmp_path, "agg")
    client, experiment = connect(settings)
    config = composed(
        "task=run",
        f"tracking.uri={settings.uri}",
        f"tracking.artifact_root={settings.artifact_root}",
        "tracking.experiment=agg",
        "analysis.correlation.relabellings=99",
        # The sweep's end embeds the real corpus for its test of record: a few texts a group,
        # by the tiny random encoder (what is tested is the sweep's end, not the vectors).
        "analysis.tests.embedding.cap=200",
        "encoder=tiny",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "seed=0",
    )
    return client, experiment, config, tmp_path


def test_pool_results_weights_repetitions():
    jobs = [fake_job(0), fake_job(1)]
    pooled = pool_results(jobs)
    matrix = pooled.distances["sinkhorn_short"]
    assert matrix.n_repetitions == 6
    expected = (
        jobs[0].distances["sinkhorn_short"].mean + jobs[1].distances["sinkhorn_short"].mean
    ) / 2
    np.testing.assert_allclose(matrix.mean, expected)
    assert pooled.per_model["model"].nunique() == 4


def test_aggregation_of_two_finished_children(store):
    client, experiment, config, _ = store
    parent = start_run(client, experiment, "sweep", {"regbias.role": "sweep"})
    # Job 1 reuses a single run finished earlier (at the experiment's top, no parent).
    ids = [
        log_fake_job(client, experiment, p, fake_job(s)) for s, p in ((0, parent.run_id), (1, None))
    ]
    records = [
        JobRecord(i, status=status, run_id=r)
        for i, (r, status) in enumerate(zip(ids, ("FINISHED", "REUSED"), strict=True))
    ]
    settings = read_settings(config).analysis
    primary = ("dist_sinkhorn_short", "gap_accuracy")  # the one distance the fake jobs have
    settings = replace(settings, correlation=replace(settings.correlation, primary=primary))
    aggregate_sweep(settings, parent, records)
    local_report = Path(client.download_artifacts(parent.run_id, "report.md", str(store[3] / "r")))
    report = local_report.read_text()
    assert f"- Job 1 reused run `{ids[1]}` (finished earlier, not run again)" in report
    assert "Job 0 reused" not in report
    # Both jobs' draws summed: 80 texts drawn for the long measurement, 50 in full.
    assert "the encoder's window (their tail is not embedded): long 37.5% (30 of 80)." in report
    names = {a.path for a in client.list_artifacts(parent.run_id, "analysis")}
    assert names == {
        "analysis/pairwise.csv",
        "analysis/correlations.csv",
        "analysis/robustness.csv",
        "analysis/primary.csv",
        "analysis/headline.json",
        "analysis/primary_by_seed.csv",
        "analysis/primary_power.csv",
    }
    # The primary seed by seed: each job's run gets its seed's headline, the parent one step a job.
    for run_id in ids:
        assert "headline/primary_rho" in client.get_run(run_id).data.metrics
    history = client.get_metric_history(parent.run_id, "primary_by_seed/rho_alone")
    assert sorted(m.step for m in history) == [0, 1]
    assert "## The primary seed by seed" in report
    local = client.download_artifacts(parent.run_id, "analysis/pairwise.csv", str(store[3] / "d"))
    pairwise = pd.read_csv(local)
    assert len(pairwise) == 10 and pairwise["dcor_accuracy"].notna().all()
    path = client.download_artifacts(
        parent.run_id, "distances/sinkhorn_short.json", str(store[3] / "e")
    )
    with open(path) as handle:
        pooled = json.load(handle)
    assert pooled["n_repetitions"] == 6
    assert np.asarray(pooled["repetitions"]).shape == (6, 5, 5)  # both jobs' repetitions


def test_failed_job_is_named_and_parent_marked_failed(store, capsys):
    client, experiment, config, tmp_path = store
    sweep_dir = tmp_path / "sweep"
    SweepCallback().on_multirun_start(config)
    started = json.loads((sweep_dir / PARENT_FILE).read_text())
    parent_id, launch = started["run_id"], started["launch"]  # a job records its sweep's start
    finished = log_fake_job(client, experiment, parent_id, fake_job(0))
    for num, record in enumerate(
        [
            {"status": "FINISHED", "run_id": finished},
            {"status": "FAILED", "error": "group 'za' has 250 texts"},
        ]
    ):
        (sweep_dir / str(num)).mkdir(parents=True)
        job = {"job_num": num, "launch": launch, **record}
        (sweep_dir / str(num) / JOB_FILE).write_text(json.dumps(job))
    with pytest.raises(SystemExit) as exit_info:
        SweepCallback().on_multirun_end(config)
    assert exit_info.value.code == 1
    assert "job 1 failed: group 'za' has 250 texts" in capsys.readouterr().err
    parent = client.get_run(parent_id)
    assert parent.info.status == "FAILED"
    assert parent.data.metrics["sweep/jobs_failed"] == 1
    # the finished job was still aggregated
    assert "analysis/pairwise.csv" in {a.path for a in client.list_artifacts(parent_id, "analysis")}
