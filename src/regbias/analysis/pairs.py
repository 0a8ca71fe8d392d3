"""Pairwise tables of group distances and performance, and their rank correlations.

Each row of a pair table is one unordered pair of groups. The rows are not independent (every
group appears in K-1 pairs), so besides the asymptotic p-values of ``scipy.stats`` the
correlations carry Mantel-style permutation p-values: the group labels of the performance
matrix are permuted (rows and columns together) and the statistic is recomputed on the pairs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.multiplicity import add_adjusted_p, add_maxt_p
from regbias.analysis.permutations import (
    EXACT_LIMIT,
    PAIR_COLUMNS,
    column_batches,
    group_permutations,
    groups_in_order,
    permutation_p,
    rank_correlation_null,
)
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, DataError, RegbiasError
from regbias.tables import read_table

__all__ = [
    "DISTANCE_PREFIX",
    "EXACT_LIMIT",
    "PERFORMANCE_PREFIXES",
    "PairTable",
    "correlations",
    "pairwise_table",
    "read_pairwise_csv",
    "strongest",
]

DISTANCE_PREFIX = "dist_"
PERFORMANCE_PREFIXES = ("gap_", "dcor_")
#: Fewer groups than this allow no meaningful rank test over their pairs.
MIN_GROUPS = 4


@dataclass(frozen=True)
class PairTable:
    """One row per unordered pair of groups, with the columns to correlate.

    Attributes:
        frame: columns ``group_a``, ``group_b``, then numeric distance and performance columns.
        distance_columns: the columns holding distances between groups (``dist_*``).
        performance_columns: the columns holding performance gaps or dependence (``gap_*``,
            ``dcor_*``).
    """

    frame: pd.DataFrame
    distance_columns: list[str] = field(default_factory=list)
    performance_columns: list[str] = field(default_factory=list)

    @property
    def groups(self) -> list[str]:
        """The groups named in the table, in order of first appearance."""
        return groups_in_order(self.frame)

    @classmethod
    def of(cls, frame: pd.DataFrame) -> PairTable:
        """A pair table whose columns are classified by the study's prefixes (``dist_``,
        ``gap_``, ``dcor_``); other columns (excess, p above noise) ride along.
        """
        return cls(
            frame,
            [c for c in frame.columns if str(c).startswith(DISTANCE_PREFIX)],
            [c for c in frame.columns if str(c).startswith(PERFORMANCE_PREFIXES)],
        )


# --------------------------------------------------------------------------- pair tables


def pairwise_table(
    distances: dict[str, DistanceMatrix],
    gaps: pd.DataFrame | None = None,
    dcor: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Join distance matrices and long performance tables into one row per group pair.

    Pairs are matched regardless of order. Groups present in only some inputs are kept: the
    table is the union of all pairs, with NaN where an input has no value (the correlations
    drop such rows per column pair).

    Args:
        distances: distance matrices by name; each gives a column ``dist_<name>`` (the mean).
        gaps: long table with columns ``group_a, group_b, metric, gap``; each metric gives a
            column ``gap_<metric>``.
        dcor: long table with columns ``group_a, group_b, metric, dcor``; each metric gives a
            column ``dcor_<metric>``.

    Returns:
        Columns ``group_a, group_b``, the ``dist_*`` columns, the ``gap_*`` columns, the
        ``dcor_*`` columns; rows ordered by the groups' first appearance.

    Raises:
        DataError: a long table lacks a column, or holds the same pair and metric twice.
    """
    columns: dict[str, dict[tuple[str, str], float]] = {}
    for name, matrix in distances.items():
        columns[f"{DISTANCE_PREFIX}{name}"] = _matrix_pairs(matrix)
    for long, value, prefix in ((gaps, "gap", "gap_"), (dcor, "dcor", "dcor_")):
        if long is not None:
            columns.update(_long_pairs(long, value, prefix))
    order = _group_order(distances, [gaps, dcor])
    rank = {group: i for i, group in enumerate(order)}
    keys = sorted(
        {_ordered(pair, rank) for values in columns.values() for pair in values},
        key=lambda pair: (rank[pair[0]], rank[pair[1]]),
    )
    frame = pd.DataFrame(keys, columns=PAIR_COLUMNS, dtype=object)
    columns.update(_noise_columns(distances))
    for column, values in columns.items():
        by_key = {_ordered(pair, rank): v for pair, v in values.items()}
        frame[column] = np.array([by_key.get(key, np.nan) for key in keys], dtype=np.float64)
    return frame


