"""``task=describe``: one row per group, so a user sees what a dataset config selects."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from regbias.data.groups import BASELINE
from regbias.data.study import group_table, select_groups
from regbias.study.settings import StudySettings


def describe_job(settings: StudySettings) -> pd.DataFrame:
    """``task=describe``: print the group table (:func:`describe`) and return it."""
    table = describe(settings)
    render(table, f"{settings.dataset.name}: groups")
    return table


def describe(settings: StudySettings) -> pd.DataFrame:
    """The group table of the configured dataset, with the training split as a last row.

    For binary corpora a ``baseline`` row gives the size of one model's held-out fold.
    """
    dataset = settings.dataset
    corpus = dataset.read(dataset.data_dir(settings.paths.data_dir))
    select_groups(corpus, dataset.groups, with_baseline=corpus.task == "binary")
    table = group_table(corpus, {"train": corpus.train})
    if corpus.task == "binary":
        size, k = settings.finetune.sample_size, settings.finetune.k_folds
        size = min(int(size), len(corpus.train)) if size else len(corpus.train)
        row = {"group": BASELINE, "n_texts": size // k}
        table = pd.concat([table, pd.DataFrame([row])], ignore_index=True)
    counts = [c for c in table.columns if c != "group"]
    return table.astype({c: "Int64" for c in counts})


def render(table: pd.DataFrame, title: str, console: Console | None = None) -> None:
    """Print ``table`` as a rich table (plain text when not a terminal)."""
    view = Table(title=title)
    for column in table.columns:
        view.add_column(column, justify="left" if column == "group" else "right")
    for _, row in table.iterrows():
        view.add_row(*("" if pd.isna(v) else str(v) for v in row))
    (console or Console(width=120)).print(view)
