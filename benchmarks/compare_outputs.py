"""Do two runs (or sweeps) write the same numbers? A redesign's before-and-after check.

    python benchmarks/compare_outputs.py BEFORE AFTER [--atol 0] [--sizes]

BEFORE and AFTER are a run's or a sweep's output folders (``outputs/<date>/<time>`` or
``multirun/<date>/<time>``), made on the same machine from the same config and seed. Every CSV
under ``report/analysis/``, ``report/performance/`` and ``report/distances/`` (``pairwise.csv``,
``pair_tests.csv``, the correlation table with its primary row, the performance tables, the
distance matrices and their spreads, ...) is read in both and compared cell by cell: numbers
exactly (or within ``--atol``), everything else as text. ``--sizes`` adds, per numeric column
that moved, how many cells did and its largest move (absolute, and relative to the larger of
the two values): what an opt-in precision changes. Columns may be added or reordered (wording
and layout may change); a column, row or file that went missing, or any number that moved, is
a difference. A column renamed since (``RENAMED``) is compared under its new name. Prints one
line per file and exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

#: The report's table folders whose numbers a redesign must keep.
TABLE_FOLDERS = ("report/analysis", "report/performance", "report/distances")
#: Columns renamed with their numbers kept: the old name, the new. ``primary.csv``'s null size
#: was ``n_permutations`` (relabellings have one spelling since).
RENAMED = {"n_permutations": "null_size"}
#: Columns renamed in one file only: the performance test's ``note`` (why a pair is
#: untestable) is ``untestable``, as in the embedding test's table (one column for both).
RENAMED_IN = {"pair_tests_perf": {"note": "untestable"}}
#: Columns dropped because another says the same, each with the check that it does: the
#: performance test's ``testable`` is ``untestable == ""``.
DERIVED = {"pair_tests_perf": {"testable": lambda after: _empty(after["untestable"])}}


def _empty(column: pd.Series) -> pd.Series:
    """Per cell, whether a text column is empty (a CSV reads an empty cell as NaN)."""
    return column.isna() | (column.astype(str) == "")


@dataclass
class FileComparison:
    """One table compared: what went missing and which cells moved."""

    name: str
    missing_columns: list[str] = field(default_factory=list)
    added_columns: list[str] = field(default_factory=list)
    rows: tuple[int, int] = (0, 0)
    moved: list[str] = field(default_factory=list)
    #: Per numeric column that moved: (cells moved, largest absolute move, largest relative).
    sizes: dict[str, tuple[int, float, float]] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        """Nothing missing, no row count changed, no cell moved."""
        return not self.missing_columns and self.rows[0] == self.rows[1] and not self.moved

    def line(self) -> str:
        """One line for the console."""
        if self.same:
            extra = f" (+{len(self.added_columns)} new columns)" if self.added_columns else ""
            return f"same       {self.name}: {self.rows[0]} rows{extra}"
        parts = []
        if self.missing_columns:
            parts.append(f"columns gone: {', '.join(self.missing_columns)}")
        if self.rows[0] != self.rows[1]:
            parts.append(f"rows {self.rows[0]} -> {self.rows[1]}")
        parts.extend(self.moved[:5])
        more = len(self.moved) - 5
        return (
            f"DIFFERENT  {self.name}: "
            + "; ".join(parts)
            + (f" (+{more} more)" if more > 0 else "")
        )

    def size_lines(self) -> list[str]:
        """One line per numeric column that moved: how many cells, by how much at most."""
        return [
            f"           {column}: {count} cells, largest move {absolute:.3g} "
            f"({relative:.2%} of the larger value)"
            for column, (count, absolute, relative) in self.sizes.items()
        ]


def tables(folder: Path) -> dict[str, Path]:
    """The report tables of a run or sweep folder, by their path under it."""
    found: dict[str, Path] = {}
    for sub in TABLE_FOLDERS:
        for path in sorted((folder / sub).rglob("*.csv")):
            found[str(path.relative_to(folder))] = path
    return found


def compare_table(
    name: str, before: pd.DataFrame, after: pd.DataFrame, atol: float
) -> FileComparison:
    """Cell-by-cell comparison of one table, rows in file order."""
    result = FileComparison(name, rows=(len(before), len(after)))
    result.missing_columns = [c for c in before.columns if c not in after.columns]
    result.added_columns = [c for c in after.columns if c not in before.columns]
    if len(before) != len(after):
        return result
    for column in (c for c in before.columns if c in after.columns):
        moved = _moved(column, before[column], after[column], atol)
        result.moved.extend(moved)
        if moved and _numeric(before[column], after[column]):
            result.sizes[column] = (len(moved), *_largest_move(before[column], after[column]))
    return result


def _numeric(before: pd.Series, after: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(before) and pd.api.types.is_numeric_dtype(after)


def _largest_move(before: pd.Series, after: pd.Series) -> tuple[float, float]:
    """The largest absolute move of a numeric column, and the largest relative to its cell."""
    a = before.to_numpy(dtype=np.float64)
    b = after.to_numpy(dtype=np.float64)
    both = ~(np.isnan(a) | np.isnan(b))
    if not both.any():
        return 0.0, 0.0
    move = np.abs(a[both] - b[both])
    scale = np.maximum(np.abs(a[both]), np.abs(b[both]))
    relative = np.divide(move, scale, out=np.zeros_like(move), where=scale > 0)
    return float(move.max()), float(relative.max())


def _moved(column: str, before: pd.Series, after: pd.Series, atol: float) -> list[str]:
    """Where one column's cells differ (NaN equals NaN)."""
    if _numeric(before, after):
        a = before.to_numpy(dtype=np.float64)
        b = after.to_numpy(dtype=np.float64)
        same = (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= atol)
        return [f"{column}[{i}] {float(a[i])!r} -> {float(b[i])!r}" for i in np.flatnonzero(~same)]
    a_text = before.fillna("").astype(str).to_numpy()
    b_text = after.fillna("").astype(str).to_numpy()
    return [
        f"{column}[{i}] {a_text[i]!r} -> {b_text[i]!r}" for i in np.flatnonzero(a_text != b_text)
    ]


