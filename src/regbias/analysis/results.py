"""From a job's (or a sweep's) measurements to the study's analysis: gaps, dcor, correlations."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from regbias.analysis.pairs import MIN_GROUPS, correlations, pairwise_table
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import RegbiasError

__all__ = ["StudyResults", "Analysis", "AnalysisSettings", "analyse"]

log = logging.getLogger(__name__)


@dataclass
class StudyResults:
    """What the stages measured.

    Attributes:
        groups: the studied groups, in display order.
        distances: distance matrices by name (``sinkhorn_short``, ``sinkhorn_long``, ``lda``).
        per_model: the long performance table (``model, seed, fold, group, repetition, metric,
            value``), or None when the performance stage did not run.
        group_sizes: texts per group (the data share of the representation figure).
        meta: encoder name and revision, dataset, sizes: what the report states.
    """

    groups: list[str]
    distances: dict[str, DistanceMatrix] = field(default_factory=dict)
    per_model: pd.DataFrame | None = None
    group_sizes: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AnalysisSettings:
    """The ``analysis`` config group."""

    n_permutations: int = 9999
    exact_limit: int = 40320
    significance: float = 0.05
    seed: int = 0

    @classmethod
    def from_mapping(cls, analysis: Mapping[str, Any]) -> AnalysisSettings:
        return cls(
            int(analysis["n_permutations"]),
            int(analysis["exact_limit"]),
            float(analysis["significance"]),
            int(analysis.get("seed", 0)),
        )


@dataclass
class Analysis:
    """The analysis of one job or one sweep.

    ``correlations`` is None (with ``note`` saying why) when the pairs allow no rank test.
    """

    summary: pd.DataFrame | None
    gaps: pd.DataFrame | None
    dcor: pd.DataFrame | None
    pairwise: pd.DataFrame
    correlations: pd.DataFrame | None
    note: str = ""


def analyse(results: StudyResults, settings: AnalysisSettings) -> Analysis:
    """Gaps and dcor per pair and metric, the pairwise table, and the correlations."""
    from regbias.performance.evaluation import performance_dcor, performance_gaps, summarise

    summary = gaps = dependence = None
    if results.per_model is not None and len(results.per_model):
        summary = summarise(results.per_model)
        groups = [g for g in results.groups if g in set(summary["group"])]
        gaps = performance_gaps(summary, groups)
        with warnings.catch_warnings():
            # One job has few models; an undefined dcor is expected there and NaN says so.
            warnings.simplefilter("ignore", RuntimeWarning)
            dependence = performance_dcor(summary, groups)
    table = pairwise_table(results.distances, gaps, dependence)
    distance_columns = [c for c in table.columns if c.startswith("dist_")]
    performance_columns = [c for c in table.columns if c.startswith(("gap_", "dcor_"))]
    if len(results.groups) < MIN_GROUPS:
        note = f"no correlations: {len(results.groups)} groups, fewer than {MIN_GROUPS}"
        return Analysis(summary, gaps, dependence, table, None, note)
    if not distance_columns or not performance_columns:
        note = "no correlations: the run measured no distances or no performance"
        return Analysis(summary, gaps, dependence, table, None, note)
    try:
        found = correlations(
            table,
            distance_columns,
            performance_columns,
            n_permutations=settings.n_permutations,
            seed=settings.seed,
            exact_limit=settings.exact_limit,
        )
    except RegbiasError as error:
        log.warning("no correlations: %s", error)
        return Analysis(summary, gaps, dependence, table, None, f"no correlations: {error}")
    return Analysis(summary, gaps, dependence, table, found)
