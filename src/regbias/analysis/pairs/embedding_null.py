"""The permutation null of the test of record: a pair's pooled form and its relabellings.

Each statistic is a quadratic form ``T(u) = w^T M w`` in the side weights
``w = u / n_a - (1 - u) / n_b`` (``u`` the side-``a`` indicator) of one pooled matrix ``M``:
``energy`` ``M = -|x_i - x_j|`` (Szekely and Rizzo 2004); ``mmd`` a Gaussian kernel of median
width (biased V-statistic, Gretton et al. 2012); ``mean`` ``M = x_i . x_j``. ``K``
relabellings are one float64 matrix product in blocks, ``p = (1 + #{T*_k >= T}) / (1 + K)``;
a relabelled value within :func:`tie_margin` of ``T`` (the products' float64 error bound) is
set to ``T``, so an exact tie is never lost to rounding. :func:`sequential_pair_null` stops the
same blocks at the ``h``-th ``T* >= T`` (:mod:`regbias.analysis.pairs.sequential`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from scipy.spatial import distance

from regbias.analysis.pairs.sequential import MonteCarloP, sequential_null
from regbias.interrupt import check_stop

PairStatistic = Literal["energy", "mmd", "mean"]
PAIR_STATISTICS: tuple[PairStatistic, ...] = get_args(PairStatistic)
#: Held around every BLAS product of a pair test: pairs tested side by side (their draws and
#: partitions in parallel) still make each product alone, on every BLAS thread, so its rounding
#: is that of one pair at a time.
BLAS_LOCK = threading.Lock()
#: Relabellings per matrix product: an ``(N, block)`` float64 weight matrix and its product.
_BLOCK = 512
#: The unit roundoff of float64 (the error bound of one rounding is ``u |x|``).
_UNIT = float(np.finfo(np.float64).eps) / 2
#: Draws a row from which :func:`kth_smallest` partitions a band of them, not the whole row.
_BAND_FROM = 2_000
#: The band's half-width in standard deviations of the order statistic.
_BAND_SDS = 8.0


@dataclass(frozen=True)
class PooledForm:
    """The quadratic form of one pair's pooled texts: ``T(u) = w^T M w`` (see the module).

    Attributes:
        values: the ``(N, N)`` matrix ``M``, or with ``factor`` an ``(N, r)`` matrix ``F``
            with ``M = F F^T`` (the ``mean`` statistic: the centred vectors, so a relabelling
            costs ``r`` instead of ``N`` products a text), float64.
        factor: whether ``values`` is the factor ``F``.
        entry_error: a bound on ``sum_ij |M_ij - exact M_ij|`` (the rounding of a full
            ``M``'s entries; the factor's is part of :func:`tie_margin`).
    """

    values: np.ndarray
    factor: bool = False
    entry_error: float = 0.0

    @property
    def n(self) -> int:
        """The pooled texts."""
        return int(self.values.shape[0])

    def quadratic(self, weights: np.ndarray) -> np.ndarray:
        """``w^T M w`` of every column ``w`` of the ``(N, k)`` weight matrix ``weights``."""
        if self.factor:
            projected = self.values.T @ weights
            return np.einsum("rk,rk->k", projected, projected)
        return np.einsum("ik,ik->k", weights, self.values @ weights)


def pooled_form(vectors: np.ndarray, statistic: PairStatistic) -> PooledForm:
    """The ``statistic``'s form of ``(N, d)`` pooled vectors (``a``'s, then ``b``'s), in float64."""
    x = np.asarray(vectors, dtype=np.float64)
    if statistic == "mean":
        return PooledForm(x - x.mean(axis=0), factor=True)
    # Differences summed directly, not |x|^2 + |y|^2 - 2 x.y: each squared distance is within
    # a relative (d + 2) u of its exact value, a zero one exactly zero.
    squared = distance.cdist(x, x, "sqeuclidean")
    relative = (x.shape[1] + 2) * _UNIT
    if statistic == "energy":
        m = -np.sqrt(squared)
        return PooledForm(m, entry_error=float(np.abs(m).sum()) * (relative + 2 * _UNIT))
    upper = squared[np.triu_indices(len(x), 1)]
    width = float(np.median(upper)) if len(upper) else 1.0
    if width <= 0:
        return PooledForm(np.ones_like(squared))
    argument = squared / (2 * width)
    m = np.exp(-argument)
    return PooledForm(
        m, entry_error=float(np.sum(m * (argument * (relative + 3 * _UNIT) + 2 * _UNIT)))
    )


