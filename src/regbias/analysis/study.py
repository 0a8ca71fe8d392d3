"""From a job's (or a sweep's) measurements to the study's analysis: gaps, dcor, correlations."""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.correlation.by_seed import SeedPrimary
from regbias.analysis.correlation.primary import (
    CorrelationSettings,
    PrimaryTest,
    primary_test,
)
from regbias.analysis.correlation.result import RHO_CI, Correlation, correlation_rows
from regbias.analysis.correlation.table import correlations
from regbias.analysis.counterfactual.result import Counterfactual
from regbias.analysis.counterfactual.settings import CounterfactualSettings
from regbias.analysis.explain.result import Explanations
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.pair_table import (
    GAP_PREFIX,
    MIN_GROUPS,
    AnalyzeSettings,
    PairTable,
    RecordedVerdict,
    pairwise_table,
)
from regbias.analysis.pairs.embedding import EmbeddingPairTests, EmbeddingTestSettings
from regbias.analysis.pairs.performance import (
    PerformancePairTests,
    PerformanceTestSettings,
    performance_pair_tests,
)
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.power.embedding import PowerSettings
from regbias.analysis.power.performance import PerfPower, perf_classes, perf_plant_power
from regbias.analysis.power.primary import NO_SIGNAL
from regbias.analysis.robustness.bootstrap import BARE_TABLE, rho_replicates
from regbias.analysis.robustness.checks import RobustnessSettings, robustness
from regbias.analysis.robustness.noise_only import noise_draws
from regbias.analysis.robustness.primary import check_primary
from regbias.data.window_fit import WindowFit
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, RegbiasError

log = logging.getLogger(__name__)
#: The robustness columns ``correlations.csv`` carries too.
ROBUSTNESS_HEADLINE = [*RHO_CI, "loo_rho_min", "loo_rho_max"]


@dataclass(frozen=True)
class PairTestsSettings:
    """``analysis.tests``: which pairs of groups differ, in two spaces.

    Attributes:
        embedding: the test of record in the encoder's space (sentence vectors of every
            distinct text of both groups).
        performance: the test of record of the classifiers' per-text scores (the ``texts``
            design).
    """

    embedding: EmbeddingTestSettings
    performance: PerformanceTestSettings


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
        record: the test of record of every pair, or None where it did not run.
        performance: the performance test of record (each pair's ``detectable_gap`` where
            planted), and ``performance_power`` its planted gaps; None where not run
            (:func:`performance_tests`, asked with the test of record in one place).
        texts: what every model said of every text (``performance/texts.csv``, a sweep's jobs'
            tables joined), or None (the ``draws`` design).
        window_fits: per measurement, how many drawn texts fit the encoder's window.
        reused: a sweep's jobs that reused a finished run (``resume=true``): ``(job number,
            run id)`` each, in job order.
        explained: what carries each difference the test of record finds, or None
            (``analysis.explain.enabled=false``).
        recorded: ``task=analyze``: the verdicts of the tests of record its table carries.
        rewrites: what every model said of each text rewritten into another variety and of its
            control (``performance/rewrites.csv``), or None (the counterfactual track is off).
        counterfactual: the same texts in another variety, measured (None: off).
    """

    groups: list[str]
    distances: dict[str, DistanceMatrix] = field(default_factory=dict)
    per_model: pd.DataFrame | None = None
    group_sizes: dict[str, int] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    record: EmbeddingPairTests | None = None
    performance: PerformancePairTests | None = None
    performance_power: PerfPower | None = None
    texts: pd.DataFrame | None = None
    window_fits: list[WindowFit] = field(default_factory=list)
    reused: list[tuple[str, str]] = field(default_factory=list)
    recorded: list[RecordedVerdict] = field(default_factory=list)
    explained: Explanations | None = None
    rewrites: pd.DataFrame | None = None
    counterfactual: Counterfactual | None = None


@dataclass(frozen=True)
class AnalysisSettings:
    """The ``analysis`` config group, by question (values: ``conf/analysis/default.yaml``).

    Attributes:
        seed: the one seed of the analysis: each test, plant, relabelling and bootstrap draws
            its own stream from it under its own label (an override moves them all).
        significance: the level marked significant: each test of record's (per Holm family),
            the primary test's, alone, and that of the secondary tests' adjusted p-values.
        reference_groups: the groups that are no region (``dataset.reference_groups`` by
            default): left out of the primary test, their pairs the reference family.
        tests: the tests of record, in the encoder's space and the classifiers'.
        power: what the tests could detect, and the primary's power.
        correlation: the correlation table and the declared primary hypothesis.
        robustness: the bootstrap behind every interval.
        analyze: ``task=analyze``: the pair table to re-analyse.
        explain: what carries each difference the test of record finds.
        counterfactual: the same texts rewritten into another variety.
    """

    seed: int
    significance: float
    reference_groups: list[str]
    tests: PairTestsSettings
    power: PowerSettings
    correlation: CorrelationSettings
    robustness: RobustnessSettings
    analyze: AnalyzeSettings
    explain: ExplainSettings
    counterfactual: CounterfactualSettings

    def __post_init__(self) -> None:
        if not 0 < self.significance < 1:
            raise ConfigError(
                "analysis.significance is a test level in (0, 1), e.g. 0.05; got "
                f"{self.significance}."
            )


@dataclass
class Analysis:
    """The analysis of one job or one sweep.

    ``correlations`` (the secondary tests, one typed row each; ``correlation_frame`` makes
    them a table) and ``robustness`` are None, with ``note`` saying why, when the pairs allow
    no rank test; ``primary`` is None when none is declared too.
    ``by_seed``: a sweep's primary for each seed's job alone and without it (empty: one job).
    """

    summary: pd.DataFrame | None
    gaps: pd.DataFrame | None
    dcor: pd.DataFrame | None
    pairwise: pd.DataFrame
    correlations: list[Correlation] | None
    note: str = ""
    robustness: pd.DataFrame | None = None
    primary: PrimaryTest | None = None
    performance_record: PerformancePairTests | None = None
    performance_power: PerfPower | None = None
    by_seed: tuple[SeedPrimary, ...] = ()


def performance_tests(
    results: StudyResults, settings: AnalysisSettings
) -> tuple[PerformancePairTests | None, PerfPower | None]:
    """The performance test of record on the results' per-text scores, and its planted gaps."""
    texts = scored_texts(results)
    return performance_power(texts, performance_record(texts, results.groups, settings), settings)


