"""Pair tables: one row per unordered pair of groups, with their distances and performance.

:func:`pairwise_table` joins a study's distance matrices and performance tables into one;
:func:`read_pairwise_csv` reads and checks a user's table for re-analysis. Their rank
correlations are :mod:`regbias.analysis.correlation.table`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from regbias.analysis.permutations import PAIR_COLUMNS, groups_in_order
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, DataError, RegbiasError
from regbias.tables import read_table

#: The prefix of a pair table's distance columns (``dist_<matrix name>``).
DISTANCE_PREFIX = "dist_"
#: The prefixes of its performance columns (``gap_<metric>``, ``dcor_<metric>``).
#: A performance gap's column (``gap_accuracy``).
GAP_PREFIX = "gap_"
PERFORMANCE_PREFIXES = (GAP_PREFIX, "dcor_")
#: Fewer groups than this allow no meaningful rank test over their pairs.
MIN_GROUPS = 4


@dataclass(frozen=True)
class AnalyzeSettings:
    """``analysis.analyze``: the pair table ``task=analyze`` re-analyses (read_pairwise_csv).

    Attributes:
        input: the pairwise CSV to re-analyse (None: none named; the task asks for it).
        distances: the distance columns (None: every ``dist_*``).
        performance: the performance columns (None: ``gap_*``, ``dcor_*``).
        exclude_groups: groups whose pairs are left out.
        exclude_pairs: pairs left out, like ``nz-za`` (either order).
    """

    input: str | None
    distances: list[str] | None
    performance: list[str] | None
    exclude_groups: list[str]
    exclude_pairs: list[str]


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
        """A pair table of ``dist_*`` and ``gap_*``/``dcor_*`` columns (others ride along)."""
        return cls(
            frame,
            [c for c in frame.columns if str(c).startswith(DISTANCE_PREFIX)],
            [c for c in frame.columns if str(c).startswith(PERFORMANCE_PREFIXES)],
        )


def pairwise_table(
    distances: dict[str, DistanceMatrix],
    gaps: pd.DataFrame | None = None,
    dcor: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Join distance matrices and long performance tables into one row per group pair.

    Each matrix of ``distances`` gives ``dist_<name>`` (its mean) and, with floors,
    ``excess_dist_<name>``; each metric of the long tables ``gaps`` and ``dcor`` (``group_a,
    group_b, metric, gap`` or ``dcor``) a column ``gap_<metric>`` or ``dcor_<metric>``. Pairs
    are matched regardless of order; rows (the union of all pairs, NaN where an input has no
    value) are ordered by the groups' first appearance.

    Raises:
        DataError: a long table lacks a column, or holds the same pair and metric twice.
    """
    parts = []
    for name, matrix in distances.items():
        pairs = matrix.pairs()
        parts.append(pairs.assign(column=f"{DISTANCE_PREFIX}{name}", value=pairs["mean"]))
    for long, value, prefix in ((gaps, "gap", "gap_"), (dcor, "dcor", "dcor_")):
        if long is not None:
            parts.append(_long_pairs(long, value, prefix))
    for name, matrix in distances.items():  # excess_dist_<name>: the distance above the floor
        if (excess := matrix.excess()) is not None:
            i, j = np.triu_indices(len(matrix.groups), 1)
            column = f"excess_{DISTANCE_PREFIX}{name}"
            parts.append(matrix.pairs().assign(column=column, value=excess[i, j]))
    names = [g for matrix in distances.values() for g in matrix.groups]
    for long in (gaps, dcor):
        if long is not None:
            names += long[PAIR_COLUMNS].astype(str).to_numpy().ravel().tolist()
    rank = {group: i for i, group in enumerate(dict.fromkeys(names))}
    if not parts:
        return pd.DataFrame(columns=PAIR_COLUMNS, dtype=object)
    stacked = pd.concat([p[[*PAIR_COLUMNS, "column", "value"]] for p in parts], ignore_index=True)
    swap = (stacked["group_a"].map(rank) > stacked["group_b"].map(rank)).to_numpy()
    stacked.loc[swap, PAIR_COLUMNS] = stacked.loc[swap, PAIR_COLUMNS[::-1]].to_numpy()
    wide = stacked.pivot(index=PAIR_COLUMNS, columns="column", values="value").astype(np.float64)
    keys = sorted(wide.index, key=lambda pair: (rank[pair[0]], rank[pair[1]]))
    columns = list(dict.fromkeys(stacked["column"]))
    frame = wide.loc[keys, columns].rename_axis(columns=None).reset_index()
    return frame.astype(dict.fromkeys(PAIR_COLUMNS, object))