def _gamma(n: int) -> float:
    """``gamma_n``: the relative error bound of an inner product of ``n`` terms."""
    return n * _UNIT / (1 - n * _UNIT)


def tie_margin(form: PooledForm, n_a: int, observed: float) -> float:
    """How far a computed relabelled value may lie from ``observed`` and still tie exactly.

    Every weight is ``1 / n_a`` or ``-1 / n_b`` (one rounding each), so ``|w_i| <= s`` with
    ``s = max(1 / n_a, 1 / n_b)``. For ``mean`` (``T = |F^T w|^2``) each projection
    ``q_r = F_r . w`` is within ``delta_r = (gamma_N + 2 u) s A_r`` of its exact value
    (``A_r = sum_i |F_ir|``, the centring's rounding included) and ``|q_r| <= s A_r``, so
    ``T`` is within ``sum_r (2 s A_r delta_r + delta_r^2) + gamma_r T``. For a full ``M``,
    ``(M w)_i`` is within ``gamma_N s sum_j |M_ij|`` and the outer product adds as much again,
    so ``T`` is within ``(2 gamma_N + 4 u) s^2 sum_ij |M_ij|``, plus ``s^2`` times the
    entries' own rounding (:attr:`PooledForm.entry_error`). Two values each within that
    bound of their exact values tie exactly only if they are within twice of each other; the
    margin is twice that again (a factor of safety).
    """
    n = form.n
    s = max(1.0 / n_a, 1.0 / (n - n_a)) * (1 + 2 * _UNIT)
    gamma = _gamma(n + 2)
    if form.factor:
        a = np.abs(form.values).sum(axis=0)
        delta = (gamma + 2 * _UNIT) * s * a
        bound = float(np.sum(2 * s * a * delta + delta**2))
        bound += _gamma(form.values.shape[1] + 2) * abs(observed)
    else:
        bound = (2 * gamma + 4 * _UNIT) * s**2 * float(np.abs(form.values).sum())
        bound += s**2 * form.entry_error * (1 + gamma)
    return 4 * bound * (1 + 4 * _UNIT)


