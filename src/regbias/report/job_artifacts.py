"""Write a job's measurements into its run: its data, its distance tables, its performance.

The study's wiring (:mod:`regbias.study.pipeline`, :mod:`regbias.study.aggregate`) hands each
function what it measured; the run-folder paths are :mod:`regbias.tracking.artifacts`'.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from regbias.analysis.study import StudyResults
from regbias.distances.lda import LdaProjection
from regbias.performance.text_scores import PROBABILITY_FORMAT
from regbias.report import figures as plots
from regbias.tracking import artifacts as paths
from regbias.tracking.runs import RunLog

__all__ = [
    "write_distance_tables",
    "write_draws",
    "write_groups",
    "write_lda",
    "write_performance",
    "write_study",
]


def write_groups(run: RunLog, table: pd.DataFrame, dropped: Mapping[str, int]) -> None:
    """The group table (``data/groups.csv``) and the texts dropped (``data/dropped.json``).

    Args:
        run: the job's run.
        table: the group sizes, training pool and sample included.
        dropped: texts dropped per reason, and the groups emptied by cleaning.
    """
    run.table(table, paths.GROUPS_CSV)
    run.json(dict(dropped), paths.DROPPED_JSON)


def write_draws(run: RunLog, frame: pd.DataFrame) -> None:
    """Every draw's size and group (``data/draws.csv``)."""
    run.table(frame, paths.DRAWS_CSV)


def write_lda(run: RunLog, projection: LdaProjection) -> None:
    """The LDA projection of the job's own passages, as a figure (repetition 0)."""
    figure = plots.lda_scatter(projection, "LDA projection (repetition 0)")
    run.figure(figure, paths.LDA_FIGURE)


def write_distance_tables(
    run: RunLog,
    sensitivity: Mapping[str, pd.DataFrame],
    diagnostics: Mapping[str, pd.DataFrame],
) -> None:
    """Each distance's sensitivity table and its Sinkhorn diagnostics per repetition.

    Args:
        run: the job's run.
        sensitivity: the sensitivity table per distance.
        diagnostics: the Sinkhorn diagnostics per distance.
    """
    for name, table in sensitivity.items():
        run.table(table, paths.sensitivity_csv(name))
    for name, table in diagnostics.items():
        run.table(table, paths.diagnostics_csv(name))


def write_performance(run: RunLog, per_model: pd.DataFrame, texts: pd.DataFrame | None) -> None:
    """The per-model scores (``per_model.csv``) and, if kept, each text's (``texts.csv``).

    Args:
        run: the job's (or the pooled variant's) run.
        per_model: one row per trained model and group.
        texts: one row per scored text, written with :data:`PROBABILITY_FORMAT`; None: none.
    """
    run.table(per_model, paths.PER_MODEL_CSV)
    if texts is not None:
        run.table(texts, paths.TEXTS_CSV, float_format=PROBABILITY_FORMAT)


def write_study(run: RunLog, results: StudyResults, runs: list[str] | None = None) -> None:
    """The groups, their sizes and the meta (``study.json``); a pooled study adds its runs.

    Args:
        run: the job's or the sweep's run.
        results: the measurements whose groups to write.
        runs: the run ids of the jobs pooled; None for a job's own study.
    """
    study: dict[str, object] = {
        "groups": results.groups,
        "group_sizes": results.group_sizes,
        "meta": results.meta,
    }
    if runs is not None:
        study["runs"] = runs
    run.json(study, paths.STUDY_JSON)
