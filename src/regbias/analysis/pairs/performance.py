"""The test of record for performance: do the sweep's classifiers treat two groups differently?

Once per sweep, on every text every model scored (:mod:`regbias.analysis.pairs.pooled_scores`):
the stratum-standardised gap, studentized, relabelled within label strata, Holm per family,
with two-stage bootstrap intervals (docs/method.md, "Performance gaps").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
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
from regbias.analysis.pairs.pooled_scores import (
    MIN_RESAMPLED,
    ModelDraws,
    PerfTexts,
    Side,
    group_metric_replicates,
    group_metrics,
    metric_of,
    percentile_interval,
    resampled_sums,
    side_metric,
    training_units,
)
from regbias.analysis.pairs.sequential import (
    MonteCarloP,
    check_stop_after,
    sequential_null,
    stopping_words,
)
from regbias.data.sampling import rng_for
from regbias.errors import ConfigError
from regbias.interrupt import check_stop
from regbias.numbers import models_words, points, points_interval
from regbias.performance.text_scores import model_of
from regbias.settings_reader import HANDED_DOWN, check_draws

#: A relabelled gap this close to the observed one (metric units) is a tie.
_TIE = 1e-9
#: Relabellings drawn at once (a block's draws are the same whether or not the pair stops).
_BLOCK = 1024


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
    """

    enabled: bool
    relabellings: int
    seed: int = field(metadata=HANDED_DOWN)
    stop_after: int | None = None

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
        claim="the classifiers are shown to treat {found} of {n} {pairs} differently",
        verdictless="no performance verdict",
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
            f"{stopping_words(self.settings.stop_after)}), Holm per family, p <= {self.alpha:g}"
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


@dataclass(frozen=True)
class StratifiedPair:
    """Sides ``a`` and ``b``, the strata both hold (``common``) and their CMH ``weights``.

    The weights are ``n_as n_bs / N_s``, summing to 1; a stratum one side lacks weighs nothing.
    """

    a: Side
    b: Side
    common: tuple[str, ...]
    weights: np.ndarray

    @classmethod
    def of(cls, a: Side, b: Side) -> StratifiedPair:
        """The pair of two sides."""
        common = tuple(s for s in a.strata if s in b.strata)
        n_a = {s: len(r) for s, r in zip(a.strata, a.rows, strict=True)}
        n_b = {s: len(r) for s, r in zip(b.strata, b.rows, strict=True)}
        raw = np.array([n_a[s] * n_b[s] / (n_a[s] + n_b[s]) for s in common], dtype=np.float64)
        weights = raw / raw.sum() if raw.sum() > 0 else raw
        return cls(a, b, common, weights)

    def rows(self, side: Side) -> list[np.ndarray]:
        """The side's rows of each common stratum, in :attr:`common` order."""
        index = {s: r for s, r in zip(side.strata, side.rows, strict=True)}
        return [index[s] for s in self.common]


