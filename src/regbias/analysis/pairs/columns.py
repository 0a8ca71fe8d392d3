"""The columns of a pairwise test's table, each declared once: where it goes, what it defaults to.

A test of record's table is one row per pair. Every test has the same first and last columns
(:data:`HEAD`, :data:`TAIL`); a test declares its own between them
(:attr:`~regbias.analysis.pairs.pairwise.PairwiseTests.columns`). A declaration says everything
the rest of regbias needs: its value where a table lacks it (an older file, a hand-built table),
whether the study's pairwise table takes it, whether MLflow logs it per pair, its heading in the
report, how its sign follows the pair's order, its words in the findings, and the function that
computes it from the pair's two sides (docs/extending.md, "Adding a per-pair statistic").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

#: How a value follows the pair's order: ``""`` it does not; ``flip`` it is negated (a gap
#: ``a - b``); ``low``/``high`` an interval's end: the other end, negated.
Signed = Literal["", "flip", "low", "high"]

#: A per-pair statistic from the pair's two sides (sentence vectors, or per-text scores).
PairFunction = Callable[[np.ndarray, np.ndarray], float]


@dataclass(frozen=True)
class PairColumn:
    """One column of a pairwise test's table.

    Attributes:
        name: the column's name in the test's table (and in ``pair_tests.csv``).
        default: its value where a table lacks the column (NaN: not measured).
        pairwise: the study's pairwise table takes it, as ``<metric>_<name>``.
        logged: MLflow logs it per pair, as ``<metric>/<a>__<b>/<name>`` (NaN left out).
        shown: its heading in the report's table of the test ("": not shown).
        signed: how its value follows the pair's order (:data:`Signed`; a test has at most one
            ``low``/``high`` interval).
        points: a metric's gap, written in points (a ``low`` end is written with its
            ``high`` as one interval cell).
        optional: shown only where some pair has a finite value (measured only on request).
        estimate: its words beside a differing pair in the findings, a format of the row.
        compute: the function of the pair's two sides that fills it (None: the test fills it).
        mc_sd: the column of its Monte Carlo sd (a bootstrap interval's end): the report
            prints it to the digit that sd supports (:func:`regbias.numbers.monte_carlo_text`),
            and an ``estimate`` format gets it as that text.
    """

    name: str
    default: object = math.nan
    pairwise: bool = False
    logged: bool = False
    shown: str = ""
    signed: Signed = ""
    points: bool = False
    optional: bool = False
    estimate: str = ""
    compute: PairFunction | None = None
    mc_sd: str = ""


#: The columns every test's table starts with: the pair, its family, its sides' sizes and the
#: texts left out as held by both groups.
HEAD = (
    PairColumn("group_a", ""),
    PairColumn("group_b", ""),
    PairColumn("family", "", pairwise=True, shown="family"),
    PairColumn("n_a", 0, shown="n_a"),
    PairColumn("n_b", 0, shown="n_b"),
    PairColumn("shared", 0, shown="shared"),
)
#: The relabellings a pair's p drew (fewer than asked where it stopped early:
#: :mod:`regbias.analysis.pairs.sequential`; NaN in a table from before it was recorded).
RELABELLED = "relabelled"
#: The columns every test's table ends with: the p-value and the relabellings it drew, Holm's
#: within the family, the verdict, and why a pair is untestable ("" where it is tested; one
#: column for every test).
TAIL = (
    PairColumn("p", pairwise=True, shown="p"),
    PairColumn(RELABELLED, shown="relabellings", optional=True),
    PairColumn("p_adjusted", pairwise=True, logged=True, shown="Holm p"),
    PairColumn("differs", False, pairwise=True),
    PairColumn("untestable", ""),
)


def declared(table: pd.DataFrame, columns: Iterable[PairColumn]) -> pd.DataFrame:
    """``table`` with every declared column (a missing one at its default) and no other lost.

    An older or hand-built table still renders: a column it lacks takes its declared default,
    in declared order; columns it has beyond the declaration follow.
    """
    table = table.copy()
    for column in columns:
        if column.name not in table:
            table[column.name] = [column.default] * len(table)
    names = [c.name for c in columns]
    return table[[*names, *(c for c in table.columns if c not in names)]]


def renamed(table: pd.DataFrame, old_names: Mapping[str, str]) -> pd.DataFrame:
    """``table`` with an older file's column names (``old_names``) under their names now."""
    present = {old: new for old, new in old_names.items() if old in table and new not in table}
    return table.rename(columns=present) if present else table


def reversed_value(columns: Iterable[PairColumn], row: pd.Series, name: str) -> object:
    """The row's value of column ``name`` for the pair named in the other order."""
    by_name = {c.name: c for c in columns}
    signed = by_name[name].signed if name in by_name else ""
    if signed in ("low", "high"):
        other = next(c.name for c in by_name.values() if c.signed == _OTHER_END[signed])
        return -float(row[other])
    return -float(row[name]) if signed == "flip" else row[name]


_OTHER_END = {"low": "high", "high": "low"}


def computed(
    columns: Iterable[PairColumn], sides: Callable[[], tuple[np.ndarray, np.ndarray]] | None
) -> dict[str, float]:
    """Each computed column's value of a pair's two sides (NaN for an untestable pair: None).

    ``sides`` is called once, and only where a column computes (the sides are not gathered
    for a test that declares no such column).
    """
    functions = [c for c in columns if c.compute is not None]
    if not functions:
        return {}
    if sides is None:
        return dict.fromkeys((c.name for c in functions), math.nan)
    side_a, side_b = sides()
    return {c.name: float(c.compute(side_a, side_b)) for c in functions if c.compute is not None}
