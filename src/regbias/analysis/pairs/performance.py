"""The test of record for performance: do the sweep's classifiers treat two groups differently?

Once per sweep, on every text every model scored (:mod:`regbias.analysis.pairs.pooled_scores`):
the stratum-standardised gap, studentized, relabelled within label strata, Holm per family,
with two-stage bootstrap intervals (docs/method.md, "Performance gaps").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from regbias.analysis.pairs.columns import RELABELLED, PairColumn, computed
from regbias.analysis.pairs.pairwise import (
    UNTESTABLE,
    PairwiseTests,
    PairwiseWords,
    PlannedPair,
    holm_per_family,
    plan_pairs,
)
from regbias.analysis.pairs.performance_null import (
    StratifiedPair,
    sequential_relabel,
    standardised,
)
from regbias.analysis.pairs.pooled_scores import (
    MIN_RESAMPLED,
    ModelDraws,
    PerfTexts,
    Side,
    group_metric_replicates,
    group_metrics,
    percentile_interval,
    resampled_sums,
    side_metric,
    training_units,
)
from regbias.analysis.pairs.sequential import check_stop_after, clear_point, stopping_words
from regbias.data.sampling import rng_for
from regbias.errors import ConfigError
from regbias.interrupt import check_stop
from regbias.numbers import models_words, points, points_interval
from regbias.performance.text_scores import model_of
from regbias.settings_reader import HANDED_DOWN, check_draws


@dataclass(frozen=True)
class PerformanceTestSettings:
    """``analysis.tests.performance``: the test of record for performance.

    Attributes:
        enabled: run it wherever per-text scores exist (``finetune.evaluation.design=texts``).
        relabellings: stratified relabellings per pair (the smallest p is ``1 / (1 + K)``).
        seed: ``analysis.seed``, handed down (no key of this group): seed of the relabellings
            and of the bootstrap.
        stop_after: a pair's relabellings stop at this many as extreme as observed (its p is
            then sequential: :mod:`regbias.analysis.pairs.sequential`); None: all of them.
        stop_when_clear: a pair with none as extreme in its first ``N`` relabellings stops
            there, its p ``1 / (N + 1)`` at most a third of Holm's smallest threshold
            (:func:`~regbias.analysis.pairs.sequential.clear_point`).
    """

    enabled: bool
    relabellings: int
    seed: int = field(metadata=HANDED_DOWN)
    stop_after: int | None = None
    stop_when_clear: bool = False

    def __post_init__(self) -> None:
        check_draws("analysis.tests.performance", relabellings=self.relabellings)
        check_stop_after("analysis.tests.performance", self.stop_after)
        if self.relabellings < 1:
            raise ConfigError(
                f"analysis.tests.performance.relabellings must be >= 1; got {self.relabellings}"
            )


#: What the performance test could have detected, where its power plants did not run.
_NOT_MEASURED = (
    "What the performance test could have detected is not measured in this run: "
    "`analysis.power.enabled=true` plants {metric} gaps at these sizes and reports it."
)

#: The same where the metric's gaps cannot be planted (the plants flip binary correctness).
_NOT_PLANTED = (
    "What the performance test could have detected is not measured: no power plants are made "
    "for {metric} gaps (plants flip a binary corpus's correctness)."
)


@dataclass(frozen=True)
class PerformancePairTests(PairwiseTests):
    """The performance tests of record of every pair, and each group's metric.

    Attributes:
        settings: what was run (``alpha``: the level of the verdicts).
        metric: the compared metric (``accuracy``; ``micro_f1`` for a multilabel corpus).
        confidence: the level of the intervals (NaN: no interval was made).
        table: one row per pair (:class:`~regbias.analysis.pairs.pairwise.PairwiseTests`), its own
            columns (:attr:`columns`) ``gap`` (stratum-standardised ``a - b``), ``ci_low``,
            ``ci_high``, ``raw_gap``, and with power ``detectable_gap``.
        groups: one row per group and metric: ``group, metric, value, ci_low, ci_high,
            n_texts``.
        models: the models whose scores were pooled.
        interval_note: why no interval was made where resamples were asked for ("": one
            was, or none was asked for).
    """

    settings: PerformanceTestSettings
    alpha: float
    metric: str
    confidence: float
    table: pd.DataFrame
    groups: pd.DataFrame
    models: int
    interval_note: str = ""

    words: ClassVar[PairwiseWords] = PairwiseWords(
        title="Performance test of record",
        differ="treated differently",
        setting="analysis.tests.performance.relabellings",
        not_measured=_NOT_MEASURED,
        metric="perf_test",
        headline="performance_differing_pairs/",
    )
    columns: ClassVar[tuple[PairColumn, ...]] = (
        PairColumn(
            "gap", pairwise=True, logged=True, shown="gap (points)", signed="flip", points=True
        ),
        PairColumn("ci_low", pairwise=True, shown="interval", signed="low", points=True),
        PairColumn("ci_high", pairwise=True, signed="high", points=True),
        PairColumn("raw_gap", pairwise=True, shown="raw gap", signed="flip", points=True),
    )
    renamed_columns: ClassVar[Mapping[str, str]] = {"note": UNTESTABLE}

    def method(self) -> str:
        """The metric, the models, the strata, the relabellings and the adjustment, in words."""
        return (
            f"studentized gap in {self.metric} of {models_words(self.models)} on every scored "
            f"text, relabelled within label strata ({self.settings.relabellings} relabellings"
            f"{stopping_words(self.settings.stop_after, self.clear_after)}), Holm per family, "
            f"p <= {self.alpha:g}"
        )

    def estimate(self, row: pd.Series) -> str:
        """``+3.1 points [+1.0, +5.0]``: the standardised gap and its interval.

        Any column declared with an ``estimate`` adds its words after them.
        """
        interval = points_interval(float(row["ci_low"]), float(row["ci_high"]))
        own = super().estimate(row)
        return f"{points(float(row['gap']))} points {interval}" + (f", {own}" if own else "")

    def power_measured(self) -> bool:
        """Whether the power plants ran (the table has ``detectable_gap``)."""
        return "detectable_gap" in self.table

    def not_measured(self) -> str:
        """Where the power plants did not run, naming the test's own metric."""
        words = _NOT_MEASURED if self.metric == "accuracy" else _NOT_PLANTED
        return words.format(metric=self.metric)

    def detectable(self, row: pd.Series, name: Callable[[str], str] = str) -> str:
        """The smallest gap found with 80% power at the pair's sizes."""
        if not self.power_measured():
            return ""
        gap = float(row["detectable_gap"])
        if math.isfinite(gap):
            return f"at these sizes a gap of {100 * gap:.0f} points would be found with 80% power"
        return "no planted gap is found with 80% power at these sizes"

    def own_metrics(self) -> dict[str, float]:
        """Each group's value of the compared metric, ``perf_test/<group>/<metric>``."""
        rows = self.groups[self.groups["metric"] == self.metric]
        return {
            f"perf_test/{row['group']}/{self.metric}": float(row["value"])
            for _, row in rows.iterrows()
        }