def draw_sides(n: int, n_a: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` uniform relabellings of ``n`` texts: ``(n, k)`` booleans, ``n_a`` true a column.

    Column ``j`` marks the ``n_a`` smallest of ``n`` uniform draws (row ``j`` of one
    ``(k, n)`` draw), found by the ``n_a``-th smallest draw (:func:`kth_smallest`) and a
    comparison; a row whose ``n_a``-th and next draws tie exactly (about ``n / 2**53``) takes
    ``argpartition``'s choice instead. The result is a transposed view of the ``(k, n)``
    comparison (Fortran order): no copy.
    """
    if not k:
        return np.zeros((n, 0), dtype=bool)
    draws = rng.random((k, n))
    chosen = draws <= kth_smallest(draws, n_a - 1)[:, None]
    for row in np.flatnonzero(np.count_nonzero(chosen, axis=1) != n_a):
        chosen[row] = False
        chosen[row, np.argpartition(draws[row], n_a - 1)[:n_a]] = True
    return chosen.T


def kth_smallest(draws: np.ndarray, index: int) -> np.ndarray:
    """Each row's ``index``-th smallest value (0-based) of ``(k, n)`` uniform draws in [0, 1).

    The value ``np.partition`` gives, found faster from :data:`_BAND_FROM` draws a row: the
    ``index``-th smallest of ``n`` uniforms lies within :data:`_BAND_SDS` standard deviations of
    ``(index + 1) / (n + 1)``, so only the draws in that band are partitioned; a row whose
    value lies outside it (odds below 1e-14) is partitioned whole. Either way the value, and so
    every relabelling, is the same.
    """
    rows, n = draws.shape
    if n < _BAND_FROM:
        return np.partition(draws, index, axis=1)[:, index]
    p = (index + 1) / (n + 1)
    spread = _BAND_SDS * math.sqrt(p * (1 - p) / (n + 2)) + _BAND_SDS / n
    low = draws < p - spread
    below = np.count_nonzero(low, axis=1)
    band = ~low & (draws < p + spread)
    counts = np.count_nonzero(band, axis=1)
    values, ends = draws[band], np.cumsum(counts)
    kth = np.empty(rows)
    for row in range(rows):
        rank = index - int(below[row])
        if 0 <= rank < counts[row]:
            segment = values[ends[row] - counts[row] : ends[row]]
            kth[row] = np.partition(segment, rank)[rank]
        else:
            kth[row] = np.partition(draws[row], index)[index]
    return kth


def relabelled_values(form: PooledForm, n_a: int, sides: np.ndarray) -> np.ndarray:
    """``T`` of every labelling, a column of the ``(N, k)`` 0/1 (or boolean) ``sides``, float64."""
    n_b = form.n - n_a
    # A lookup keeps the layout (draw_sides' Fortran order: no transposed copy).
    weights = np.array([-1.0 / n_b, 1.0 / n_a])[(sides > 0).view(np.uint8)]
    with BLAS_LOCK:
        return np.asarray(form.quadratic(weights), dtype=np.float64)


def pair_statistic_null(
    form: PooledForm, n_a: int, relabellings: int, rng: np.random.Generator
) -> tuple[float, np.ndarray]:
    """``(T, T*)``: the observed statistic of ``form`` and its ``(K,)`` relabelled values.

    All computed by the same float64 products; a relabelled value within :func:`tie_margin`
    of ``T`` is ``T`` exactly (a tie).
    """
    observed, null, _ = sequential_pair_null(form, n_a, relabellings, rng, None)
    return observed, null


def sequential_pair_null(
    form: PooledForm,
    n_a: int,
    relabellings: int,
    rng: np.random.Generator,
    stop_after: int | None,
    clear_after: int | None = None,
) -> tuple[float, np.ndarray, MonteCarloP]:
    """:func:`pair_statistic_null` that stops at its ``stop_after``-th ``T* >= T`` (and its p).

    ``clear_after``: ``N``, where a pair with none as extreme in its first ``N`` stops
    (:func:`~regbias.analysis.pairs.sequential.sequential_null`).

    The relabellings are drawn in the same blocks from the same stream whether or not it
    stops: a pair that does not stop has the fixed-``K`` null and p, bit for bit.
    """
    n = form.n
    labelling = np.zeros((n, 1))
    labelling[:n_a] = 1.0
    t = float(relabelled_values(form, n_a, labelling)[0])
    margin = tie_margin(form, n_a, t)

    def blocks() -> Iterator[np.ndarray]:
        for done in range(0, relabellings, _BLOCK):
            k = min(_BLOCK, relabellings - done)
            values = relabelled_values(form, n_a, draw_sides(n, n_a, k, rng))
            values[np.abs(values - t) <= margin] = t
            yield values
            check_stop()

    null, p = sequential_null(
        blocks(), lambda values: values >= t, relabellings, stop_after, clear_after
    )
    return t, null, p


def permutation_p(observed: float, null: np.ndarray) -> float:
    """``(1 + #{T* >= T}) / (1 + K)`` (ties: :func:`pair_statistic_null` sets them to ``T``)."""
    extreme = int(np.sum(null >= observed))
    return (1 + extreme) / (1 + len(null))