def compare(before: Path, after: Path, atol: float = 0.0) -> list[FileComparison]:
    """Every report table of ``before`` against its namesake in ``after``."""
    old, new = tables(before), tables(after)
    results = []
    for name, path in old.items():
        if name not in new:
            results.append(FileComparison(name, missing_columns=["(the whole file)"]))
            continue
        a = pd.read_csv(path, keep_default_na=True).rename(columns=RENAMED)
        b = pd.read_csv(new[name], keep_default_na=True)
        kind = "pair_tests_perf" if name.endswith("perf_tests.csv") else name
        a = a.rename(columns=RENAMED_IN.get(kind, {}))
        for column, derive in DERIVED.get(kind, {}).items():
            if column in a and column not in b and len(a) == len(b):
                b[column] = derive(b).to_numpy()
        results.append(compare_table(name, a, b, atol))
    return results


def main(argv: list[str] | None = None) -> int:
    """Compare and print; 1 when anything differs, 2 when a folder has no report tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (0: exact)")
    parser.add_argument(
        "--sizes", action="store_true", help="per numeric column that moved: cells and largest move"
    )
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not tables(folder):
            print(f"no report tables under {folder} ({', '.join(TABLE_FOLDERS)})", file=sys.stderr)
            return 2
    results = compare(args.before, args.after, args.atol)
    for result in results:
        print(result.line())
        if args.sizes and result.sizes:
            print("\n".join(result.size_lines()))
    differing = sum(not r.same for r in results)
    print(f"{len(results) - differing} of {len(results)} tables the same (atol {args.atol:g})")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