def _noise_columns(
    distances: dict[str, DistanceMatrix],
) -> dict[str, dict[tuple[str, str], float]]:
    """``excess_dist_<name>`` (distance above the mean floor) and ``p_above_noise_dist_<name>``."""
    columns: dict[str, dict[tuple[str, str], float]] = {}
    for name, matrix in distances.items():
        for label, values in (("excess", matrix.excess()), ("p_above_noise", matrix.p_above_noise)):
            if values is None:
                continue
            k = len(matrix.groups)
            columns[f"{label}_{DISTANCE_PREFIX}{name}"] = {
                (matrix.groups[i], matrix.groups[j]): float(values[i, j])
                for i in range(k)
                for j in range(i + 1, k)
            }
    return columns


def _matrix_pairs(matrix: DistanceMatrix) -> dict[tuple[str, str], float]:
    pairs = matrix.pairs()
    return {
        (a, b): float(v)
        for a, b, v in zip(pairs.group_a, pairs.group_b, pairs["mean"], strict=True)
    }


def _long_pairs(
    long: pd.DataFrame, value: str, prefix: str
) -> dict[str, dict[tuple[str, str], float]]:
    needed = [*PAIR_COLUMNS, "metric", value]
    missing = [c for c in needed if c not in long.columns]
    if missing:
        raise DataError(
            f"the {value} table lacks column(s) {missing}; it has {list(long.columns)}. "
            f"Give a long table with columns {needed}."
        )
    out: dict[str, dict[tuple[str, str], float]] = {}
    for a, b, metric, v in long[needed].itertuples(index=False):
        column = out.setdefault(f"{prefix}{metric}", {})
        key = tuple(sorted((str(a), str(b))))
        if key in column:
            raise DataError(
                f"the {value} table holds the pair {a}-{b} twice for metric {metric!r}; "
                "keep one row per pair and metric."
            )
        column[key] = float(v)
    return out


def _group_order(
    distances: dict[str, DistanceMatrix], longs: list[pd.DataFrame | None]
) -> list[str]:
    names: list[str] = []
    for matrix in distances.values():
        names.extend(matrix.groups)
    for long in longs:
        if long is not None:
            names.extend(long[PAIR_COLUMNS].astype(str).to_numpy().ravel().tolist())
    return list(dict.fromkeys(names))


def _ordered(pair: tuple[str, str], rank: dict[str, int]) -> tuple[str, str]:
    a, b = pair
    return (a, b) if rank[a] <= rank[b] else (b, a)


