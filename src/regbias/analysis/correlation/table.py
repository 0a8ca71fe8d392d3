"""Rank correlations of every distance column with every performance column of a pair table.

The p-values are Mantel-style (:mod:`regbias.analysis.permutations`). scipy's asymptotic
p-values (``spearman_p``, ``kendall_p``) are kept for comparison only: they assume independent
pairs, which pairs sharing groups are not, and nothing downstream uses them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.correlation.result import RHO, TAU
from regbias.analysis.multiplicity import add_adjusted_p, add_maxt_p
from regbias.analysis.pair_table import PairTable
from regbias.analysis.permutations import (
    EXACT_LIMIT,
    PAIR_COLUMNS,
    column_batches,
    group_permutations,
    pair_indices,
    permutation_p,
    rank_correlation_null,
)
from regbias.errors import ConfigError, DataError

#: The columns that name a row of a correlation table: one distance, one performance column.
CORRELATION_KEYS = ["distance", "performance"]


def correlations(
    table: pd.DataFrame | PairTable,
    distance_columns: list[str] | None = None,
    performance_columns: list[str] | None = None,
    *,
    relabellings: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> pd.DataFrame:
    """Spearman and Kendall correlations of every distance column with every performance column.

    Rows with NaN in either column are dropped per column pair; the p-values are two-sided
    Mantel p (:func:`regbias.analysis.permutations.rank_correlation_null`: ``relabellings``
    seeded relabellings where ``K!`` exceeds ``exact_limit``). Every row is a secondary test,
    and the rows are adjusted together. The columns default to a ``PairTable``'s own lists, or
    every ``dist_*`` and every ``gap_*``/``dcor_*`` column.

    Returns:
        One row per (distance, performance): ``distance, performance, n_pairs,
        n_pairs_left_out, spearman_rho, spearman_p, spearman_p_perm, kendall_tau, kendall_p,
        kendall_p_perm, n_groups, exact``, the :func:`~regbias.analysis.multiplicity.add_adjusted_p`
        and :func:`~regbias.analysis.multiplicity.add_maxt_p` columns. Statistics are NaN
        where a column is constant or fewer than 3 pairs remain (no test, not adjusted).

    Raises:
        DataError: a named column is missing from the table.
        ConfigError: no columns to correlate, or ``relabellings < 1``.
    """
    frame, distance_columns, performance_columns = _resolve_columns(
        table, distance_columns, performance_columns
    )
    if relabellings < 1:
        raise ConfigError(f"relabellings must be at least 1, got {relabellings}.")
    found: dict[tuple[str, str], _Correlation] = {}
    relabelling = (relabellings, seed, exact_limit)
    for distance in distance_columns:
        for data, columns in column_batches(frame, distance, performance_columns):
            batch = _correlate_batch(data, distance, columns, relabelling)
            for correlation in batch.values():  # pairs whose value is undefined (NaN)
                correlation.row["n_pairs_left_out"] = len(frame) - len(data)
            found.update(batch)
    ordered = [found[(d, p)] for d in distance_columns for p in performance_columns]
    adjusted = add_adjusted_p(pd.DataFrame([c.row for c in ordered], columns=_RESULT_COLUMNS))
    nulls = {
        "spearman": [c.spearman_null for c in ordered],
        "kendall": [c.kendall_null for c in ordered],
    }
    return add_maxt_p(adjusted, nulls, [c.pairs for c in ordered])


@dataclass(frozen=True)
class _Correlation:
    """One row of the table with its nulls (None: too few pairs) and the pairs it used."""

    row: dict[str, object]
    spearman_null: np.ndarray | None
    kendall_null: np.ndarray | None
    pairs: tuple[object, ...]


_RESULT_COLUMNS = [
    "distance",
    "performance",
    "n_pairs",
    "n_pairs_left_out",
    RHO,
    "spearman_p",
    "spearman_p_perm",
    TAU,
    "kendall_p",
    "kendall_p_perm",
    "n_groups",
    "exact",
]


def _resolve_columns(
    table: pd.DataFrame | PairTable,
    distance_columns: list[str] | None,
    performance_columns: list[str] | None,
) -> tuple[pd.DataFrame, list[str], list[str]]:
    pairs = table if isinstance(table, PairTable) else PairTable.of(table)
    frame = pairs.frame
    distance_columns = distance_columns or pairs.distance_columns
    performance_columns = performance_columns or pairs.performance_columns
    needed = [*PAIR_COLUMNS, *distance_columns, *performance_columns]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DataError(f"the pair table lacks column(s) {missing}; it has {list(frame.columns)}.")
    if not distance_columns or not performance_columns:
        raise ConfigError(
            "no distance or no performance columns to correlate; name them explicitly "
            f"(the table has {list(frame.columns)})."
        )
    return frame, list(dict.fromkeys(distance_columns)), list(dict.fromkeys(performance_columns))


def _correlate_batch(
    data: pd.DataFrame, distance: str, columns: list[str], relabelling: tuple[int, int, int]
) -> dict[tuple[str, str], _Correlation]:
    exact_limit = relabelling[2]
    x = data[distance].to_numpy(dtype=np.float64)
    ys = data[columns].to_numpy(dtype=np.float64)
    groups, index_a, index_b = pair_indices(data)
    rho = tau = None
    if len(data) >= 3:
        perms = group_permutations(len(groups), *relabelling)
        null = rank_correlation_null(x, ys, index_a, index_b, perms)
        rho, tau = null.spearman, null.kendall
    found = {}
    for j, performance in enumerate(columns):
        row = {
            "distance": distance,
            "performance": performance,
            "n_pairs": len(data),
            **_asymptotic(x, ys[:, j]),
            "spearman_p_perm": np.nan if rho is None else permutation_p(rho[:, j]),
            "kendall_p_perm": np.nan if tau is None else permutation_p(tau[:, j]),
            "n_groups": len(groups),
            "exact": math.factorial(len(groups)) <= exact_limit,
        }
        found[(distance, performance)] = _Correlation(
            row,
            None if rho is None else rho[:, j],
            None if tau is None else tau[:, j],
            tuple(data.index),
        )
    return found


def _asymptotic(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The rho, tau and asymptotic p of scipy, which assume independent pairs (see module)."""
    if len(x) < 3:
        return dict.fromkeys([RHO, "spearman_p", TAU, "kendall_p"], np.nan)
    with warnings.catch_warnings():
        # A constant column has no rank correlation; NaN in the result says so.
        warnings.simplefilter("ignore")
        spearman = scipy_stats.spearmanr(x, y)
        kendall = scipy_stats.kendalltau(x, y)
    return {
        RHO: float(spearman.statistic),
        "spearman_p": float(spearman.pvalue),
        TAU: float(kendall.statistic),
        "kendall_p": float(kendall.pvalue),
    }
