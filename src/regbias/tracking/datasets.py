"""The datasets a run read, in its "Datasets" panel (MLflow's ``log_input`` for a client run)."""

from __future__ import annotations

import warnings

import pandas as pd
from mlflow.entities import DatasetInput, InputTag
from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

from regbias.tracking.runs import RunLog

__all__ = ["log_dataset"]


def log_dataset(run: RunLog, table: pd.DataFrame, name: str, source: str, context: str) -> None:
    """Record ``table`` (e.g. one row per group) as an input of ``run``.

    Args:
        run: the run.
        table: what the run read, summarised (its digest, schema and size are shown).
        name: the dataset's name (``sentiment140``).
        source: where it was read from (the data directory).
        context: the input's role, shown beside it (``groups``, ``pooled groups``).
    """
    # Where mlflow.data's from_pandas is defined (the package adds it at import time).
    from mlflow.data.pandas_dataset import from_pandas

    with warnings.catch_warnings():  # source-type guesses and integer-schema hints
        warnings.simplefilter("ignore")
        dataset = from_pandas(table, source=source, name=name)
        # What the fluent mlflow.log_input logs, for a run this process does not make active.
        entity = dataset._to_mlflow_entity()
    tags = [InputTag(key=MLFLOW_DATASET_CONTEXT, value=context)]
    run.client.log_inputs(run.run_id, datasets=[DatasetInput(entity, tags)])
