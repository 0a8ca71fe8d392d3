"""Does a distance-performance correlation survive its own evidence? One row per correlation.

Four checks, each answering one objection to a rank correlation over group pairs:

- **Leave one group out** (LOGO): with K groups, K analyses on the pairs that do not involve
  the left-out group. A correlation carried by one far-away group moves a lot.
- **Without** ``baseline`` (a different kind of sample), ``mixed`` (contains every region)
  and without both: the correlation among comparable groups only.
- **Bootstrap interval** of rho and tau: every replicate resamples the models (with
  replacement, the same models for every metric; gaps and dcor recomputed) and each distance
  matrix's repetitions (their mean recomputed), so both sources of measurement noise reach
  the interval. Groups are fixed: LOGO speaks for the choice of groups.
- **Partial Mantel test** controlling for group size: Spearman's partial correlation of
  distance and performance given the size covariate ``1/n_a + 1/n_b`` of each pair. That is
  the mechanism: the finite-sample bias of a distance between two draws (energy distance,
  MMD, a debiased Sinkhorn divergence) is additive in the groups' ``1/n`` terms, so a pair of
  two small groups is as suspect as a small-large pair (a sum, not ``|log n_a - log n_b|``),
  and a pair's bias ranks by ``1/n_a + 1/n_b``, not by ``log n_a + log n_b`` (which ranks a
  100-and-20,000 pair below a 1,000-and-1,000 pair). The null relabels the groups of the
  performance matrix (rows and columns together), with the distance and size matrices fixed:
  the scheme of the Mantel tests of :mod:`regbias.analysis.permutations`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.pairs import DISTANCE_PREFIX, correlations
from regbias.analysis.permutations import (
    EXACT_LIMIT,
    PAIR_COLUMNS,
    column_batches,
    group_permutations,
    groups_in_order,
    permutation_p,
    relabelled_pairs,
)
from regbias.console import progress_bar
from regbias.data.groups import BASELINE, MIXED
from regbias.distances.matrix import DistanceMatrix

__all__ = [
    "SPECIAL_GROUPS",
    "bootstrap_intervals",
    "bootstrap_replicates",
    "leave_one_group_out",
    "partial_mantel",
    "robustness",
    "size_covariate",
    "weighted_dcor",
    "without_groups",
]

#: Groups of another kind than the regions: the training sample and the all-region mix.
SPECIAL_GROUPS = (BASELINE, MIXED)
_KEYS = ["distance", "performance"]
_CHUNK = 4096
_DEGENERATE = 1e-9
_SOURCE = {True: "repetitions", False: "models"}


# --------------------------------------------------------------------------- group removal


def without_groups(
    table: pd.DataFrame,
    groups: Sequence[str],
    distance_columns: list[str],
    performance_columns: list[str],
    *,
    n_permutations: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> pd.DataFrame:
    """Spearman's rho and its Mantel p on the pairs that involve none of ``groups``.

    The p-value is that of :func:`correlations` (the same relabellings); when every pair of
    the remaining groups is present it is computed as one matrix product per distance.

    Args:
        table: the pair table.
        groups: the groups left out.
        distance_columns: the distance columns.
        performance_columns: the performance columns.
        n_permutations: random relabellings when enumeration is too large.
        seed: their seed.
        exact_limit: the largest ``K!`` enumerated exactly.

    Returns:
        One row per (distance, performance): ``distance, performance, n_pairs, spearman_rho,
        spearman_p_perm``.
    """
    kept = table[~(table["group_a"].isin(groups) | table["group_b"].isin(groups))]
    rows = {}
    for distance in distance_columns:
        for data, columns in column_batches(kept, distance, performance_columns):
            permutation = (n_permutations, seed, exact_limit)
            rows.update(_spearman_mantel(data, distance, columns, permutation))
    keys = [(d, p) for d in distance_columns for p in performance_columns]
    return pd.DataFrame([{"distance": d, "performance": p, **rows[(d, p)]} for d, p in keys])


def _spearman_mantel(
    data: pd.DataFrame, distance: str, columns: list[str], permutation: tuple[int, int, int]
) -> dict[tuple[str, str], dict[str, float]]:
    groups = groups_in_order(data)
    if len(data) < 3 or len(data) != len(groups) * (len(groups) - 1) // 2:
        n_permutations, seed, exact_limit = permutation  # too few pairs, or some missing
        found = correlations(
            data,
            [distance],
            columns,
            n_permutations=n_permutations,
            seed=seed,
            exact_limit=exact_limit,
        )
    else:
        rank = {g: i for i, g in enumerate(groups)}
        a, b = (tuple(data[c].map(rank)) for c in PAIR_COLUMNS)
        # The distance relabelled, as correlations() does: the same null, value for value.
        moved = relabelled_pairs(a, b, *permutation, inverse=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            rx = _unit(scipy_stats.rankdata(data[distance].to_numpy(dtype=np.float64)))
            ry = _unit(scipy_stats.rankdata(data[columns].to_numpy(dtype=np.float64), axis=0))
            null = rx[moved] @ ry
        found = pd.DataFrame(
            {
                "performance": columns,
                "spearman_rho": null[0],
                "spearman_p_perm": [permutation_p(null[:, j]) for j in range(len(columns))],
            }
        )
    return {
        (distance, row.performance): {
            "n_pairs": len(data),
            "spearman_rho": row.spearman_rho,
            "spearman_p_perm": row.spearman_p_perm,
        }
        for row in found.itertuples()
    }


def leave_one_group_out(
    table: pd.DataFrame,
    distance_columns: list[str],
    performance_columns: list[str],
    **permutation: int,
) -> pd.DataFrame:
    """One analysis per group, on the pairs that do not involve it.

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


