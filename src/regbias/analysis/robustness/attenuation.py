"""The gaps' noise attenuates rho: the primary's interval for the noise-free rho.

Every group's metric is measured on a finite set of texts by a finite set of models, so the
measured gaps ``|m_a - m_b|`` are the true gaps plus noise, folded at zero. That noise pulls
Spearman's rho towards zero, and a plain percentile bootstrap cannot see how far: its
replicates add the noise once more to values that already hold it, and the second helping
attenuates less than the first. On simulated studies whose groups share their texts' noise
(``benchmarks/perf_coverage.py``) the measured rho was 0.13 below the true one on average and
the percentile interval covered the true rho in 0.83-0.91 of the studies at a nominal 0.95.

The correction is simulation-extrapolation (SIMEX) in its linear form. The bootstrap's own
deviations ``m*_b - mean(m*)`` (and the distance replicates' ``d*_b - mean(d*)``) are draws
of the measurement noise; adding one more draw to a set of values gives its rho at one more
unit of noise, and the line through "as measured" and "one unit more" extrapolated back one
unit estimates the rho without noise: ``2 rho(x) - mean_k rho(x + e_k)``. The interval is a
percentile interval of that correction applied to every bootstrap replicate, so it speaks for
the true rho, not for the attenuated one; its tails are calibrated (:data:`TAIL_SCALE`).
"""

from __future__ import annotations

import numpy as np

from regbias.analysis.ranks import spearman_rows

__all__ = [
    "INNER_DRAWS",
    "TAIL_SCALE",
    "corrected_interval",
    "corrected_replicates",
    "corrected_rho",
    "tail_interval",
]

#: Noise draws ``k`` behind each corrected rho (the mean over them is the "one unit more").
INNER_DRAWS = 50
#: Each tail's share is this many times the nominal ``(1 - confidence) / 2``: the corrected
#: replicates carry the extrapolation's noise as well as the data's, and their plain 2.5-97.5%
#: range covered in 0.98-0.99 of the studies; the 5-95% range covered in 0.933-0.973 over five
#: noise regimes, one of them held out of the choice (docs/method.md, "Performance gaps").
TAIL_SCALE = 2.0


def _gaps(metrics: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    return np.abs(metrics[..., ia] - metrics[..., ib])


def corrected_rho(
    distances: np.ndarray,
    metrics: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    noise: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """The linear SIMEX rho ``2 rho(x) - mean_k rho(x + e_k)`` of each row.

    Args:
        distances: ``(n, m)`` the pairs' distances, one row per set of values.
        metrics: ``(n, G)`` the groups' metrics of the same rows.
        pairs: the group indices ``(a, b)`` of the ``m`` pairs.
        noise: ``(K, m)`` distance and ``(K, G)`` metric noise draws added to every row.

    Returns:
        ``(n,)`` corrected rhos (NaN where a row's rho is undefined).
    """
    ia, ib = pairs
    d_noise, m_noise = noise
    rho = spearman_rows(distances, _gaps(metrics, ia, ib))
    n, k = len(distances), len(d_noise)
    noisy_d = (distances[:, None, :] + d_noise[None]).reshape(n * k, -1)
    noisy_m = (metrics[:, None, :] + m_noise[None]).reshape(n * k, -1)
    with np.errstate(invalid="ignore"):
        more = np.nanmean(spearman_rows(noisy_d, _gaps(noisy_m, ia, ib)).reshape(n, k), axis=1)
    return 2 * rho - more


def corrected_replicates(
    replicates: tuple[np.ndarray, np.ndarray],
    pairs: tuple[np.ndarray, np.ndarray],
    rng: np.random.Generator,
) -> np.ndarray:
    """The corrected rho of every bootstrap replicate (the module's correction, row by row).

    Args:
        replicates: their bootstrap replicates, ``(B, m)`` distances and ``(B, G)`` metrics,
            drawn together.
        pairs: the group indices ``(a, b)`` of the ``m`` pairs.
        rng: draws the noise rows (:data:`INNER_DRAWS` of the replicates' deviations).

    Returns:
        ``(B,)`` corrected rhos, NaN where a replicate's rho is undefined. Two studies whose
        replicates were drawn alike (the same seed and shapes) and whose ``rng`` is seeded
        alike get the same noise rows, so their rows can be differenced.
    """
    d_reps, m_reps = replicates
    with np.errstate(invalid="ignore"):
        deviations = (d_reps - np.nanmean(d_reps, axis=0), m_reps - np.nanmean(m_reps, axis=0))
    rows = rng.integers(0, len(d_reps), size=INNER_DRAWS)
    return corrected_rho(d_reps, m_reps, pairs, (deviations[0][rows], deviations[1][rows]))


def tail_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The calibrated percentile range of corrected replicates (or of their differences).

    Each tail holds :data:`TAIL_SCALE` times the nominal share; NaN rows are left out;
    ``(nan, nan)`` when none is finite. Not clipped: a difference of two rhos spans [-2, 2].
    """
    finite = values[np.isfinite(values)]
    if not len(finite):
        return np.nan, np.nan
    tail = TAIL_SCALE * (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)


def corrected_interval(
    replicates: tuple[np.ndarray, np.ndarray],
    pairs: tuple[np.ndarray, np.ndarray],
    confidence: float,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """The interval for the noise-free rho (the module).

    Args:
        replicates: their bootstrap replicates, ``(B, m)`` and ``(B, G)``, drawn together.
        pairs: the group indices ``(a, b)`` of the ``m`` pairs.
        confidence: the interval's nominal level (its tails :data:`TAIL_SCALE` times wider
            in share).
        rng: draws the noise rows (:data:`INNER_DRAWS` of the replicates' deviations).

    Returns:
        ``(low, high)`` within [-1, 1]; NaN when no replicate gives a rho.
    """
    low, high = tail_interval(corrected_replicates(replicates, pairs, rng), confidence)
    if not np.isfinite(low):
        return low, high
    return float(np.clip(low, -1.0, 1.0)), float(np.clip(high, -1.0, 1.0))
