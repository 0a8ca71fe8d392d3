"""A run's input datasets: what its Datasets panel lists."""

from __future__ import annotations

import pandas as pd

from regbias.tracking.datasets import log_dataset
from regbias.tracking.runs import RunLog, TrackingSettings, connect, start_run
from tests.conftest import packaged


def test_the_group_table_is_the_runs_input(tmp_path) -> None:
    settings = packaged(
        TrackingSettings,
        "tracking",
        uri=f"sqlite:///{tmp_path}/mlruns.db",
        artifact_root=str(tmp_path / "art"),
        experiment="d",
    )
    client, experiment = connect(settings)
    run = start_run(client, experiment, "r", {})
    table = pd.DataFrame({"group": ["au", "ca"], "n_texts": [2163, 1834]})
    log_dataset(run, table, "sentiment140", str(tmp_path), "groups")
    (found,) = client.get_run(run.run_id).inputs.dataset_inputs
    assert found.dataset.name == "sentiment140"
    assert [(t.key, t.value) for t in found.tags] == [("mlflow.data.context", "groups")]
    assert isinstance(run, RunLog)
