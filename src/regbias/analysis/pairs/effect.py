"""A pair's size-free effect: the U-statistic of its statistic, unbiased at any size.

For ``mean`` ``U = sum_{i != j in a} x_i . x_j / (n_a (n_a - 1)) + (the same for b)
- 2 sum_{i in a, j in b} x_i . y_j / (n_a n_b)``, of expectation ``|mu_a - mu_b|^2``; for
``energy`` and ``mmd`` the same form of their kernels. Its interval resamples each group's
texts, re-centred on ``U`` (docs/method.md, "Which pairs differ").
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.spatial import distance

from regbias.analysis.pairs.embedding_null import BLAS_LOCK, PairStatistic
from regbias.analysis.pairs.pooled_scores import draw_counts


def _mean_u(x: np.ndarray, y: np.ndarray, ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """``U`` of each resample: rows of ``ca`` / ``cb`` are counts of ``x``'s / ``y``'s texts."""
    n_a, n_b = len(x), len(y)
    sa, sb = ca @ x, cb @ y
    qa, qb = ca @ np.einsum("ij,ij->i", x, x), cb @ np.einsum("ij,ij->i", y, y)
    within_a = (np.einsum("kj,kj->k", sa, sa) - qa) / (n_a * (n_a - 1))
    within_b = (np.einsum("kj,kj->k", sb, sb) - qb) / (n_b * (n_b - 1))
    return within_a + within_b - 2 * np.einsum("kj,kj->k", sa, sb) / (n_a * n_b)


def _kernel_u(k: np.ndarray, n_a: int, ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """The same for a kernel ``k`` of the pooled texts (``a``'s first); energy: ``-|x - y|``."""
    n_b = len(k) - n_a
    kaa, kbb, kab = k[:n_a, :n_a], k[n_a:, n_a:], k[:n_a, n_a:]
    da, db = np.diag(kaa), np.diag(kbb)
    aa = np.einsum("ki,ki->k", ca @ kaa, ca) - ca @ da
    bb = np.einsum("ki,ki->k", cb @ kbb, cb) - cb @ db
    ab = np.einsum("ki,ki->k", ca @ kab, cb)
    return aa / (n_a * (n_a - 1)) + bb / (n_b * (n_b - 1)) - 2 * ab / (n_a * n_b)


class PairEffect(NamedTuple):
    """A pair's effect and its bootstrap interval.

    Attributes:
        effect: the U-statistic.
        low: the interval's lower end (NaN: no interval).
        high: its upper end.
        mc_sd: the larger Monte Carlo sd of the two ends (:func:`quantile_mc_sd`): how far a
            rerun with other resamples would move them.
    """

    effect: float
    low: float
    high: float
    mc_sd: float = math.nan


def quantile_mc_sd(values: np.ndarray, q: float) -> float:
    """The Monte Carlo sd of the ``q`` quantile of ``B`` bootstrap ``values``.

    The quantile's rank among the sorted values is binomial, ``B q`` with sd
    ``s = sqrt(B q (1 - q))``, so the value moves by about a quarter of the spread between the
    sorted values at ranks ``B q - 2 s`` and ``B q + 2 s`` (the order statistics' interval at
    two sds, steadier than one's).
    """
    ordered = np.sort(values[np.isfinite(values)])
    b = len(ordered)
    if b < 2:
        return math.nan
    spread = 2 * math.sqrt(b * q * (1 - q))
    low = min(b - 1, max(0, math.floor(b * q - spread)))
    high = min(b - 1, max(0, math.ceil(b * q + spread)))
    return float(ordered[high] - ordered[low]) / 4


def pair_effect(
    a: np.ndarray,
    b: np.ndarray,
    statistic: PairStatistic,
    *,
    resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> PairEffect:
    """The effect of sides ``a`` and ``b`` (``(n, d)`` vectors, ``n >= 2``) and its interval.

    ``resamples``: bootstrap resamples of the interval (0: NaN bounds), drawn with ``rng``.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    n_a, n_b = len(x), len(y)
    centre = np.vstack([x, y]).mean(axis=0)
    x, y = x - centre, y - centre
    ones = (np.ones((1, n_a)), np.ones((1, n_b)))
    if statistic == "mean":

        def value(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
            return _mean_u(x, y, ca, cb)
    else:
        pooled = np.vstack([x, y])
        squared = distance.cdist(pooled, pooled, "sqeuclidean")
        if statistic == "energy":
            kernel = -np.sqrt(squared)
        else:
            width = float(np.median(squared[np.triu_indices(len(pooled), 1)]))
            kernel = np.exp(-squared / (2 * width)) if width > 0 else np.ones_like(squared)

        def value(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
            return _kernel_u(kernel, n_a, ca, cb)

    with BLAS_LOCK:
        effect = float(value(*ones)[0])
    if resamples < 1:
        return PairEffect(effect, math.nan, math.nan)
    values = []
    for start in range(0, resamples, 256):
        k = min(256, resamples - start)
        ca, cb = draw_counts(n_a, k, rng), draw_counts(n_b, k, rng)
        with BLAS_LOCK:
            values.append(value(ca, cb))
    boot = np.concatenate(values)
    boot = boot - (boot.mean() - effect)
    tail = (1 - confidence) / 2
    low, high = np.quantile(boot, [tail, 1 - tail])
    mc_sd = max(quantile_mc_sd(boot, tail), quantile_mc_sd(boot, 1 - tail))
    return PairEffect(effect, float(low), float(high), mc_sd)
