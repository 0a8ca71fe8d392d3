"""From a job's (or a sweep's) measurements to the study's analysis: gaps, dcor, correlations."""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from regbias.analysis.multiplicity import ADJUSTMENTS
from regbias.analysis.pairs import MIN_GROUPS, PairTable, correlations, pairwise_table
from regbias.analysis.robustness import robustness
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, RegbiasError

__all__ = ["StudyResults", "Analysis", "AnalysisSettings", "add_robustness", "analyse"]

log = logging.getLogger(__name__)
#: The robustness columns ``correlations.csv`` carries too.
ROBUSTNESS_HEADLINE = ["spearman_ci_low", "spearman_ci_high", "loo_rho_min", "loo_rho_max"]


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
    """The ``analysis`` config group.

    Attributes:
        n_permutations: random group relabellings when enumeration is too large.
        exact_limit: the largest ``K!`` enumerated exactly.
        significance: the level marked significant (applied to the adjusted p-values).
        seed: seed of the random permutations and of the bootstrap.
        adjust: the multiplicity adjustment marking significance: ``holm``, ``bh`` or ``none``.
        primary: the declared hypothesis ``(distance column, performance column)``, reported
            first; None when none is declared.
        bootstrap: bootstrap resamples of models and distance repetitions (0 = no intervals).
        confidence: the level of the bootstrap intervals.
        input: ``task=analyze``: the pairwise CSV to re-analyse.
        distances: ``task=analyze``: the distance columns (None: every ``dist_*``).
        performance: ``task=analyze``: the performance columns (None: ``gap_*``, ``dcor_*``).
        exclude_groups: ``task=analyze``: groups whose pairs are left out.
        exclude_pairs: ``task=analyze``: pairs left out, like ``nz-za`` (either order).
        epsilon_sensitivity: epsilons (OTT units) at which repetition 0 of each Sinkhorn
            matrix is recomputed, with the exact-OT limit; empty = off.
        exact_max_points: the largest cloud the exact-OT limit is computed for.
    """

    n_permutations: int = 9999
    exact_limit: int = 40320
    significance: float = 0.05
    seed: int = 0
    adjust: str = "holm"
    primary: tuple[str, str] | None = ("dist_sinkhorn_long", "gap_accuracy")
    bootstrap: int = 999
    confidence: float = 0.95
    input: str | None = None
    distances: list[str] | None = None
    performance: list[str] | None = None
    exclude_groups: list[str] = field(default_factory=list)
    exclude_pairs: list[str] = field(default_factory=list)
    epsilon_sensitivity: list[float] = field(default_factory=list)
    exact_max_points: int = 2000

    def __post_init__(self) -> None:
        if self.adjust not in ADJUSTMENTS:
            raise ConfigError(
                f"analysis.adjust must be one of {list(ADJUSTMENTS)}, got {self.adjust!r}."
            )
        if self.primary is not None and len(self.primary) != 2:
            raise ConfigError(
                "analysis.primary names one distance and one performance column, e.g. "
                f"[dist_sinkhorn_long, gap_accuracy]; got {list(self.primary)}."
            )
        if self.bootstrap < 0 or not 0 < self.confidence < 1:
            raise ConfigError(
                "analysis.bootstrap must be >= 0 and analysis.confidence in (0, 1); got "
                f"{self.bootstrap} and {self.confidence}."
            )


@dataclass
class Analysis:
    """The analysis of one job or one sweep.

    ``correlations`` is None (with ``note`` saying why) when the pairs allow no rank test;
    ``robustness`` (one row per correlation, see :mod:`regbias.analysis.robustness`) is None
    with it.
    """

    summary: pd.DataFrame | None
    gaps: pd.DataFrame | None
    dcor: pd.DataFrame | None
    pairwise: pd.DataFrame
    correlations: pd.DataFrame | None
    note: str = ""
    robustness: pd.DataFrame | None = None


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
    pairs = PairTable.of(pairwise_table(results.distances, gaps, dependence))
    table = pairs.frame
    if len(results.groups) < MIN_GROUPS:
        note = f"no correlations: {len(results.groups)} groups, fewer than {MIN_GROUPS}"
        return Analysis(summary, gaps, dependence, table, None, note)
    if not pairs.distance_columns or not pairs.performance_columns:
        note = "no correlations: the run measured no distances or no performance"
        return Analysis(summary, gaps, dependence, table, None, note)
    try:
        found = correlations(
            pairs,
            n_permutations=settings.n_permutations,
            seed=settings.seed,
            exact_limit=settings.exact_limit,
        )
    except RegbiasError as error:
        log.warning("no correlations: %s", error)
        return Analysis(summary, gaps, dependence, table, None, f"no correlations: {error}")
    found, checks = add_robustness(table, found, settings, results)
    return Analysis(summary, gaps, dependence, table, found, robustness=checks)


def add_robustness(
    table: pd.DataFrame,
    found: pd.DataFrame,
    settings: AnalysisSettings,
    results: StudyResults | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The robustness table of ``found``, and ``found`` with its headline columns.

    Args:
        table: the pair table the correlations were computed on.
        found: the :func:`correlations` table.
        settings: the analysis settings (permutations, bootstrap, seed).
        results: the measurements behind ``table``: their distance repetitions and models feed
            the bootstrap, their group sizes the partial Mantel test; None for a bare table.

    Returns:
        ``found`` with ``spearman_ci_low, spearman_ci_high, loo_rho_min, loo_rho_max``
        appended, and the full robustness table.
    """
    checks = robustness(
        table,
        found,
        distances=results.distances if results is not None else None,
        per_model=results.per_model if results is not None else None,
        group_sizes=results.group_sizes if results is not None else None,
        n_bootstrap=settings.bootstrap,
        confidence=settings.confidence,
        significance=settings.significance,
        n_permutations=settings.n_permutations,
        seed=settings.seed,
        exact_limit=settings.exact_limit,
    )
    headline = checks[["distance", "performance", *ROBUSTNESS_HEADLINE]]
    return found.merge(headline, on=["distance", "performance"], how="left"), checks
