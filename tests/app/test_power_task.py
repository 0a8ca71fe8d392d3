"""`task=power`: planted mixtures in the user's own data, logged and summarised."""

from __future__ import annotations

import pandas as pd
from mlflow.tracking import MlflowClient

from tests.cli import run_job, runs


def test_power_task_logs_rates_figure_and_one_sentence_per_distance(tmp_path, shared_data_dir):
    done = run_job(
        tmp_path,
        "task=power",
        "experiment=smoke",
        "analysis.power.plants=2",
        "analysis.power.shares=[0.5]",
        data_dir=shared_data_dir,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "regbias: power of the pair tests (us split in two, uk mixed in" in done.stdout
    for name in ("energy_short", "energy_long", "energy_sentence", "lda"):
        assert f"  {name}: it detects" in done.stdout
    (run,) = runs(tmp_path)
    assert run.info.status == "FINISHED" and run.info.run_name == "power"
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns.db")
    rates = pd.read_csv(
        client.download_artifacts(run.info.run_id, "power/rates.csv", str(tmp_path))
    )
    assert set(rates["distance"]) == {"energy_short", "energy_long", "energy_sentence", "lda"}
    assert sorted(set(rates["share"].round(2))) == [0.0, 0.5]
    assert (rates["plants"] == 2).all()
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "figures")}
    assert "figures/power.png" in artifacts


def test_power_task_refuses_an_unknown_source(tmp_path, shared_data_dir):
    done = run_job(
        tmp_path,
        "task=power",
        "experiment=smoke",
        "analysis.power.source=atlantis",
        data_dir=shared_data_dir,
    )
    assert done.returncode == 2
    assert "analysis.power.source='atlantis' is not a group" in done.stderr