def scored_texts(results: StudyResults) -> PerfTexts | None:
    """Every model's scores of every text (None: none, the ``draws`` design)."""
    scored = results.texts is not None and len(results.texts) > 0
    return PerfTexts.of(results.texts) if scored else None


def performance_power(
    texts: PerfTexts | None, record: PerformancePairTests | None, settings: AnalysisSettings
) -> tuple[PerformancePairTests | None, PerfPower | None]:
    """The test with each pair's ``detectable_gap`` from planted accuracy gaps, and the plants.

    Unchanged and None where not planted (``analysis.power.enabled`` off, no test, multilabel).
    """
    power = settings.power
    if texts is None or record is None or not power.enabled or texts.task != "binary":
        return record, None
    regions = [g for g in texts.members if g not in settings.reference_groups]
    source = power.source or max(regions, key=lambda g: len(texts.members[g]), default=None)
    if source is None or source not in texts.members:
        return record, None
    log.info("performance power: planted gaps in %s at %d size classes", source, len(regions))
    planted = perf_plant_power(texts, source, perf_classes(record), power, settings.significance)
    gaps = [
        planted.detectable_for(int(a), int(b))
        for a, b in zip(record.table["n_a"], record.table["n_b"], strict=True)
    ]
    return replace(record, table=record.table.assign(detectable_gap=gaps)), planted


def performance_record(
    texts: PerfTexts | None, groups: list[str], settings: AnalysisSettings
) -> PerformancePairTests | None:
    """The performance test of record on per-text scores (None without them)."""
    if texts is None or not settings.tests.performance.enabled:
        return None
    log.info("performance test of record: %d texts", len(texts.keys))
    return performance_pair_tests(
        texts,
        groups,
        settings.tests.performance,
        references=settings.reference_groups,
        alpha=settings.significance,
        n_bootstrap=settings.robustness.resamples,
        confidence=settings.robustness.confidence,
    )


def primary_noise(
    record: PerformancePairTests | None, settings: AnalysisSettings
) -> dict[str, float] | None:
    """By region, its metric's standard error over the spread of the regions' true values.

    From the performance test of record's two-stage intervals (standard error = interval
    width / (2 z)); the true spread is the regions' observed variance less their mean squared
    standard error. None where there is no such interval or the primary is another metric.
    """
    primary = settings.correlation.primary
    if record is None or primary is None or not math.isfinite(record.confidence):
        return None
    if primary[1] != f"{GAP_PREFIX}{record.metric}":
        return None
    rows = record.groups[
        (record.groups["metric"] == record.metric)
        & ~record.groups["group"].isin(settings.reference_groups)
    ]
    z = float(scipy_stats.norm.ppf((1 + record.confidence) / 2))
    se = ((rows["ci_high"] - rows["ci_low"]) / (2 * z)).to_numpy(dtype=float)
    if len(rows) < MIN_GROUPS or not np.isfinite(se).all():
        return None
    spread = float(np.var(rows["value"].to_numpy(dtype=float), ddof=1) - np.mean(se**2))
    ratio = se / math.sqrt(spread) if spread > 0 else np.full(len(se), NO_SIGNAL)
    return dict(zip(rows["group"].astype(str), np.minimum(ratio, NO_SIGNAL).tolist(), strict=True))


def analyse(results: StudyResults, settings: AnalysisSettings) -> Analysis:
    """Gaps and dcor per pair and metric, the pairwise table, the primary test, correlations.

    The tests of record are the results' (``record``, ``performance``): asked before, once.
    """
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
    texts = scored_texts(results)
    record, planted = results.performance, results.performance_power
    analysis = Analysis(summary, gaps, dependence, pairs.frame, None)
    if len(results.groups) < MIN_GROUPS:
        analysis.note = f"no correlations: {len(results.groups)} groups, fewer than {MIN_GROUPS}"
    elif not pairs.distance_columns or not pairs.performance_columns:
        analysis.note = "no correlations: the run measured no distances or no performance"
    else:
        try:
            found = analyse_table(pairs, settings, results, texts, primary_noise(record, settings))
            analysis = replace(found, summary=summary, gaps=gaps, dcor=dependence)
        except RegbiasError as error:
            log.warning("no correlations: %s", error)
            analysis.note = f"no correlations: {error}"
    analysis.performance_record, analysis.performance_power = record, planted
    return analysis


