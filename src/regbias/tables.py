"""Writing the CSV tables regbias writes, and reading them (and pair tables users give it) back.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return as a formula (OWASP's CSV injection): a group named ``=cmd|' /C calc'!A0`` would. Every
table is written through :func:`csv_text`, which puts a ``'`` before such a text cell (a
spreadsheet shows the text, and runs nothing) and leaves numbers as they are;
:func:`read_table` takes the ``'`` off again, so every name survives the trip.

``pd.read_csv`` takes ``NA``, ``None``, ``null`` or ``nan`` for missing values everywhere, so a
group named ``NA`` would lose its rows. Here the columns that hold names keep every value as
written (only an empty cell is missing) and only the other columns know the usual NA spellings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

#: Columns that hold names (groups, models, metrics, pairs), never numbers or missing values.
NAME_COLUMNS = (
    "group",
    "group_a",
    "group_b",
    "pair",
    "model",
    "metric",
    "distance",
    "performance",
    "kind",
    "family",
    "variant",
)
#: What counts as a missing value in a numeric column.
MISSING = ("", "NA", "N/A", "n/a", "NaN", "nan", "-NaN", "-nan", "null", "NULL", "None", "#N/A")


#: A text cell a spreadsheet would run, behind any ``'`` an earlier neutralising added.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
#: A cell :func:`neutral` wrote: one ``'`` before one of those.
_NEUTRALISED = re.compile(r"'+[=+\-@\t\r]")


def neutral(cell: object) -> object:
    """``cell`` as a spreadsheet shows it without running it: ``'`` before a formula's start.

    Numbers, and text that reads as a number (``-0.5``, ``-inf``), are returned as they are;
    a text that already begins with ``'`` gets one more, so :func:`restored` is exact.
    """
    if not isinstance(cell, str) or not _FORMULA.match(cell) or _is_number(cell):
        return cell
    return "'" + cell


def restored(cell: object) -> object:
    """The cell :func:`neutral` was given."""
    if isinstance(cell, str) and _NEUTRALISED.match(cell) and not _is_number(cell):
        return cell[1:]
    return cell


def csv_text(frame: pd.DataFrame, index: bool = False, float_format: str | None = None) -> str:
    """``frame`` as CSV text, every text cell, header and index label :func:`neutral`."""
    safe = frame.copy(deep=False)
    safe.columns = safe.columns.map(neutral)
    if index:
        safe.index = safe.index.map(neutral)
    _map_text(safe, neutral)
    return safe.to_csv(index=index, float_format=float_format)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_table(
    path: Path | str, names: Iterable[str] = NAME_COLUMNS, **options: Any
) -> pd.DataFrame:
    """A CSV table with its ``names`` columns as text, exactly as written.

    In those only an empty cell is missing; the other columns get pandas' inferred dtypes,
    with the :data:`MISSING` spellings as NaN. ``options`` go to :func:`pandas.read_csv`.
    """
    header = pd.read_csv(path, nrows=0, **options).columns
    text = [c for c in header if restored(c) in set(names)]
    na_values = {c: [""] if c in text else list(MISSING) for c in header}
    frame = pd.read_csv(
        path, dtype={c: str for c in text}, keep_default_na=False, na_values=na_values, **options
    )
    frame.columns = frame.columns.map(restored)
    frame.index = frame.index.map(restored)
    _map_text(frame, restored)
    return frame


def _map_text(frame: pd.DataFrame, cell: Callable[[object], object]) -> None:
    """Apply ``cell`` to every cell of ``frame``'s text columns, in place (by position)."""
    for i, dtype in enumerate(frame.dtypes):
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            frame.isetitem(i, frame.iloc[:, i].map(cell))