def performance_pair_tests(
    texts: PerfTexts,
    groups: Sequence[str],
    settings: PerformanceTestSettings,
    *,
    references: Sequence[str] = (),
    alpha: float = 0.05,
    n_bootstrap: int = 0,
    confidence: float = 0.95,
    kind: type[PerformancePairTests] | None = None,
) -> PerformancePairTests:
    """The performance test of record of every pair of ``groups`` (the module).

    ``groups`` in display order (one without scored texts is left out), planned as the
    embedding test plans them (the texts both hold left out; no cap: the scored texts are
    capped already); ``n_bootstrap``: two-stage bootstrap replicates of the intervals (0: none).
    ``kind``: the class whose declared columns are computed (their ``compute`` functions, of
    each side's per-text scores).
    """
    kind = kind or PerformancePairTests
    present = [g for g in groups if g in texts.members]
    keys = {g: [str(k) for k in texts.keys[texts.members[g]]] for g in present}
    plans = plan_pairs(keys, references)
    where = {g: dict(zip(keys[g], texts.members[g], strict=True)) for g in present}
    scores = texts.scores()
    metric = texts.primary_metric
    rng = rng_for(settings.seed, "perf-test-bootstrap")
    note = too_few_units(texts) if n_bootstrap > 0 else ""
    if note:
        n_bootstrap = 0  # an interval from so few draws would take values no metric can
    replicates = texts.model_replicates(n_bootstrap, rng) if n_bootstrap > 0 else None
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    pairs = [_pair_of(texts, plan, where) for plan in plans]
    tested = [plan.family for plan, pair in zip(plans, pairs, strict=True) if not _untested(pair)]
    clear = clear_point(tested, alpha, settings.relabellings) if settings.stop_when_clear else None
    rows = []
    for plan, pair in zip(plans, pairs, strict=True):
        check_stop()
        found = _pair_row(
            scores, pair, plan, metric, settings, replicates, cache, rng, confidence, clear
        )
        own = computed(kind.columns, None if found[UNTESTABLE] else _sides(scores, pair))
        rows.append({**plan.row(), **found, **own})
    table = _with_families(pd.DataFrame(rows), alpha)
    summary = _group_table(texts, present, n_bootstrap, confidence, settings.seed)
    level = confidence if n_bootstrap > 0 else math.nan
    return kind(settings, alpha, metric, level, table, summary, len(texts.models), note)


def _sides(scores: np.ndarray, pair: StratifiedPair) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """Each side's per-text scores (its strata's rows in order), gathered when called."""
    return lambda: (scores[pair.a.positions], scores[pair.b.positions])


