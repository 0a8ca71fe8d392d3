"""Where the data lives: ``$REGBIAS_DATA_DIR``, else the ``paths.data_dir`` config key.

The rule "the environment wins over the config" is written here once; every reader of the data
directory (jobs, first-use downloads, ``python -m regbias.data.fetch``, cluster checks) asks here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from regbias.errors import DataError

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "PathSettings",
    "data_dir_for",
    "data_dir_source",
    "resolve_data_dir",
]

#: The environment variable that names the data directory; it wins over ``paths.data_dir``.
DATA_DIR_ENV = "REGBIAS_DATA_DIR"
#: The data directory when neither the environment nor the config names one.
DEFAULT_DATA_DIR = "data"


@dataclass(frozen=True)
class PathSettings:
    """The ``paths`` config group: the data directory and the embedding cache."""

    data_dir: str
    cache_dir: str


def data_dir_for(configured: str | os.PathLike[str] | None = None) -> Path:
    """The data directory to use: ``$REGBIAS_DATA_DIR`` if set, else ``configured``, else ``data``.

    Nothing is checked; :func:`resolve_data_dir` also requires the folder to exist.
    """
    return Path(os.environ.get(DATA_DIR_ENV) or configured or DEFAULT_DATA_DIR)


def data_dir_source() -> str:
    """Where :func:`data_dir_for` takes the directory from, for messages."""
    return f"${DATA_DIR_ENV}" if os.environ.get(DATA_DIR_ENV) else "paths.data_dir"


def resolve_data_dir(configured: str | os.PathLike[str] | None) -> Path:
    """The data directory (:func:`data_dir_for`), absolute, checked to exist.

    Raises:
        DataError: the directory does not exist; the message names where it came from.
    """
    chosen = data_dir_for(configured)
    if not chosen.is_dir():
        raise DataError(
            f"data directory '{chosen}' (from {data_dir_source()}) does not exist: set "
            f"{DATA_DIR_ENV} or paths.data_dir=DIR, or download the data with "
            f"`python -m regbias.data.fetch sentiment140|reuters21578 --data-dir {chosen}`"
        )
    return chosen.resolve()