def _logo_summary(found: pd.DataFrame, logo: pd.DataFrame, significance: float) -> pd.DataFrame:
    """Per correlation: LOGO rho range, the group that moves rho most, and whether it holds."""
    merged = logo.merge(found[[*_KEYS, "spearman_rho"]], on=_KEYS, suffixes=("", "_all"))
    merged["shift"] = (merged["spearman_rho"] - merged["spearman_rho_all"]).abs()
    rows = []
    for (distance, performance), part in merged.groupby(_KEYS, sort=False):
        full = part["spearman_rho_all"].iloc[0]
        finite = part.dropna(subset=["shift"])
        most = finite.loc[finite["shift"].idxmax()] if len(finite) else None
        kept_sign = bool(len(part) and (np.sign(part["spearman_rho"]) == np.sign(full)).all())
        p_max = part["spearman_p_perm"].max(skipna=False)
        rows.append(
            {
                "distance": distance,
                "performance": performance,
                "loo_rho_min": part["spearman_rho"].min(skipna=False),
                "loo_rho_max": part["spearman_rho"].max(skipna=False),
                "loo_most_influential": None if most is None else most["left_out"],
                "loo_rho_without_most_influential": np.nan
                if most is None
                else most["spearman_rho"],
                "loo_p_max": p_max,
                "survives_loo": kept_sign and bool(p_max < significance),
            }
        )
    return pd.DataFrame(rows)


def _special_columns(
    table: pd.DataFrame,
    distance_columns: list[str],
    performance_columns: list[str],
    **permutation: int,
) -> pd.DataFrame:
    """``rho_without_<g>`` and ``p_without_<g>`` for baseline, mixed and both (NaN if absent)."""
    present = set(groups_in_order(table))
    out = pd.DataFrame(
        [(d, p) for d in distance_columns for p in performance_columns], columns=_KEYS
    )
    variants = [[g] for g in SPECIAL_GROUPS] + [list(SPECIAL_GROUPS)]
    for dropped in variants:
        name = "_".join(dropped)
        out[f"rho_without_{name}"] = out[f"p_without_{name}"] = np.nan
        if not set(dropped) <= present:
            continue
        found = without_groups(table, dropped, distance_columns, performance_columns, **permutation)
        out[f"rho_without_{name}"] = found["spearman_rho"].to_numpy()
        out[f"p_without_{name}"] = found["spearman_p_perm"].to_numpy()
    return out


# --------------------------------------------------------------------------- bootstrap


