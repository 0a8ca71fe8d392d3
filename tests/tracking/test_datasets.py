"""A run's input datasets: what its Datasets panel lists."""

from __future__ import annotations

import pandas as pd

from regbias.tracking.runs import RunLog, connect, start_run
from regbias.tracking.ui import log_dataset
from tests.conftest import local_tracking


def test_the_group_table_is_the_runs_input(tmp_path) -> None:
    settings = local_tracking(tmp_path, "d", "art")
    client, experiment = connect(settings)
    run = start_run(client, experiment, "r", {})
    table = pd.DataFrame({"group": ["au", "ca"], "n_texts": [2163, 1834]})
    log_dataset(run, table, "sentiment140", str(tmp_path), "groups")
    (found,) = client.get_run(run.run_id).inputs.dataset_inputs
    assert found.dataset.name == "sentiment140"
    assert [(t.key, t.value) for t in found.tags] == [("mlflow.data.context", "groups")]
    assert isinstance(run, RunLog)
