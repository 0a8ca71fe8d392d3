"""Correlations without some groups: leave one group out, and without baseline and mixed.

Leave one group out (LOGO: a correlation carried by one far-away group moves a lot), and
without ``baseline``, ``mixed`` and both (comparable groups only). Each analysis is Spearman's
rho with the Mantel p of :func:`regbias.analysis.correlation.table.correlations`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from regbias.analysis.correlation.result import RHO, RHO_P
from regbias.analysis.correlation.table import CORRELATION_KEYS, correlations
from regbias.analysis.permutations import (
    EXACT_LIMIT,
    column_batches,
    groups_in_order,
    pair_indices,
    permutation_p,
    relabelled_pairs,
)
from regbias.analysis.ranks import unit_ranks
from regbias.data.groups import BASELINE, MIXED

#: Groups of another kind than the regions: the training sample and the all-region mix.
SPECIAL_GROUPS = (BASELINE, MIXED)


def without_groups(
    table: pd.DataFrame,
    groups: Sequence[str],
    distance_columns: list[str],
    performance_columns: list[str],
    *,
    relabellings: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> pd.DataFrame:
    """Spearman's rho and its Mantel p on the pairs of ``table`` involving none of ``groups``.

    The p-value is that of :func:`regbias.analysis.correlation.table.correlations`, with its
    relabelling arguments; with every pair present, one matrix product per distance.

    Returns:
        One row per (distance, performance): ``distance, performance, n_pairs, spearman_rho,
        spearman_p_perm``.
    """
    kept = table[~(table["group_a"].isin(groups) | table["group_b"].isin(groups))]
    permutation = {"relabellings": relabellings, "seed": seed, "exact_limit": exact_limit}
    rows = {}
    for distance in distance_columns:
        for data, columns in column_batches(kept, distance, performance_columns):
            rows.update(_spearman_mantel(data, distance, columns, permutation))
    keys = [(d, p) for d in distance_columns for p in performance_columns]
    return pd.DataFrame([{"distance": d, "performance": p, **rows[(d, p)]} for d, p in keys])


def _spearman_mantel(
    data: pd.DataFrame, distance: str, columns: list[str], permutation: dict[str, int]
) -> dict[tuple[str, str], dict[str, float]]:
    groups, a, b = pair_indices(data)
    if len(data) < 3 or len(data) != len(groups) * (len(groups) - 1) // 2:
        found = correlations(data, [distance], columns, **permutation)  # few or missing pairs
    else:
        # The distance relabelled, as correlations() does: the same null, value for value.
        moved = relabelled_pairs(tuple(a), tuple(b), **permutation, inverse=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            rx = unit_ranks(data[distance].to_numpy(dtype=np.float64))
            ry = unit_ranks(data[columns].to_numpy(dtype=np.float64))
            null = rx[moved] @ ry
        found = pd.DataFrame(
            {
                "performance": columns,
                RHO: null[0],
                RHO_P: [permutation_p(null[:, j]) for j in range(len(columns))],
            }
        )
    return {
        (distance, row.performance): {
            "n_pairs": len(data),
            RHO: getattr(row, RHO),
            RHO_P: getattr(row, RHO_P),
        }
        for row in found.itertuples()
    }


def leave_one_group_out(
    table: pd.DataFrame,
    distance_columns: list[str],
    performance_columns: list[str],
    **permutation: int,
) -> pd.DataFrame:
    """One analysis per group, on the pairs without it (arguments: :func:`without_groups`).

    Returns:
        The stacked :func:`without_groups` tables, with the group in a first column
        ``left_out`` (K groups give K analyses).
    """
    found = []
    for group in groups_in_order(table):
        one = without_groups(table, [group], distance_columns, performance_columns, **permutation)
        found.append(one.assign(left_out=group))
    frame = pd.concat(found, ignore_index=True)
    return frame[["left_out", *frame.columns[:-1]]]


def logo_summary(found: pd.DataFrame, logo: pd.DataFrame, significance: float) -> pd.DataFrame:
    """Per correlation of ``found``: its ``logo`` rho range, and whether it holds at a level.

    Returns:
        One row per correlation: ``loo_rho_min, loo_rho_max, loo_most_influential`` (the
        group whose removal moves rho most), ``loo_rho_without_most_influential, loo_p_max``
        and ``survives_loo`` (rho keeps its sign and p stays below ``significance`` whichever
        group is left out).
    """
    keyed = found[[*CORRELATION_KEYS, RHO]]
    merged = logo.merge(keyed, on=CORRELATION_KEYS, suffixes=("", "_all"))
    merged["shift"] = (merged[RHO] - merged[f"{RHO}_all"]).abs()
    rows = []
    for (distance, performance), part in merged.groupby(CORRELATION_KEYS, sort=False):
        full = part[f"{RHO}_all"].iloc[0]
        finite = part.dropna(subset=["shift"])
        most = finite.loc[finite["shift"].idxmax()] if len(finite) else {}
        kept_sign = bool(len(part) and (np.sign(part[RHO]) == np.sign(full)).all())
        p_max = part[RHO_P].max(skipna=False)
        rows.append(
            {
                "distance": distance,
                "performance": performance,
                "loo_rho_min": part[RHO].min(skipna=False),
                "loo_rho_max": part[RHO].max(skipna=False),
                "loo_most_influential": most.get("left_out"),
                "loo_rho_without_most_influential": most.get(RHO, np.nan),
                "loo_p_max": p_max,
                "survives_loo": kept_sign and bool(p_max < significance),
            }
        )
    return pd.DataFrame(rows)


def special_group_columns(
    table: pd.DataFrame,
    distance_columns: list[str],
    performance_columns: list[str],
    **permutation: int,
) -> pd.DataFrame:
    """Spearman's rho and its p without baseline, without mixed and without both.

    The arguments are :func:`without_groups`'s (``**permutation``: its keyword arguments).

    Returns:
        One row per (distance, performance) with ``rho_without_<g>`` and ``p_without_<g>``
        for each of :data:`SPECIAL_GROUPS` and for both (``<g>`` joined by ``_``); NaN where
        a left-out group is not in the table.
    """
    present = set(groups_in_order(table))
    out = pd.DataFrame(
        [(d, p) for d in distance_columns for p in performance_columns], columns=CORRELATION_KEYS
    )
    variants = [[g] for g in SPECIAL_GROUPS] + [list(SPECIAL_GROUPS)]
    for dropped in variants:
        name = "_".join(dropped)
        out[f"rho_without_{name}"] = out[f"p_without_{name}"] = np.nan
        if not set(dropped) <= present:
            continue
        found = without_groups(table, dropped, distance_columns, performance_columns, **permutation)
        out[f"rho_without_{name}"] = found[RHO].to_numpy()
        out[f"p_without_{name}"] = found[RHO_P].to_numpy()
    return out