def bootstrap_replicates(
    table: pd.DataFrame,
    distances: Mapping[str, DistanceMatrix],
    per_model: pd.DataFrame | None,
    n_bootstrap: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Bootstrap replicates ``(B, n_rows)`` of the pair table's columns that have a noise source.

    Args:
        table: the pair table (its rows give the pairs, in order).
        distances: matrices by name; one with at least 2 per-repetition matrices gives the
            column ``dist_<name>``, each replicate the mean of R repetitions drawn with
            replacement (NaN entries, repetitions left out of a pair's mean, are skipped).
        per_model: the long performance table (``seed, fold, group, metric, value``); each
            replicate draws the models (``seed, fold``) with replacement, the same for every
            metric, and recomputes ``gap_<metric>`` and ``dcor_<metric>``.
        n_bootstrap: replicates B.
        seed: the generator's seed.

    Returns:
        Replicates by column; columns without a noise source (one repetition, one model, a
        metric with an undefined value) are absent and stay fixed at their value.
    """
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name, matrix in distances.items():
        column = f"{DISTANCE_PREFIX}{name}"
        stack = matrix.repetitions
        if column in table and stack is not None and len(stack) > 1:
            counts = rng.multinomial(len(stack), np.full(len(stack), 1 / len(stack)), n_bootstrap)
            flat = stack.reshape(len(stack), -1)
            finite = np.isfinite(flat)  # NaN: a repetition left out of that pair's mean
            with np.errstate(invalid="ignore", divide="ignore"):
                means = (counts @ np.where(finite, flat, 0.0)) / (counts @ finite)
            means = means.reshape(-1, *stack.shape[1:])
            out[column] = _pair_values(means, matrix.groups, table)
    if per_model is not None and len(per_model):
        out.update(_performance_replicates(per_model, table, n_bootstrap, rng))
    return out


def _pair_values(matrices: np.ndarray, groups: list[str], table: pd.DataFrame) -> np.ndarray:
    """``(B, n_rows)`` entries of ``(B, K, K)`` matrices at the table's pairs; NaN if unknown."""
    index = {g: i for i, g in enumerate(groups)}
    a = table["group_a"].map(index).to_numpy(dtype=np.float64)
    b = table["group_b"].map(index).to_numpy(dtype=np.float64)
    known = np.isfinite(a) & np.isfinite(b)
    out = np.full((len(matrices), len(table)), np.nan)
    ia, ib = a[known].astype(np.int64), b[known].astype(np.int64)
    out[:, known] = matrices[:, ia, ib]
    return out


def _performance_replicates(
    per_model: pd.DataFrame, table: pd.DataFrame, n_bootstrap: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    # One row per model (seed, fold), one column per (metric, group): the mean over draws.
    wide = per_model.pivot_table(
        index=["seed", "fold"], columns=["metric", "group"], values="value", aggfunc="mean"
    )
    n = len(wide)
    if n < 2:
        return {}
    weights = rng.multinomial(n, np.full(n, 1 / n), n_bootstrap).astype(np.float64)
    out = {}
    for metric in pd.unique(per_model["metric"]):
        values = wide[metric]
        groups = [str(g) for g in values.columns]
        matrix = values.to_numpy(dtype=np.float64)
        finite = np.isfinite(matrix)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (weights @ np.where(finite, matrix, 0.0)) / (weights @ finite)
        gaps = np.abs(means[:, :, None] - means[:, None, :])
        for prefix, replicates in (("gap_", gaps), ("dcor_", None)):
            column = f"{prefix}{metric}"
            if column not in table:
                continue
            if replicates is None:
                if not finite.all():
                    continue  # dcor drops models per pair there: not resampled, held fixed
                replicates = weighted_dcor(matrix, weights)
            out[column] = _pair_values(replicates, groups, table)
    return out


def weighted_dcor(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Distance correlation of every pair of columns, for each row of model weights.

    Integer weights (bootstrap counts) give the V-statistic dcor of the resampled models (a
    model drawn twice counts twice), as ``dcor.distance_correlation`` computes it.

    Args:
        values: ``(n_models, G)`` one metric's value per model and group.
        weights: ``(B, n_models)`` non-negative model weights.

    Returns:
        ``(B, G, G)`` dcor (not squared); NaN where a group's weighted values are constant.
    """
    n, g = values.shape
    a = np.abs(values.T[:, :, None] - values.T[:, None, :]).reshape(g, n * n)  # (G, n*n)
    total = weights.sum(axis=1)  # W
    # Double-centring is linear, so sum_ij w_i w_j A^g_ij a^h_ij expands to S - 2 W T + W^2 m m.
    row = np.einsum("bj,gij->bgi", weights, a.reshape(g, n, n)) / total[:, None, None]
    grand = np.einsum("bgi,bi->bg", row, weights) / total[:, None]
    pair_weights = (weights[:, :, None] * weights[:, None, :]).reshape(len(weights), n * n)
    products = (a[:, None, :] * a[None, :, :]).reshape(g * g, n * n)
    s = (pair_weights @ products.T).reshape(-1, g, g)
    t = np.einsum("bi,bgi,bhi->bgh", weights, row, row)
    w = total[:, None, None]
    dcov2 = (s - 2 * w * t) / w**2 + grand[:, :, None] * grand[:, None, :]
    dcov2 = np.maximum(dcov2, 0.0)  # rounding below zero where the true value is 0
    variance = np.diagonal(dcov2, axis1=1, axis2=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.sqrt(variance[:, :, None] * variance[:, None, :])
        return np.where(scale > 0, np.sqrt(dcov2 / scale), np.nan)


def bootstrap_intervals(
    table: pd.DataFrame,
    found: pd.DataFrame,
    replicates: Mapping[str, np.ndarray],
    confidence: float,
) -> pd.DataFrame:
    """Percentile intervals of Spearman's rho and Kendall's tau-b over bootstrap replicates.

    Args:
        table: the pair table the replicates were drawn for.
        found: the :func:`correlations` table (its ``distance, performance`` rows).
        replicates: :func:`bootstrap_replicates`; a column absent there is held at its value.
        confidence: the interval's level (0.95: the 2.5% and 97.5% quantiles).

    Returns:
        One row per correlation: ``spearman_ci_low, spearman_ci_high, kendall_ci_low,
        kendall_ci_high``, and ``bootstrap_sources`` (the resampled columns' kinds); NaN
        intervals where neither column was resampled.
    """
    quantiles = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = []
    pairs = found[_KEYS].itertuples(index=False)
    for distance, performance in progress_bar(pairs, total=len(found), desc="bootstrap intervals"):
        kept = table[[distance, performance]].notna().all(axis=1).to_numpy()
        sources = [_SOURCE[c.startswith(DISTANCE_PREFIX)] for c in (distance, performance)]
        sources = [
            k for k, c in zip(sources, (distance, performance), strict=True) if c in replicates
        ]
        row = {"distance": distance, "performance": performance}
        row["bootstrap_sources"] = "+".join(sources)
        x, y = (_replicates_of(table, c, replicates, kept) for c in (distance, performance))
        for name, statistic in (("spearman", _spearman_rows), ("kendall", _kendall_rows)):
            low = high = np.nan
            if sources and kept.sum() >= 3:
                values = statistic(x, y)
                if np.isfinite(values).any():
                    low, high = np.nanquantile(values, quantiles)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = low, high
        rows.append(row)
    return pd.DataFrame(rows)


def _replicates_of(
    table: pd.DataFrame, column: str, replicates: Mapping[str, np.ndarray], kept: np.ndarray
) -> np.ndarray:
    if column in replicates:
        return replicates[column][:, kept]
    return table[column].to_numpy(dtype=np.float64)[kept][None, :]


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``x`` with the same row of ``y`` (rows broadcast)."""
    rx = _centred(scipy_stats.rankdata(x, axis=1))
    ry = _centred(scipy_stats.rankdata(y, axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))


def _centred(ranks: np.ndarray) -> np.ndarray:
    return ranks - ranks.mean(axis=1, keepdims=True)


def _kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``x`` with the same row of ``y`` (rows broadcast)."""
    first, second = np.triu_indices(x.shape[1], 1)
    sx = np.sign(x[:, first] - x[:, second])
    sy = np.sign(y[:, first] - y[:, second])
    with np.errstate(invalid="ignore", divide="ignore"):
        untied = np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1)
        return (sx * sy).sum(axis=1) / np.sqrt(untied)


# --------------------------------------------------------------------------- partial Mantel


def size_covariate(table: pd.DataFrame, group_sizes: Mapping[str, int]) -> np.ndarray:
    """``1/n_a + 1/n_b`` per pair, the shape of a two-sample distance's finite-sample bias.

    Args:
        table: the pair table.
        group_sizes: texts per group.

    Returns:
        One value per row of ``table``; NaN where a size is unknown or not positive.
    """
    inverse = {g: 1.0 / n for g, n in group_sizes.items() if n and n > 0}
    a = table["group_a"].map(inverse).to_numpy(dtype=np.float64)
    return a + table["group_b"].map(inverse).to_numpy(dtype=np.float64)


def partial_mantel(
    table: pd.DataFrame,
    distance_columns: list[str],
    performance_columns: list[str],
    group_sizes: Mapping[str, int],
    *,
    n_permutations: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> pd.DataFrame:
    """Spearman partial correlation of distance and performance given group size, with its p.

    The statistic is ``(r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2))`` on the ranks of
    distance x, performance y and the size covariate z (:func:`size_covariate`) over the pairs.
    Its two-sided p relabels the groups of the performance matrix, as the Mantel tests of
    :func:`correlations` do (all ``K!`` relabellings when ``K! <= exact_limit``).

    Returns:
        One row per (distance, performance): ``partial_rho``, ``partial_p`` and ``size_rho``
        (Spearman's rho of the distance with the size covariate); NaN where fewer than 4
        pairs have all three values or a column is constant.
    """
    sizes = table.assign(size=size_covariate(table, group_sizes))
    sizes = sizes[sizes["size"].notna()]
    rows = {}
    for distance in distance_columns:
        for data, columns in column_batches(sizes, distance, performance_columns):
            data = data.assign(size=sizes.loc[data.index, "size"])
            stats = _partial_batch(data, distance, columns, n_permutations, seed, exact_limit)
            rows.update({(distance, c): s for c, s in zip(columns, stats, strict=True)})
    keys = [(d, p) for d in distance_columns for p in performance_columns]
    return pd.DataFrame([{"distance": d, "performance": p, **rows[(d, p)]} for d, p in keys])


def _partial_batch(
    data: pd.DataFrame,
    distance: str,
    columns: list[str],
    n_permutations: int,
    seed: int,
    exact_limit: int,
) -> list[dict[str, float]]:
    """The partial test of ``distance`` with each column of ``columns`` (the same pairs)."""
    if len(data) < 4:
        return [dict.fromkeys(["partial_rho", "partial_p", "size_rho"], np.nan) for _ in columns]
    groups = groups_in_order(data)
    rank = {g: i for i, g in enumerate(groups)}
    a = data["group_a"].map(rank).to_numpy(dtype=np.int64)
    b = data["group_b"].map(rank).to_numpy(dtype=np.int64)
    x, z = (data[c].to_numpy(dtype=np.float64) for c in (distance, "size"))
    ys = data[columns].to_numpy(dtype=np.float64)
    if len(data) == len(groups) * (len(groups) - 1) // 2:
        permutation = (n_permutations, seed, exact_limit)
        inverse = relabelled_pairs(tuple(a), tuple(b), *permutation, inverse=True)
        null = _partial_complete(x, z, ys, inverse)
    else:
        perms = group_permutations(len(groups), n_permutations, seed, exact_limit)
        chunks = np.array_split(perms, max(1, math.ceil(len(perms) / _CHUNK)))
        null = np.empty((len(perms), len(columns)))
        for j in range(len(columns)):
            y_matrix = np.full((len(groups), len(groups)), np.nan)
            y_matrix[a, b] = y_matrix[b, a] = ys[:, j]
            null[:, j] = np.concatenate(
                [_partial_rows(x, z, y_matrix[c[:, a], c[:, b]]) for c in chunks]
            )
    size_rho = float(_spearman_rows(x[None, :], z[None, :])[0])
    return [
        {
            "partial_rho": float(null[0, j]),
            "partial_p": permutation_p(null[:, j]),
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
        rx, rz = (_unit(scipy_stats.rankdata(v)) for v in (x, z))
        ry = _unit(scipy_stats.rankdata(ys, axis=0))
        r_xy, r_yz, r_xz = rx[inverse] @ ry, rz[inverse] @ ry, float(rx @ rz)
        return _partial(r_xy, r_xz, r_yz)


def _partial(r_xy: np.ndarray, r_xz: np.ndarray | float, r_yz: np.ndarray) -> np.ndarray:
    """The partial correlation of x and y given z; NaN where z determines x or y (|r| = 1)."""
    scale = (1 - np.square(r_xz)) * (1 - np.square(r_yz))
    # Rounding leaves a tiny scale where z and x have the same ranks: no partial correlation.
    defined = scale > _DEGENERATE
    return np.where(defined, (r_xy - r_xz * r_yz) / np.sqrt(np.where(defined, scale, 1.0)), np.nan)


def _unit(ranks: np.ndarray) -> np.ndarray:
    """Centred ranks (per column) scaled to unit length: dot products are then correlations."""
    centred = ranks - ranks.mean(axis=0)
    return centred / np.sqrt((centred**2).sum(axis=0))


def _partial_rows(x: np.ndarray, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Partial Spearman of x and each row of y given z; a pair missing in a row is left out."""
    kept = np.isfinite(y)
    xs = np.where(kept, x[None, :], np.nan)
    zs = np.where(kept, z[None, :], np.nan)
    ranks = [_centred_nan(scipy_stats.rankdata(v, axis=1, nan_policy="omit")) for v in (xs, y, zs)]
    rx, ry, rz = ranks
    with np.errstate(invalid="ignore", divide="ignore"):
        r_xy, r_xz, r_yz = (_nan_corr(u, v) for u, v in ((rx, ry), (rx, rz), (ry, rz)))
        return _partial(r_xy, r_xz, r_yz)


def _centred_nan(ranks: np.ndarray) -> np.ndarray:
    return np.nan_to_num(ranks - np.nanmean(ranks, axis=1, keepdims=True))


def _nan_corr(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (u * v).sum(axis=1) / np.sqrt((u**2).sum(axis=1) * (v**2).sum(axis=1))


# --------------------------------------------------------------------------- all together


def robustness(
    table: pd.DataFrame,
    found: pd.DataFrame,
    *,
    distances: Mapping[str, DistanceMatrix] | None = None,
    per_model: pd.DataFrame | None = None,
    group_sizes: Mapping[str, int] | None = None,
    n_bootstrap: int = 999,
    confidence: float = 0.95,
    significance: float = 0.05,
    n_permutations: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> pd.DataFrame:
    """Every check of the module docstring for each row of a correlation table.

    Args:
        table: the pair table the correlations were computed on.
        found: the :func:`correlations` table.
        distances: the distance matrices (their repetitions feed the bootstrap).
        per_model: the long performance table (its models feed the bootstrap).
        group_sizes: texts per group (the partial Mantel covariate); None skips that test.
        n_bootstrap: bootstrap replicates; 0 gives no intervals.
        confidence: the interval level.
        significance: the level ``survives_loo`` asks of every leave-one-group-out p.
        n_permutations: random relabellings when enumeration is too large.
        seed: seed of the permutations and the bootstrap.
        exact_limit: the largest ``K!`` enumerated exactly.

    Returns:
        One row per correlation, in the order of ``found``: ``distance, performance,
        spearman_rho, kendall_tau``, the LOGO summary (``loo_rho_min, loo_rho_max,
        loo_most_influential, loo_rho_without_most_influential, loo_p_max, survives_loo``),
        ``rho_without_*``/``p_without_*`` for baseline, mixed and both, the bootstrap
        intervals and ``bootstrap_sources``, and ``partial_rho, partial_p, size_rho``.
    """
    distance_columns = list(dict.fromkeys(found["distance"]))
    performance_columns = list(dict.fromkeys(found["performance"]))
    columns = (distance_columns, performance_columns)
    permutation = {"n_permutations": n_permutations, "seed": seed, "exact_limit": exact_limit}
    out = found[[*_KEYS, "spearman_rho", "kendall_tau"]].copy()
    logo = leave_one_group_out(table, *columns, **permutation)
    parts = [
        _logo_summary(found, logo, significance),
        _special_columns(table, *columns, **permutation),
    ]
    replicates = {}
    if n_bootstrap > 0:
        replicates = bootstrap_replicates(table, distances or {}, per_model, n_bootstrap, seed)
    parts.append(bootstrap_intervals(table, found, replicates, confidence))
    if group_sizes:
        parts.append(partial_mantel(table, *columns, group_sizes, **permutation))
    for part in parts:
        out = out.merge(part, on=_KEYS, how="left")
    for column in ("partial_rho", "partial_p", "size_rho"):
        if column not in out:
            out[column] = np.nan
    return out
