"""Reading back the CSV tables regbias writes (and pair tables users give it).

``pd.read_csv`` takes ``NA``, ``None``, ``null`` or ``nan`` for missing values everywhere, so a
group named ``NA`` would lose its rows. Here the columns that hold names keep every value as
written (only an empty cell is missing) and only the other columns know the usual NA spellings.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def read_table(
    path: Path | str, names: Iterable[str] = NAME_COLUMNS, **options: Any
) -> pd.DataFrame:
    """A CSV table with its ``names`` columns as text, exactly as written.

    In those only an empty cell is missing; the other columns get pandas' inferred dtypes,
    with the :data:`MISSING` spellings as NaN. ``options`` go to :func:`pandas.read_csv`.
    """
    header = pd.read_csv(path, nrows=0, **options).columns
    text = [c for c in header if c in set(names)]
    na_values = {c: [""] if c in text else list(MISSING) for c in header}
    return pd.read_csv(
        path, dtype={c: str for c in text}, keep_default_na=False, na_values=na_values, **options
    )