def _long_pairs(long: pd.DataFrame, value: str, prefix: str) -> pd.DataFrame:
    """``group_a, group_b, column, value`` of a long table, one row per pair and metric."""
    needed = [*PAIR_COLUMNS, "metric", value]
    missing = [c for c in needed if c not in long.columns]
    if missing:
        raise DataError(
            f"the {value} table lacks column(s) {missing}; it has {list(long.columns)}. "
            f"Give a long table with columns {needed}."
        )
    a, b, metric = (long[c].astype(str) for c in needed[:3])
    ordered = {"low": a.where(a <= b, b), "high": b.where(a <= b, a), "metric": metric}
    twice = pd.DataFrame(ordered).duplicated()
    if twice.any():
        row = int(np.flatnonzero(twice.to_numpy())[0])
        raise DataError(
            f"the {value} table holds the pair {a.iloc[row]}-{b.iloc[row]} twice for metric "
            f"{long['metric'].iloc[row]!r}; keep one row per pair and metric."
        )
    found = {"group_a": a, "group_b": b, "column": prefix + metric, "value": long[value]}
    return pd.DataFrame(found).astype({"value": np.float64})


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


#: The tests of record whose verdicts a pairwise table carries, by column prefix.
RECORDED_TESTS = {"pair_test": "test of record", "perf_test": "performance test of record"}


@dataclass(frozen=True)
class RecordedVerdict:
    """One family of a test of record as a pairwise table records it (read, not re-run).

    Attributes:
        test: the test in words (:data:`RECORDED_TESTS`).
        family: ``regions`` or ``reference``.
        tested: the family's pairs with an adjusted p.
        differing: the pairs the table says differ, ``a-b`` each.
    """

    test: str
    family: str
    tested: int
    differing: tuple[str, ...]


def recorded_verdicts(path: Path | str, references: Iterable[str]) -> list[RecordedVerdict]:
    """The verdicts of the tests of record a pairwise table carries (``<prefix>_differs``).

    A pair is in a family where its ``<prefix>_p_adjusted`` is a number; its family is
    ``<prefix>_family`` where the table has it, else ``reference`` for a pair with one of
    ``references``. A table without these columns carries none.
    """
    frame = _stripped_names(read_table(Path(path), skipinitialspace=True))
    reference = set(references)
    found = []
    for prefix, test in RECORDED_TESTS.items():
        differs, adjusted = f"{prefix}_differs", f"{prefix}_p_adjusted"
        if differs not in frame or adjusted not in frame:
            continue
        rows = frame[pd.to_numeric(frame[adjusted], errors="coerce").notna()]
        in_reference = rows[PAIR_COLUMNS].isin(reference).any(axis=1)
        by_groups = in_reference.map({True: "reference", False: "regions"})
        family = rows.get(f"{prefix}_family", by_groups)
        for name in ("regions", "reference"):
            members = rows[(family == name).to_numpy()]
            if not len(members):
                continue
            flags = members[differs].astype(str).str.strip().str.lower().isin(("true", "1", "1.0"))
            pairs = tuple(f"{a}-{b}" for a, b in members.loc[flags, PAIR_COLUMNS].to_numpy())
            found.append(RecordedVerdict(test, name, len(members), pairs))
    return found


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
