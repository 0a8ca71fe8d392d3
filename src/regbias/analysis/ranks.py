"""Rank correlations computed many at once: row by row, or as dot products of unit ranks.

The robustness checks recompute Spearman's rho (and Kendall's tau-b) for thousands of
bootstrap replicates or relabellings; these helpers do it for a whole array in one call
instead of one ``scipy.stats`` call per replicate.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as scipy_stats

__all__ = ["kendall_rows", "spearman_rows", "unit_ranks"]


def unit_ranks(ranks: np.ndarray) -> np.ndarray:
    """Centred ranks (per column) scaled to unit length: dot products are then correlations.

    Args:
        ranks: ``(m,)`` or ``(m, P)`` ranks of ``m`` values (per column).

    Returns:
        The same shape; the dot product of two such columns is their Pearson correlation,
        i.e. Spearman's rho of the values ranked. NaN where a column is constant.
    """
    centred = ranks - ranks.mean(axis=0)
    return centred / np.sqrt((centred**2).sum(axis=0))


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``x`` with the same row of ``y`` (rows broadcast).

    Args:
        x: ``(B, m)`` or ``(1, m)`` values.
        y: ``(B, m)`` or ``(1, m)`` values.

    Returns:
        ``(B,)`` correlations; NaN where a row is constant.
    """
    rx = _centred(scipy_stats.rankdata(x, axis=1))
    ry = _centred(scipy_stats.rankdata(y, axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))


def _centred(ranks: np.ndarray) -> np.ndarray:
    return ranks - ranks.mean(axis=1, keepdims=True)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``x`` with the same row of ``y`` (rows broadcast).

    Args:
        x: ``(B, m)`` or ``(1, m)`` values.
        y: ``(B, m)`` or ``(1, m)`` values.

    Returns:
        ``(B,)`` correlations; NaN where a row is constant.
    """
    first, second = np.triu_indices(x.shape[1], 1)
    sx = np.sign(x[:, first] - x[:, second])
    sy = np.sign(y[:, first] - y[:, second])
    with np.errstate(invalid="ignore", divide="ignore"):
        untied = np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1)
        return (sx * sy).sum(axis=1) / np.sqrt(untied)