def analyse_table(
    pairs: PairTable,
    settings: AnalysisSettings,
    results: StudyResults | None = None,
    texts: PerfTexts | None = None,
    noise: Mapping[str, float] | None = None,
) -> Analysis:
    """The primary test, the correlations and their robustness for one pair table.

    ``results``: the measurements behind the table (None: a bare table, ``task=analyze``), with
    their per-text scores ``texts``; ``noise``: :func:`primary_noise`.

    Returns:
        The analysis, without performance tables (``summary``, ``gaps``, ``dcor`` None).

    Raises:
        RegbiasError: the table allows no correlation (see :func:`correlations`).
    """
    found = correlations(
        pairs,
        relabellings=settings.correlation.relabellings,
        seed=settings.seed,
        exact_limit=settings.correlation.exact_limit,
    )
    found, checks = add_robustness(pairs.frame, found, settings, results, texts)
    primary = primary_of(pairs.frame, settings, results, texts, noise)
    rows = correlation_rows(found)
    return Analysis(None, None, None, pairs.frame, rows, robustness=checks, primary=primary)


def primary_on(
    table: pd.DataFrame,
    settings: AnalysisSettings,
    noise: Mapping[str, float] | None = None,
    *,
    with_power: bool = False,
) -> PrimaryTest:
    """The declared primary's test on ``table`` as the settings say (it must be declared).

    ``with_power``: its power in the group model too (``noise``: :func:`primary_noise`).
    """
    assert settings.correlation.primary is not None
    distance, performance = settings.correlation.primary
    return primary_test(
        table,
        distance,
        performance,
        reference_groups=settings.reference_groups,
        direction=settings.correlation.primary_direction,
        significance=settings.significance,
        relabellings=settings.correlation.relabellings,
        seed=settings.seed,
        exact_limit=settings.correlation.exact_limit,
        power=settings.power.primary if with_power else None,
        power_noise=noise,
    )


def primary_of(
    table: pd.DataFrame,
    settings: AnalysisSettings,
    results: StudyResults | None = None,
    texts: PerfTexts | None = None,
    noise: Mapping[str, float] | None = None,
) -> PrimaryTest | None:
    """The declared hypothesis's test on ``table``'s regions; None when none is declared.

    The test carries its checks (:func:`~regbias.analysis.robustness.primary.check_primary`:
    beyond the groups' noise, drawn from ``texts``, and each region left out).

    With ``results`` (their models and distance repetitions, and ``texts``, every text's
    scores) and ``analysis.robustness.resamples`` > 0, the test carries rho's bootstrap
    interval over the same region pairs.
    """
    if settings.correlation.primary is None:
        return None
    test = primary_on(table, settings, noise, with_power=True)
    draws = noise_draws(
        texts,
        results.groups if results is not None else [],
        test.performance,
        settings.robustness.resamples,
        settings.tests.performance.seed,
    )
    test = check_primary(
        table,
        test,
        draws,
        relabellings=settings.correlation.relabellings,
        seed=settings.seed,
        exact_limit=settings.correlation.exact_limit,
    )
    if settings.robustness.resamples <= 0 or test.note or not math.isfinite(test.rho):
        return test
    if results is None:
        return replace(test, ci_note=BARE_TABLE)
    found = rho_replicates(
        table,
        settings.correlation.primary,
        test.groups,
        results.distances,
        results.per_model,
        n_bootstrap=settings.robustness.resamples,
        seed=settings.seed,
        texts=texts,
    )
    confidence = settings.robustness.confidence
    low, high = found.interval(confidence)
    return replace(test, ci_low=low, ci_high=high, confidence=confidence, ci_note=found.note)


def add_robustness(
    table: pd.DataFrame,
    found: pd.DataFrame,
    settings: AnalysisSettings,
    results: StudyResults | None = None,
    texts: PerfTexts | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``found`` with its headline robustness columns appended, and the robustness table.

    ``results`` (None: a bare table) and ``texts`` as for :func:`analyse_table`.
    """
    checks = robustness(
        table,
        found,
        distances=results.distances if results is not None else None,
        per_model=results.per_model if results is not None else None,
        group_sizes=results.group_sizes if results is not None else None,
        n_bootstrap=settings.robustness.resamples,
        confidence=settings.robustness.confidence,
        significance=settings.significance,
        relabellings=settings.correlation.relabellings,
        seed=settings.seed,
        exact_limit=settings.correlation.exact_limit,
        texts=texts,
    )
    headline = checks[["distance", "performance", *ROBUSTNESS_HEADLINE]]
    return found.merge(headline, on=["distance", "performance"], how="left"), checks
