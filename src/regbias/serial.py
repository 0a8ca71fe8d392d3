"""The JSON forms of typed results, through one cattrs converter.

``unstructure`` turns a dataclass (nested dataclasses, tuples, tables) into JSON-ready data;
``structure`` reads it back as the class says, a key the data lacks taking the field's default
and a key the class does not know left out (a file written by an older or newer regbias).
Tables are lists of records.
"""

from __future__ import annotations

from typing import Any, TypeVar

import cattrs
import pandas as pd

T = TypeVar("T")

_converter = cattrs.Converter(forbid_extra_keys=False)
_converter.register_unstructure_hook(pd.DataFrame, lambda frame: frame.to_dict(orient="records"))
_converter.register_structure_hook(pd.DataFrame, lambda records, _: pd.DataFrame(records))


def unstructure(value: object) -> Any:
    """``value`` as JSON-ready data (dicts, lists, strings and numbers)."""
    return _converter.unstructure(value)


def structure(data: Any, kind: type[T]) -> T:
    """``data`` (what :func:`unstructure` wrote) read back as ``kind``."""
    return _converter.structure(data, kind)
