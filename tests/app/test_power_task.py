"""`task=power`: planted mixtures in the user's own data, logged and summarised."""

from __future__ import annotations

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from tests.cli import run_job, runs


def test_power_task_logs_rates_figure_and_one_sentence_per_size_class(tmp_path, shared_data_dir):
    done = run_job(
        tmp_path,
        "task=power",
        "experiment=smoke",
        "analysis.power.plants=2",
        "analysis.power.shares=[0.5]",
        data_dir=shared_data_dir,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "regbias: power of the test of record (mean; us split in two, uk mixed in" in done.stdout
    # The smoke preset caps groups at 300; za (about 240 after its shared texts) and baseline
    # (the 200-tweet training sample) make size classes of their own.
    classes = [line for line in done.stdout.splitlines() if line.startswith("  pairs of ")]
    # Two plants a share cannot bound a power of 80% (issue 36, item 7): said, not claimed.
    assert "  pairs of 300 and 300 texts: no power statement possible" in classes[-1]
    assert len(classes) >= 3
    (run,) = runs(tmp_path)
    assert run.info.status == "FINISHED" and run.info.run_name == "power"
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns.db")
    rates = pd.read_csv(
        client.download_artifacts(run.info.run_id, "power/rates.csv", str(tmp_path))
    )
    assert {(a, b) for a, b in zip(rates["n_a"], rates["n_b"], strict=True)} >= {(300, 300)}
    assert sorted(set(rates["share"].round(2))) == [0.0, 0.5]
    assert (rates["plants"] == 2).all()
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "figures")}
    assert "figures/power.png" in artifacts
    # The performance test's plants: the study's models score us, accuracy gaps are planted.
    assert "regbias: power of the performance test of record (us's scored texts" in done.stdout
    accuracy = [line for line in done.stdout.splitlines() if line.startswith("  accuracy, pairs")]
    assert len(accuracy) == len(classes)
    performance = pd.read_csv(
        client.download_artifacts(run.info.run_id, "power/performance_rates.csv", str(tmp_path))
    )
    # The tiny random encoder scores about half its texts right: no room to plant a gap.
    assert 0.0 in set(performance["gap"]) and "larger gaps not planted" in done.stdout


@pytest.mark.slow  # the sentence: test_pair_power; its printing: the test above (too few plants)
def test_power_task_with_too_few_relabellings_says_no_statement_is_possible(
    tmp_path, shared_data_dir
):
    # Issue 27, item 5: 19 relabellings cannot reach 0.05 / 15; "detects no planted mixture"
    # would be false. The run says no power statement is possible and what to raise.
    done = run_job(
        tmp_path,
        "task=power",
        "experiment=smoke",
        "analysis.power.plants=2",
        "analysis.power.relabellings=19",
        "analysis.power.shares=[0.8]",
        data_dir=shared_data_dir,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no power statement possible" in done.stdout
    assert "raise analysis.power.relabellings" in done.stdout
    assert "detects no planted" not in done.stdout


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
