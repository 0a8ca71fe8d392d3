"""The partial Mantel test of a correlation, controlling for the sizes of the two groups.

Spearman's partial correlation of distance and performance given ``1/n_a + 1/n_b``: the
finite-sample bias of a distance between two draws is additive in the groups' ``1/n`` terms,
so a pair's bias ranks by that sum (not by ``log n_a + log n_b``, which ranks a
100-and-20,000 pair below a 1,000-and-1,000 pair). The null relabels the groups of the
performance matrix, as :mod:`regbias.analysis.permutations` does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.permutations import (
    EXACT_LIMIT,
    Alternative,
    column_batches,
    group_permutations,
    pair_indices,
    permutation_p,
    relabelled_pairs,
)
from regbias.analysis.ranks import centred_correlation, spearman_rows, unit_ranks

_CHUNK = 4096
_DEGENERATE = 1e-9


def size_covariate(table: pd.DataFrame, group_sizes: Mapping[str, int]) -> np.ndarray:
    """``1/n_a + 1/n_b`` per row of ``table``; NaN where a size is unknown or not positive."""
    inverse = {g: 1.0 / n for g, n in group_sizes.items() if n and n > 0}
    a = table["group_a"].map(inverse).to_numpy(dtype=np.float64)
    return a + table["group_b"].map(inverse).to_numpy(dtype=np.float64)


def partial_mantel(
    table: pd.DataFrame,
    distance_columns: list[str],
    performance_columns: list[str],
    group_sizes: Mapping[str, int],
    *,
    relabellings: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
    alternative: Alternative = "two-sided",
) -> pd.DataFrame:
    """Spearman partial correlation of distance and performance given group size, with its p.

    The statistic is ``(r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2))`` on the ranks of
    distance x, performance y and the size covariate z (:func:`size_covariate`); its p is
    two-sided, or one-sided as ``alternative`` says (``benchmarks/primary_size_null.py``
    compares the one-sided test with the primary's check).

    Returns:
        One row per (distance, performance): ``partial_rho``, ``partial_p`` and ``size_rho``
        (Spearman's rho of the distance with the size covariate); NaN where fewer than 4
        pairs have all three values or a column is constant.
    """
    sizes = table.assign(size=size_covariate(table, group_sizes))
    sizes = sizes[sizes["size"].notna()]
    relabelling = (relabellings, seed, exact_limit)
    rows = {}
    for distance in distance_columns:
        for data, columns in column_batches(sizes, distance, performance_columns):
            data = data.assign(size=sizes.loc[data.index, "size"])
            stats = _partial_batch(data, distance, columns, relabelling, alternative)
            rows.update({(distance, c): s for c, s in zip(columns, stats, strict=True)})
    keys = [(d, p) for d in distance_columns for p in performance_columns]
    return pd.DataFrame([{"distance": d, "performance": p, **rows[(d, p)]} for d, p in keys])


def _partial_batch(
    data: pd.DataFrame,
    distance: str,
    columns: list[str],
    relabelling: tuple[int, int, int],
    alternative: Alternative = "two-sided",
) -> list[dict[str, float]]:
    """The partial test of ``distance`` with each column of ``columns`` (the same pairs)."""
    if len(data) < 4:
        return [dict.fromkeys(["partial_rho", "partial_p", "size_rho"], np.nan) for _ in columns]
    groups, a, b = pair_indices(data)
    x, z = (data[c].to_numpy(dtype=np.float64) for c in (distance, "size"))
    ys = data[columns].to_numpy(dtype=np.float64)
    if len(data) == len(groups) * (len(groups) - 1) // 2:
        inverse = relabelled_pairs(tuple(a), tuple(b), *relabelling, inverse=True)
        null = _partial_complete(x, z, ys, inverse)
    else:
        perms = group_permutations(len(groups), *relabelling)
        chunks = np.array_split(perms, max(1, math.ceil(len(perms) / _CHUNK)))
        null = np.empty((len(perms), len(columns)))
        for j in range(len(columns)):
            y_matrix = np.full((len(groups), len(groups)), np.nan)
            y_matrix[a, b] = y_matrix[b, a] = ys[:, j]
            null[:, j] = np.concatenate(
                [_partial_rows(x, z, y_matrix[c[:, a], c[:, b]]) for c in chunks]
            )
    size_rho = float(spearman_rows(x[None, :], z[None, :])[0])
    return [
        {
            "partial_rho": float(null[0, j]),
            "partial_p": permutation_p(null[:, j], alternative),
            "size_rho": size_rho,
        }
        for j in range(len(columns))
    ]


def _partial_complete(
    x: np.ndarray, z: np.ndarray, ys: np.ndarray, inverse: np.ndarray
) -> np.ndarray:
    """Every pair present: a relabelling only reorders y, so ranks are computed once.

    ``sum_e rx[e] ry[moved[e]] = sum_f rx[inverse[f]] ry[f]``: x and z are gathered once per
    permutation and multiplied with every performance column at once.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        rx, ry, rz = unit_ranks(x), unit_ranks(ys), unit_ranks(z)
        r_xy, r_yz, r_xz = rx[inverse] @ ry, rz[inverse] @ ry, float(rx @ rz)
        return _partial(r_xy, r_xz, r_yz)


def _partial(r_xy: np.ndarray, r_xz: np.ndarray | float, r_yz: np.ndarray) -> np.ndarray:
    """The partial correlation of x and y given z; NaN where z determines x or y (|r| = 1)."""
    scale = (1 - np.square(r_xz)) * (1 - np.square(r_yz))
    # Rounding leaves a tiny scale where z and x have the same ranks: no partial correlation.
    defined = scale > _DEGENERATE
    return np.where(defined, (r_xy - r_xz * r_yz) / np.sqrt(np.where(defined, scale, 1.0)), np.nan)


def _partial_rows(x: np.ndarray, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Partial Spearman of x and each row of y given z; a pair missing in a row is left out."""
    kept = np.isfinite(y)
    xs = np.where(kept, x[None, :], np.nan)
    zs = np.where(kept, z[None, :], np.nan)
    ranks = [_centred_nan(scipy_stats.rankdata(v, axis=1, nan_policy="omit")) for v in (xs, y, zs)]
    rx, ry, rz = ranks
    with np.errstate(invalid="ignore", divide="ignore"):
        r_xy, r_xz, r_yz = (centred_correlation(u, v) for u, v in ((rx, ry), (rx, rz), (ry, rz)))
        return _partial(r_xy, r_xz, r_yz)


def _centred_nan(ranks: np.ndarray) -> np.ndarray:
    return np.nan_to_num(ranks - np.nanmean(ranks, axis=1, keepdims=True))