def _standardised(metric: str, sums: np.ndarray, counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A side's metric of its strata's mean components ``sums / counts`` weighted by ``w``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts[..., None]
    return metric_of(metric, np.einsum("...sd,s->...d", means, w), 1.0)


def _gradient(metric: str, means: np.ndarray) -> np.ndarray:
    """``(..., d)`` the metric's gradient in its mean components (central differences)."""
    steps = np.eye(means.shape[-1]) * 1e-6
    return np.stack(
        [
            (metric_of(metric, means + h, 1.0) - metric_of(metric, means - h, 1.0)) / 2e-6
            for h in steps
        ],
        axis=-1,
    )


def _side_statistic(
    metric: str, colours: Sequence[np.ndarray], counts: Sequence[np.ndarray], w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A side's standardised metric and its squared standard error (delta method), per row.

    Per common stratum, its distinct scores (``colours``, ``(C, d)``) and how many texts of
    each the side holds (``counts``, ``(1 + K, C)``: the observed labelling, then relabellings).
    """
    n = np.stack([c.sum(axis=1) for c in counts], axis=1).astype(np.float64)  # (1 + K, S)
    sums = np.stack([c @ x for c, x in zip(counts, colours, strict=True)], axis=1)
    means = np.einsum("ksd,s->kd", sums / n[..., None], w)
    gradient = _gradient(metric, means)  # (1 + K, d): the text's linearised score is g . x
    variance = np.zeros(len(n))
    for j, (c, x) in enumerate(zip(counts, colours, strict=True)):
        u = gradient @ x.T  # (1 + K, C)
        total, square = (c * u).sum(axis=1), (c * u**2).sum(axis=1)
        spread = np.maximum(square - total**2 / n[:, j], 0.0) / np.maximum(n[:, j] - 1, 1)
        variance += w[j] ** 2 * spread / n[:, j]
    return metric_of(metric, means, 1.0), variance


@dataclass(frozen=True)
class Relabelled:
    """A pair's standardised gap and its standard error: observed (``[0]``), then relabelled."""

    gaps: np.ndarray
    errors: np.ndarray

    def statistic(self, studentized: bool = True) -> np.ndarray:
        """The test's statistic of each labelling: the gap over its standard error (or not)."""
        # Float noise is no gap, nor a standard error: where every text of a stratum scores
        # alike (a model that predicts one class), sides differ only in summation order.
        stat = np.where(np.abs(self.gaps) > _TIE, self.gaps, 0.0)
        if not studentized:
            return stat
        errors = np.where(self.errors > _TIE, self.errors, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            unbounded = np.where(stat == 0, 0.0, np.sign(stat) * np.inf)
            return np.where(errors > 0, stat / errors, unbounded)

    def p(self, studentized: bool = True) -> float:
        """Two-sided permutation p of the studentized gap (or of the plain gap)."""
        stat = self.statistic(studentized)
        extreme = int(np.sum(np.abs(stat[1:]) >= abs(stat[0]) - _TIE))
        return (1 + extreme) / len(stat)


def relabel(
    scores: np.ndarray,
    pair: StratifiedPair,
    metric: str,
    relabellings: int,
    rng: np.random.Generator,
) -> Relabelled:
    """The pair's gap and standard error, observed and under ``relabellings`` drawn with ``rng``.

    ``scores``: ``(N, d)`` every text's components (:meth:`PerfTexts.scores`).
    """
    strata = _Strata.of(scores, pair, metric)
    blocks = [strata.relabelled(counts) for counts in strata.draws(relabellings, rng)]
    return _joined([strata.relabelled(strata.observed), *blocks])


def sequential_relabel(
    scores: np.ndarray,
    pair: StratifiedPair,
    metric: str,
    relabellings: int,
    rng: np.random.Generator,
    stop_after: int | None,
) -> tuple[float, MonteCarloP]:
    """The observed gap and the studentized test's p, stopping at ``stop_after`` extremes.

    The relabellings are :func:`relabel`'s, in the same blocks: a pair that does not stop has
    its p, bit for bit.
    """
    strata = _Strata.of(scores, pair, metric)
    observed = strata.relabelled(strata.observed)
    threshold = abs(float(observed.statistic()[0])) - _TIE
    blocks = (
        np.abs(strata.relabelled(counts).statistic()) for counts in strata.draws(relabellings, rng)
    )
    _, p = sequential_null(blocks, lambda s: s >= threshold, relabellings, stop_after)
    return float(observed.gaps[0]), p


@dataclass(frozen=True)
class _Strata:
    """A pair's common strata as distinct scores (``colours``) and how many of each a side holds."""

    metric: str
    weights: np.ndarray
    colours: list[np.ndarray]
    sizes: list[np.ndarray]
    observed: list[np.ndarray]  # side a's counts of each colour, (1, C) a stratum

    @classmethod
    def of(cls, scores: np.ndarray, pair: StratifiedPair, metric: str) -> _Strata:
        colours, sizes, observed = [], [], []
        for rows_a, rows_b in zip(pair.rows(pair.a), pair.rows(pair.b), strict=True):
            pooled = scores[np.concatenate([rows_a, rows_b])]
            if pooled.shape[1] == 1:  # unique scalars: an order of magnitude faster than rows
                values, inverse, size = np.unique(pooled, return_inverse=True, return_counts=True)
                distinct = values[:, None]
            else:
                distinct, inverse, size = np.unique(
                    pooled, axis=0, return_inverse=True, return_counts=True
                )
            counts = np.bincount(inverse.reshape(-1)[: len(rows_a)], minlength=len(distinct))
            colours.append(distinct)
            sizes.append(size)
            observed.append(counts[None, :])
        return cls(metric, pair.weights, colours, sizes, observed)

    def draws(self, relabellings: int, rng: np.random.Generator) -> Iterator[list[np.ndarray]]:
        """Side a's counts under ``relabellings`` relabellings, in blocks of :data:`_BLOCK`."""
        n_a = [int(c.sum()) for c in self.observed]
        for done in range(0, relabellings, _BLOCK):
            k = min(_BLOCK, relabellings - done)
            yield [
                rng.multivariate_hypergeometric(size, n, size=k, method="marginals")
                for size, n in zip(self.sizes, n_a, strict=True)
            ]
            check_stop()

    def relabelled(self, counts_a: list[np.ndarray]) -> Relabelled:
        """The gap and its standard error of each row of side a's ``counts_a`` (a stratum each)."""
        counts_b = [size - c for size, c in zip(self.sizes, counts_a, strict=True)]
        value_a, variance_a = _side_statistic(self.metric, self.colours, counts_a, self.weights)
        value_b, variance_b = _side_statistic(self.metric, self.colours, counts_b, self.weights)
        return Relabelled(value_a - value_b, np.sqrt(variance_a + variance_b))


def _joined(parts: Sequence[Relabelled]) -> Relabelled:
    return Relabelled(
        np.concatenate([r.gaps for r in parts]), np.concatenate([r.errors for r in parts])
    )


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
    rows = []
    for plan in plans:
        check_stop()
        pair = _pair_of(texts, plan, where)
        found = _pair_row(scores, pair, plan, metric, settings, replicates, cache, rng, confidence)
        own = computed(kind.columns, None if found[UNTESTABLE] else _sides(scores, pair))
        rows.append({**plan.row(), **found, **own})
    table = _with_families(pd.DataFrame(rows), alpha)
    summary = _group_table(texts, present, n_bootstrap, confidence, settings.seed)
    level = confidence if n_bootstrap > 0 else math.nan
    return kind(settings, alpha, metric, level, table, summary, len(texts.models), note)


def _sides(scores: np.ndarray, pair: StratifiedPair) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """Each side's per-text scores (its strata's rows in order), gathered when called."""

    def rows(side: Side) -> np.ndarray:
        return np.concatenate(side.rows) if side.rows else np.zeros(0, dtype=np.int64)

    return lambda: (scores[rows(pair.a)], scores[rows(pair.b)])


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
) -> dict[str, object]:
    row: dict[str, object] = {"n_a": pair.a.n, "n_b": pair.b.n, "raw_gap": math.nan}
    row |= dict.fromkeys(("gap", "ci_low", "ci_high", "p", RELABELLED), math.nan)
    if min(pair.a.n, pair.b.n) < 1:
        why = "a side has no scored text left (every text held by both groups)"
        return {**row, UNTESTABLE: why}
    row["raw_gap"] = side_metric(metric, scores, pair.a) - side_metric(metric, scores, pair.b)
    if not pair.common:
        return {**row, UNTESTABLE: "no label stratum holds texts of both groups"}
    test_rng = rng_for(settings.seed, "perf-test", plan.group_a, plan.group_b)
    gap, p = sequential_relabel(
        scores, pair, metric, settings.relabellings, test_rng, settings.stop_after
    )
    row |= {"gap": gap, "p": p.p, RELABELLED: p.drawn}
    if replicates is not None:
        row["ci_low"], row["ci_high"] = _gap_interval(
            replicates, pair, metric, cache, rng, confidence
        )
    return {**row, UNTESTABLE: ""}


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
        values.append(_standardised(metric, sums, counts, pair.weights))
    return percentile_interval(values[0] - values[1], confidence)


def _with_families(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    if not len(table):
        return pd.DataFrame(columns=[c.name for c in PerformancePairTests.schema()])
    return holm_per_family(table, alpha, table[UNTESTABLE] == "")


def _group_table(
    texts: PerfTexts, groups: Sequence[str], n_bootstrap: int, confidence: float, seed: int
) -> pd.DataFrame:
    values = group_metrics(texts, groups)
    replicates = {}
    if n_bootstrap > 0:
        replicates = group_metric_replicates(
            texts, groups, n_bootstrap, rng_for(seed, "perf-test-groups")
        )
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