def read_pairwise_csv(
    path: Path | str,
    distances: list[str] | None = None,
    performance: list[str] | None = None,
    exclude_groups: Iterable[str] = (),
    exclude_pairs: Iterable[str | tuple[str, str]] = (),
) -> PairTable:
    """Read and validate a user's pair table for re-analysis.

    Args:
        path: CSV file with columns ``group_a``, ``group_b`` and numeric value columns.
        distances: the distance columns; by default every ``dist_*`` column.
        performance: the performance columns; by default every ``gap_*`` and ``dcor_*`` column.
        exclude_groups: groups whose pairs are left out.
        exclude_pairs: pairs left out, as ``"nz-za"`` (either order) or ``("nz", "za")``.

    Returns:
        The validated table, restricted to the pair columns and the named value columns.

    Raises:
        DataError: the file is missing or malformed (missing or non-numeric columns,
            duplicate or self pairs).
        ConfigError: an excluded group or pair is not in the table.
        RegbiasError: fewer than 4 groups remain.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"pair table {path} not found; give the path of a CSV file.")
    try:
        frame = read_table(path, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise DataError(f"pair table {path} is not a readable CSV file: {error}") from None
    frame = _stripped_names(frame)
    _require_columns(frame, PAIR_COLUMNS, path)
    distances = _default_columns(frame, distances, (DISTANCE_PREFIX,), "distance", path)
    performance = _default_columns(frame, performance, PERFORMANCE_PREFIXES, "performance", path)
    _require_columns(frame, [*distances, *performance], path)
    frame = frame[[*PAIR_COLUMNS, *dict.fromkeys([*distances, *performance])]].copy()
    for column in [*distances, *performance]:
        frame[column] = _numeric_column(frame[column], column, path)
    _check_pairs(frame, path)
    frame = _exclude(frame, list(exclude_groups), list(exclude_pairs))
    n_groups = len(groups_in_order(frame))
    if n_groups < MIN_GROUPS:
        raise RegbiasError(
            f"{path}: fewer than {MIN_GROUPS} groups: no meaningful rank test "
            f"({n_groups} left after exclusions); include more groups."
        )
    return PairTable(frame.reset_index(drop=True), list(distances), list(performance))


def _stripped_names(frame: pd.DataFrame) -> pd.DataFrame:
    """Spaces around a column or group name are layout (``a, b``), not part of the name."""
    frame = frame.rename(columns=lambda c: str(c).strip())
    for column in PAIR_COLUMNS:
        if column in frame:
            frame[column] = frame[column].str.strip()
    return frame


def _require_columns(frame: pd.DataFrame, names: list[str], path: Path) -> None:
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {missing}; the file has {list(frame.columns)}.")


def _default_columns(
    frame: pd.DataFrame,
    names: list[str] | None,
    prefixes: tuple[str, ...],
    kind: str,
    path: Path,
) -> list[str]:
    if names is not None:
        return list(names)
    found = [c for c in frame.columns if str(c).startswith(prefixes)]
    if not found:
        raise DataError(
            f"{path}: no {kind} columns (names starting with {list(prefixes)}); the file has "
            f"{list(frame.columns)}. Name the {kind} columns explicitly."
        )
    return found


def _numeric_column(values: pd.Series, column: str, path: Path) -> pd.Series:
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() & values.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            f"{path}: column {column!r} is not numeric: row {row + 1} (file line {row + 2}) "
            f"holds {values.iloc[row]!r}. Leave a cell empty for a missing value."
        )
    infinite = np.isinf(numbers.to_numpy(dtype=np.float64))
    if infinite.any():
        row = int(np.flatnonzero(infinite)[0])
        raise DataError(
            f"{path}: column {column!r} holds an infinite value in row {row + 1} (file line "
            f"{row + 2}): {values.iloc[row]!r}. Rank tests need finite values; leave the cell "
            "empty for a missing value."
        )
    return numbers.astype(np.float64)


def _check_pairs(frame: pd.DataFrame, path: Path) -> None:
    if frame[PAIR_COLUMNS].isna().any().any():
        row = int(np.flatnonzero(frame[PAIR_COLUMNS].isna().any(axis=1).to_numpy())[0])
        raise DataError(f"{path}: row {row + 1} has no group name; fill group_a and group_b.")
    seen: set[frozenset[str]] = set()
    for row, (a, b) in enumerate(frame[PAIR_COLUMNS].itertuples(index=False)):
        if a == b:
            raise DataError(f"{path}: row {row + 1} pairs group {a!r} with itself; remove it.")
        key = frozenset((a, b))
        if key in seen:
            raise DataError(
                f"{path}: the pair {a}-{b} appears twice (row {row + 1}); "
                "pairs are unordered, keep one row per pair."
            )
        seen.add(key)


def _exclude(
    frame: pd.DataFrame, groups: list[str], pairs: list[str | tuple[str, str]]
) -> pd.DataFrame:
    known = groups_in_order(frame)
    unknown = [g for g in groups if g not in known]
    if unknown:
        raise ConfigError(f"exclude_groups names {unknown}, not in the table; groups: {known}.")
    keys = {frozenset(_parse_pair(pair, known)) for pair in pairs}
    table_keys = [frozenset(p) for p in frame[PAIR_COLUMNS].itertuples(index=False)]
    absent = [sorted(k) for k in keys if k not in table_keys]
    if absent:
        raise ConfigError(f"exclude_pairs names {absent}, not pairs of the table.")
    keep = [
        not (key & set(groups)) and key not in keys
        for key in table_keys  # a pair is dropped when either group is excluded
    ]
    return frame[np.array(keep, dtype=bool)]


def _parse_pair(pair: str | tuple[str, str], known: list[str]) -> tuple[str, str]:
    if isinstance(pair, str):
        # Split at the hyphen that yields two known groups, so names may contain hyphens.
        for i, char in enumerate(pair):
            if char == "-" and pair[:i] in known and pair[i + 1 :] in known:
                return pair[:i], pair[i + 1 :]
        raise ConfigError(
            f"exclude_pairs entry {pair!r} is not 'groupA-groupB' with known groups {known}."
        )
    a, b = pair
    if a not in known or b not in known:
        raise ConfigError(f"exclude_pairs entry {pair!r} names a group not in {known}.")
    return a, b


# --------------------------------------------------------------------------- correlations


def correlations(
    table: pd.DataFrame | PairTable,
    distance_columns: list[str] | None = None,
    performance_columns: list[str] | None = None,
    *,
    n_permutations: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> pd.DataFrame:
    """Spearman and Kendall correlations of every distance column with every performance column.

    Rows with NaN in either column are dropped per column pair. Permutation p-values are
    Mantel-style and two-sided: the groups of one matrix are relabelled (rows and columns
    together) and the statistic recomputed on the pairs. When the K groups allow
    ``K! <= exact_limit`` permutations all are enumerated (identity included) and
    ``p = #{|s*| >= |s|} / K!``; otherwise ``n_permutations`` seeded random ones give
    ``p = (1 + #{|s*| >= |s|}) / (1 + n_permutations)``. When pairs are missing, a pair whose
    relabelled partner is missing is left out of that permutation's statistic; a relabelling
    that leaves no correlation (a constant column) counts as at least as extreme.

    Every row is a secondary test (the declared primary hypothesis is tested alone, on the
    regions only: :mod:`regbias.analysis.primary`): the rows are adjusted together.

    Args:
        table: the pair table (a ``PairTable`` supplies its own column lists).
        distance_columns: defaults to the ``PairTable``'s or to every ``dist_*`` column.
        performance_columns: defaults to the ``PairTable``'s or every ``gap_*``/``dcor_*``.
        n_permutations: random permutations when enumeration is too large.
        seed: seed of the random permutations (the same for every column pair).
        exact_limit: the largest ``K!`` enumerated exactly.

    Returns:
        One row per (distance, performance): ``distance, performance, n_pairs,
        n_pairs_left_out`` (pairs whose distance or performance is undefined), ``spearman_rho,
        spearman_p, spearman_p_perm, kendall_tau, kendall_p, kendall_p_perm, n_groups,
        exact``, then the permutation p-values adjusted over all rows, per statistic:
        ``spearman_p_holm, spearman_p_bh, kendall_p_holm, kendall_p_bh``, then the
        Westfall-Young step-down maxT p-values over the relabellings the rows share,
        ``spearman_p_maxt, kendall_p_maxt``, and ``maxt_method`` (``maxt``, or where missing
        values give rows other pairs ``maxt_split``/``holm_fallback``: see
        :data:`regbias.analysis.multiplicity.MAXT_METHODS`). Statistics are NaN where a
        column is constant or fewer than 3 pairs remain; their p-values are left out of the
        adjustment.

    Raises:
        DataError: a named column is missing from the table.
        ConfigError: no columns to correlate, or ``n_permutations < 1``.
    """
    frame, distance_columns, performance_columns = _resolve_columns(
        table, distance_columns, performance_columns
    )
    if n_permutations < 1:
        raise ConfigError(f"n_permutations must be at least 1, got {n_permutations}.")
    found: dict[tuple[str, str], _Correlation] = {}
    for distance in distance_columns:
        for data, columns in column_batches(frame, distance, performance_columns):
            batch = _correlate_batch(data, distance, columns, n_permutations, seed, exact_limit)
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
    "spearman_rho",
    "spearman_p",
    "spearman_p_perm",
    "kendall_tau",
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
    data: pd.DataFrame,
    distance: str,
    columns: list[str],
    n_permutations: int,
    seed: int,
    exact_limit: int,
) -> dict[tuple[str, str], _Correlation]:
    x = data[distance].to_numpy(dtype=np.float64)
    ys = data[columns].to_numpy(dtype=np.float64)
    groups = groups_in_order(data)
    rho = tau = None
    if len(data) >= 3:
        rank = {g: i for i, g in enumerate(groups)}
        index_a = data.group_a.map(rank).to_numpy(dtype=np.int64)
        index_b = data.group_b.map(rank).to_numpy(dtype=np.int64)
        perms = group_permutations(len(groups), n_permutations, seed, exact_limit)
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
    if len(x) < 3:
        return dict.fromkeys(["spearman_rho", "spearman_p", "kendall_tau", "kendall_p"], np.nan)
    with warnings.catch_warnings():
        # A constant column has no rank correlation; NaN in the result says so.
        warnings.simplefilter("ignore")
        spearman = scipy_stats.spearmanr(x, y)
        kendall = scipy_stats.kendalltau(x, y)
    return {
        "spearman_rho": float(spearman.statistic),
        "spearman_p": float(spearman.pvalue),
        "kendall_tau": float(kendall.statistic),
        "kendall_p": float(kendall.pvalue),
    }


def strongest(
    correlations_df: pd.DataFrame, k: int = 5, statistic: str = "spearman_rho"
) -> pd.DataFrame:
    """The ``k`` distance-performance pairs with the largest absolute ``statistic``.

    Args:
        correlations_df: the output of :func:`correlations`.
        k: how many rows to keep.
        statistic: the column ranked by absolute value (``spearman_rho`` or ``kendall_tau``).

    Returns:
        The strongest rows, strongest first, NaN statistics last and dropped beyond ``k``.
    """
    if statistic not in correlations_df.columns:
        raise ConfigError(
            f"no column {statistic!r} to rank by; choose one of {list(correlations_df.columns)}."
        )
    order = correlations_df[statistic].abs().sort_values(ascending=False, na_position="last")
    return correlations_df.loc[order.index[:k]].reset_index(drop=True)
