"""The performance test's relabellings: a pair's strata, its studentized gap, and its null.

Within a label stratum a relabelling only decides how many texts of each distinct score go to
side ``a`` (a multivariate hypergeometric draw); each side's stratum-standardised metric and
its delta-method standard error follow from those counts (docs/method.md, "Performance gaps").
The draws come in blocks, so a pair that stops early (:mod:`regbias.analysis.pairs.sequential`)
has drawn exactly the first relabellings of one that does not.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from regbias.analysis.pairs.pooled_scores import Side, metric_of
from regbias.analysis.pairs.sequential import MonteCarloP, sequential_null
from regbias.interrupt import check_stop

#: A relabelled gap this close to the observed one (metric units) is a tie.
_TIE = 1e-9
#: Relabellings drawn at once (a block's draws are the same whether or not the pair stops).
_BLOCK = 1024


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


def standardised(metric: str, sums: np.ndarray, counts: np.ndarray, w: np.ndarray) -> np.ndarray:
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
    parts = [strata.relabelled(strata.observed)]
    parts += [strata.relabelled(counts) for counts in strata.draws(relabellings, rng)]
    return Relabelled(
        np.concatenate([r.gaps for r in parts]), np.concatenate([r.errors for r in parts])
    )


def sequential_relabel(
    scores: np.ndarray,
    pair: StratifiedPair,
    metric: str,
    relabellings: int,
    rng: np.random.Generator,
    stop_after: int | None,
    clear_after: int | None = None,
) -> tuple[float, MonteCarloP]:
    """The observed gap and the studentized test's p, stopping at ``stop_after`` extremes.

    ``clear_after``: ``N``, where a pair with none as extreme in its first ``N`` stops
    (:func:`~regbias.analysis.pairs.sequential.sequential_null`).

    The relabellings are :func:`relabel`'s, in the same blocks: a pair that does not stop has
    its p, bit for bit.
    """
    strata = _Strata.of(scores, pair, metric)
    observed = strata.relabelled(strata.observed)
    threshold = abs(float(observed.statistic()[0])) - _TIE
    blocks = (
        np.abs(strata.relabelled(counts).statistic()) for counts in strata.draws(relabellings, rng)
    )
    _, p = sequential_null(blocks, lambda s: s >= threshold, relabellings, stop_after, clear_after)
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