def too_few_units(texts: PerfTexts) -> str:
    """Why the models' training units are too few for an interval ("" where they are not).

    With ``K`` units the two-stage bootstrap draws Student ``t_{K-1}`` tails: with 2 seeds
    (``t_1``) the models' weights go negative and an accuracy interval ran from -0.05 to 1.07;
    the primary's interval asks for :data:`MIN_RESAMPLED` units, and so do these.
    """
    seeds = np.array([model_of(m)[0] for m in texts.models])
    units = len(np.unique(training_units(seeds)))
    if units >= MIN_RESAMPLED:
        return ""
    kind = "seeds" if len(np.unique(seeds)) > 1 else "models of one seed"
    return (
        f"no intervals: {units} training units ({kind}) are too few to resample (an interval "
        f"needs {MIN_RESAMPLED}; fewer gave values the metric cannot take): run more seeds"
    )


def _pair_of(
    texts: PerfTexts, plan: PlannedPair, where: Mapping[str, Mapping[str, int]]
) -> StratifiedPair:
    """The plan's sides, each text the unit of its own group (its own label)."""
    side_a = texts.side(np.array([where[plan.group_a][k] for k in plan.side_a], dtype=np.int64))
    side_b = texts.side(np.array([where[plan.group_b][k] for k in plan.side_b], dtype=np.int64))
    return StratifiedPair.of(side_a, side_b)


def _pair_row(
    scores: np.ndarray,
    pair: StratifiedPair,
    plan: PlannedPair,
    metric: str,
    settings: PerformanceTestSettings,
    replicates: ModelDraws | None,
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator,
    confidence: float,
    clear: int | None = None,
) -> dict[str, object]:
    row: dict[str, object] = {"n_a": pair.a.n, "n_b": pair.b.n, "raw_gap": math.nan}
    row |= dict.fromkeys(("gap", "ci_low", "ci_high", "p", RELABELLED), math.nan)
    why = _untested(pair)
    if min(pair.a.n, pair.b.n) >= 1:
        row["raw_gap"] = side_metric(metric, scores, pair.a) - side_metric(metric, scores, pair.b)
    if why:
        return {**row, UNTESTABLE: why}
    test_rng = rng_for(settings.seed, "perf-test", plan.group_a, plan.group_b)
    gap, p = sequential_relabel(
        scores, pair, metric, settings.relabellings, test_rng, settings.stop_after, clear
    )
    row |= {"gap": gap, "p": p.p, RELABELLED: p.drawn}
    if replicates is not None:
        row["ci_low"], row["ci_high"] = _gap_interval(
            replicates, pair, metric, cache, rng, confidence
        )
    return {**row, UNTESTABLE: ""}


def _untested(pair: StratifiedPair) -> str:
    """Why the pair cannot be tested ("" where it can)."""
    if min(pair.a.n, pair.b.n) < 1:
        return "a side has no scored text left (every text held by both groups)"
    if not pair.common:
        return "no label stratum holds texts of both groups"
    return ""


def _gap_interval(
    replicates: ModelDraws,
    pair: StratifiedPair,
    metric: str,
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator,
    confidence: float,
) -> tuple[float, float]:
    """The standardised gap's two-stage percentile interval (models, then texts in strata)."""
    values = []
    for side in (pair.a, pair.b):
        rows = pair.rows(side)
        key = b"".join(r.tobytes() + b"|" for r in rows)
        if key not in cache:
            cache[key] = resampled_sums(replicates, Side(tuple(rows), pair.common), rng)
        sums, counts = cache[key]
        values.append(standardised(metric, sums, counts, pair.weights))
    return percentile_interval(values[0] - values[1], confidence)


def _with_families(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    if not len(table):
        return pd.DataFrame(columns=[c.name for c in PerformancePairTests.schema()])
    return holm_per_family(table, alpha, table[UNTESTABLE] == "")


def _group_table(
    texts: PerfTexts, groups: Sequence[str], n_bootstrap: int, confidence: float, seed: int
) -> pd.DataFrame:
    values = group_metrics(texts, groups)
    replicates = group_replicates(texts, groups, n_bootstrap, seed) if n_bootstrap > 0 else {}
    rows = []
    for g, group in enumerate(groups):
        n = texts.group_side(group).n
        for metric in texts.metrics:
            low = high = math.nan
            if metric in replicates:
                low, high = percentile_interval(replicates[metric][:, g], confidence)
            row = {"group": group, "metric": metric, "value": float(values[metric][g])}
            rows.append({**row, "ci_low": low, "ci_high": high, "n_texts": n})
    return pd.DataFrame(rows)


def group_replicates(
    texts: PerfTexts, groups: Sequence[str], n_bootstrap: int, seed: int
) -> dict[str, np.ndarray]:
    """The Groups table's two-stage replicates ``(B, G)`` per metric, of ``groups`` with texts.

    The same stream and order as the table's intervals: the same ``groups``, ``n_bootstrap``
    and ``seed`` give the replicates behind them.
    """
    present = [g for g in groups if g in texts.members]
    return group_metric_replicates(texts, present, n_bootstrap, rng_for(seed, "perf-test-groups"))
