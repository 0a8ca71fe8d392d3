"""Guards around opening an MLflow store: free space first, schema creation under a file lock.

A fresh SQLite store is created (and migrated) on first use. Two sweeps starting at once race
on that migration, and a store created on a full disk is left half-migrated; so the first use
runs under an exclusive lock next to the database, after a free-space check of its folder.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from regbias.errors import TrackingError

__all__ = ["MIN_FREE_MB", "local_store_path", "check_free_space", "store_lock"]

MIN_FREE_MB = 64
"""Below this many free megabytes in the store's folder a run does not start."""


def local_store_path(uri: str) -> Path | None:
    """The file (SQLite) or folder (file store) behind ``uri``; None for a server."""
    if uri.startswith("sqlite:///"):
        return Path(uri.removeprefix("sqlite:///"))
    if uri.startswith("file://"):
        return Path(uri.removeprefix("file://"))
    if "://" in uri or uri.startswith("databricks"):
        return None
    return Path(uri)


def check_free_space(uri: str, min_mb: float = MIN_FREE_MB) -> None:
    """Raise before touching a local store whose disk is (nearly) full.

    Raises:
        TrackingError: fewer than ``min_mb`` megabytes free; the message names the folder.
    """
    path = local_store_path(uri)
    if path is None:
        return
    folder = path.parent if path.suffix or not path.is_dir() else path
    folder = _existing(folder.resolve())
    free_mb = shutil.disk_usage(folder).free / 2**20
    if free_mb < min_mb:
        raise TrackingError(
            f"only {free_mb:.0f} MB free in {folder}, where the MLflow store '{uri}' lives "
            f"(at least {min_mb:.0f} MB needed): free space there or set tracking.uri elsewhere"
        )


def _existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


@contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """Hold an exclusive lock on a local SQLite store while its schema may be created."""
    path = local_store_path(uri)
    if path is None or not uri.startswith("sqlite:///"):
        yield
        return
    lock = path.resolve().with_name(path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # a read-only folder: nobody can migrate there anyway
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)
