"""``task=describe``: one row per group, so a user sees what a dataset config selects."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from regbias.data.groups import BASELINE
from regbias.data.study import group_table, select_groups
from regbias.study.settings import StudySettings


def describe_job(settings: StudySettings) -> pd.DataFrame:
    """``task=describe``: print the configured dataset's group table (rich) and return it.

    The training split is its last row; for binary corpora a ``baseline`` row gives the size of
    one model's held-out fold.
    """
    dataset = settings.dataset
    corpus = dataset.read(dataset.data_dir(settings.paths.data_dir))
    select_groups(corpus, dataset.groups, with_baseline=corpus.task == "binary")
    table = group_table(corpus, {"train": corpus.train})
    if corpus.task == "binary":
        size, k = settings.finetune.sample_size, settings.finetune.k_folds
        size = min(int(size), len(corpus.train)) if size else len(corpus.train)
        baseline = {"group": BASELINE, "n_texts": size // k}
        table = pd.concat([table, pd.DataFrame([baseline])], ignore_index=True)
    table = table.astype({c: "Int64" for c in table.columns if c != "group"})
    view = Table(title=f"{dataset.name}: groups")
    for column in table.columns:
        view.add_column(column, justify="left" if column == "group" else "right")
    for _, row in table.iterrows():
        view.add_row(*("" if pd.isna(v) else str(v) for v in row))
    Console(width=120).print(view)
    return table
