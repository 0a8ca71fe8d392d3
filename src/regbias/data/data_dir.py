"""Where the data lives: the ``paths.data_dir`` config key, which ``$REGBIAS_DATA_DIR`` sets.

The rule is written once, in ``conf/config.yaml`` (``${oc.env:REGBIAS_DATA_DIR,data}``), the
way ``$REGBIAS_CACHE_DIR`` sets ``paths.cache_dir``: the variable, else ``data``; a
``paths.data_dir=DIR`` on the command line wins over both. A job reads the composed key; code
outside a job (first-use downloads without a config, ``python -m regbias.data.fetch``) reads
the same key from the packaged config (:func:`data_dir_for` without an argument).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from regbias.config_files import packaged_value
from regbias.errors import DataError

#: The environment variable that sets ``paths.data_dir`` (in ``conf/config.yaml``).
DATA_DIR_ENV = "REGBIAS_DATA_DIR"


@dataclass(frozen=True)
class PathSettings:
    """The ``paths`` config group: the data directory and the embedding cache."""

    data_dir: str
    cache_dir: str


def data_dir_for(configured: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``configured`` (the composed ``paths.data_dir``), else the packaged one.

    The packaged config's ``paths.data_dir`` is ``$REGBIAS_DATA_DIR``, else ``data``. Nothing is
    checked; :func:`resolve_data_dir` also requires the folder to exist.
    """
    if configured:
        return Path(configured)
    return Path(str(packaged_value("paths.data_dir")))


def data_dir_source(configured: str | os.PathLike[str] | None = None) -> str:
    """Where the data directory ``configured`` came from, for messages.

    ``$REGBIAS_DATA_DIR`` where the variable names it (the config took it from there), else
    the ``paths.data_dir`` key.
    """
    named = os.environ.get(DATA_DIR_ENV)
    if named and (not configured or Path(configured) == Path(named)):
        return f"${DATA_DIR_ENV}"
    return "paths.data_dir"


def resolve_data_dir(configured: str | os.PathLike[str] | None) -> Path:
    """The data directory (:func:`data_dir_for`), absolute, checked to exist.

    Raises:
        DataError: the directory does not exist; the message names where it came from.
    """
    chosen = data_dir_for(configured)
    if not chosen.is_dir():
        raise DataError(
            f"data directory '{chosen}' (from {data_dir_source(configured)}) does not exist: set "
            f"{DATA_DIR_ENV} or paths.data_dir=DIR, or download the data with "
            f"`python -m regbias.data.fetch sentiment140|reuters21578 --data-dir {chosen}`"
        )
    return chosen.resolve()
