"""The gaps' noise attenuates rho: the primary's interval for the noise-free rho.

Linear simulation-extrapolation (SIMEX), as docs/method.md ("Performance gaps") states and
measures: the bootstrap's own deviations are draws of the measurement noise, and each
replicate's rho is extrapolated back one unit of noise, ``2 rho(x) - mean_k rho(x + e_k)``.
The interval is a percentile interval of the corrected replicates with calibrated tails
(:data:`TAIL_SCALE`).
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
    """The linear SIMEX rho ``2 rho(x) - mean_k rho(x + e_k)`` of each row (NaN: undefined).

    Args:
        distances: ``(n, m)`` the pairs' distances, one row per set of values.
        metrics: ``(n, G)`` the groups' metrics of the same rows.
        pairs: the group indices ``(a, b)`` of the ``m`` pairs.
        noise: ``(K, m)`` distance and ``(K, G)`` metric noise draws added to every row.
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
    """``(B,)`` corrected rhos of ``(B, m)`` distance and ``(B, G)`` metric ``replicates``.

    ``rng`` draws the noise rows (:data:`INNER_DRAWS` of the replicates' deviations): studies
    drawn alike with ``rng`` seeded alike get the same rows, so their rows can be differenced.
    """
    d_reps, m_reps = replicates
    with np.errstate(invalid="ignore"):
        deviations = (d_reps - np.nanmean(d_reps, axis=0), m_reps - np.nanmean(m_reps, axis=0))
    rows = rng.integers(0, len(d_reps), size=INNER_DRAWS)
    return corrected_rho(d_reps, m_reps, pairs, (deviations[0][rows], deviations[1][rows]))


def tail_interval(
    values: np.ndarray, confidence: float, *, clip: bool = False
) -> tuple[float, float]:
    """The calibrated percentile range of corrected replicates (or of their differences).

    Each tail holds :data:`TAIL_SCALE` times the nominal share; NaN rows are left out;
    ``(nan, nan)`` when none is finite. ``clip``: within [-1, 1], for a rho (a difference of
    two rhos spans [-2, 2]).
    """
    finite = values[np.isfinite(values)]
    if not len(finite):
        return np.nan, np.nan
    tail = TAIL_SCALE * (1 - confidence) / 2
    bounds = np.quantile(finite, [tail, 1 - tail])
    if clip:
        bounds = np.clip(bounds, -1.0, 1.0)
    return float(bounds[0]), float(bounds[1])


def corrected_interval(
    replicates: tuple[np.ndarray, np.ndarray],
    pairs: tuple[np.ndarray, np.ndarray],
    confidence: float,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """The noise-free rho's interval within [-1, 1] (arguments: :func:`corrected_replicates`)."""
    return tail_interval(corrected_replicates(replicates, pairs, rng), confidence, clip=True)
