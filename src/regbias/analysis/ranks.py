"""Rank correlations of thousands of replicates or relabellings at once, not one scipy call each."""

from __future__ import annotations

import numpy as np
from scipy import stats as scipy_stats


def unit_ranks(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """``values`` ranked along ``axis``, centred and scaled to unit length (NaN: constant).

    ``(m,)`` or ``(m, P)`` values ranked per column (``axis=1``: ``(B, m)`` per row); the dot
    product of two such columns (rows) is Spearman's rho of the values.
    """
    ranks = scipy_stats.rankdata(values, axis=axis)
    centred = ranks - ranks.mean(axis=axis, keepdims=True)
    return centred / np.sqrt((centred**2).sum(axis=axis, keepdims=True))


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(B,)`` Spearman's rho of each row of ``x`` with that of ``y`` (rows broadcast).

    ``x`` and ``y`` are ``(B, m)`` or ``(1, m)``; NaN where a row is constant.
    """
    rx = _centred(scipy_stats.rankdata(x, axis=1))
    ry = _centred(scipy_stats.rankdata(y, axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return centred_correlation(rx, ry)


def centred_correlation(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(B,)`` the correlation of each row of centred ``u`` with that of centred ``v``."""
    return (u * v).sum(axis=1) / np.sqrt((u**2).sum(axis=1) * (v**2).sum(axis=1))


def _centred(ranks: np.ndarray) -> np.ndarray:
    return ranks - ranks.mean(axis=1, keepdims=True)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(B,)`` Kendall's tau-b of rows, as :func:`spearman_rows` gives Spearman's rho."""
    first, second = np.triu_indices(x.shape[1], 1)
    sx = np.sign(x[:, first] - x[:, second])
    sy = np.sign(y[:, first] - y[:, second])
    with np.errstate(invalid="ignore", divide="ignore"):
        untied = np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1)
        return (sx * sy).sum(axis=1) / np.sqrt(untied)
