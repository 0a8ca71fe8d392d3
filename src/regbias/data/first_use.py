"""Data on first use: a job whose dataset files are missing downloads them, once, before it starts.

The download is :func:`regbias.data.fetch.fetch` (checksum-verified, atomic per file) with a
progress bar. Offline, or when a download fails, one line says what is missing and the two
ways out (``REGBIAS_DATA_DIR`` or the fetch command), and no empty folder is left behind.

Environment:
    ``REGBIAS_OFFLINE=1``: never download; a missing file is the one-line error at once.
    ``REGBIAS_DATA_MIRROR=URL``: download ``URL/<path in the data directory>`` instead of the
    public sources (an institute's mirror; the tests' local server). Checksums still apply.
"""

from __future__ import annotations

import contextlib
import logging
import os
import urllib.error
from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, cast

from regbias.console import progress_bar
from regbias.data.data_dir import DATA_DIR_ENV, data_dir_for
from regbias.data.dataset import ManifestEntry
from regbias.data.fetch import Opener, fetch_command, fetch_files, urlopen
from regbias.data.registry import dataset_class, dataset_names
from regbias.errors import DataError
from regbias.settings_reader import TARGET

OFFLINE_ENV = "REGBIAS_OFFLINE"
MIRROR_ENV = "REGBIAS_DATA_MIRROR"
_TIMEOUT_S = 20
_CHUNK = 1 << 16

log = logging.getLogger(__name__)


def missing_files(dataset: Mapping[str, Any] | str, data_dir: Path) -> list[ManifestEntry]:
    """The files ``dataset`` (its config group, or a packaged dataset's name) lacks here."""
    return [entry for entry in _downloads(dataset) if not (data_dir / entry.path).is_file()]


def _downloads(dataset: Mapping[str, Any] | str) -> tuple[ManifestEntry, ...]:
    """The files a run of ``dataset`` reads; none for a name that is not a packaged dataset."""
    if not isinstance(dataset, str) and TARGET in dataset:
        return dataset_class(dict(dataset)).downloads
    name = dataset if isinstance(dataset, str) else str(dataset.get("name"))
    return dataset_class(name).downloads if name in dataset_names() else ()


def datasets_in_sweep(default: str | None, overrides: Iterable[str]) -> list[str]:
    """The dataset names a sweep's jobs read: the config's, or a ``dataset=a,b`` override's."""
    names = [default] if default else []
    for override in overrides:
        key, _, value = override.partition("=")
        if key.lstrip("+~") == "dataset" and value:
            names = [v.strip() for v in value.split(",") if v.strip()]
    return list(dict.fromkeys(names))


def ensure_data(
    dataset: Mapping[str, Any] | str,
    configured: str | os.PathLike[str] | None,
    *,
    opener: Opener | None = None,
) -> Path | None:
    """Download the files ``dataset`` needs when they are missing from the data directory.

    A dataset without downloads (``csv``) needs nothing here; ``configured`` is the composed
    ``paths.data_dir`` (None: the packaged config's).

    Returns:
        The data directory, or None when the dataset has no downloadable files.

    Raises:
        DataError: offline or the download failed; one line with both ways out.
    """
    name = str(dataset if isinstance(dataset, str) else dataset.get("name"))
    downloads = _downloads(dataset)
    if not downloads:
        return None
    data_dir = data_dir_for(configured)
    missing = missing_files(dataset, data_dir)
    if not missing:
        return data_dir
    if os.environ.get(OFFLINE_ENV, "").lower() in {"1", "true", "yes", "on"}:
        why = f"downloads are off: {OFFLINE_ENV} is set"
        raise DataError(_missing_line(name, data_dir, missing, why))
    log.info("%s: %d data files missing in %s, downloading them", name, len(missing), data_dir)
    created = _absent_folders(data_dir, missing)
    existed = data_dir.is_dir()
    source = _Source(opener or partial(urlopen, timeout_s=_TIMEOUT_S), downloads)
    try:
        with progress_bar(total=None, desc=f"downloading {name}", unit="B", unit_scale=True) as bar:
            source.bar = bar
            fetch_files(downloads, data_dir, opener=source)
    except DataError as error:
        why = source.reason(error)
        raise DataError(_missing_line(name, data_dir, missing, why, existed)) from None
    finally:
        _remove_empty(created)
    log.info("%s: %d files downloaded and verified in %s", name, len(missing), data_dir)
    return data_dir


def _missing_line(
    name: str, data_dir: Path, missing: list[ManifestEntry], why: str, existed: bool = True
) -> str:
    where = (
        f"data directory {data_dir} does not exist"
        if not (existed and data_dir.is_dir())
        else f"{data_dir} lacks {missing[0].path}"
        + (f" and {len(missing) - 1} more files" if len(missing) > 1 else "")
    )
    command = fetch_command(name, data_dir)
    return (
        f"the {name} data is missing ({where}) and could not be downloaded ({why}): set "
        f"{DATA_DIR_ENV} to a folder that holds it, or run `{command}` on a machine with "
        "internet access"
    )


def _absent_folders(data_dir: Path, missing: list[ManifestEntry]) -> list[Path]:
    """Folders a download would create, deepest first (removed again if left empty)."""
    folders: set[Path] = set()
    for entry in missing:
        folder = (data_dir / entry.path).parent
        while not folder.exists():
            folders.add(folder)
            folder = folder.parent
    return sorted(folders, key=lambda p: len(p.parts), reverse=True)


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only succeeds when empty


class _Source:
    """An opener that follows the mirror, counts bytes into a progress bar, keeps the error."""

    def __init__(self, opener: Opener, entries: Iterable[ManifestEntry]) -> None:
        self.opener = opener
        self.bar: Any = None
        self.error: BaseException | None = None
        mirror = os.environ.get(MIRROR_ENV, "").rstrip("/")
        self.urls = {e.url: f"{mirror}/{e.path}" if mirror else e.url for e in entries}

    def __call__(self, url: str) -> BinaryIO:
        try:
            response = self.opener(self.urls.get(url, url))
        except (urllib.error.URLError, OSError) as error:
            self.error = error
            raise
        size = getattr(response, "headers", {}).get("Content-Length")
        if self.bar is not None and size and str(size).isdigit():
            self.bar.total = (self.bar.total or 0) + int(size)
        return cast(BinaryIO, _Counted(response, self))  # reads, closes: all fetch asks of it

    def reason(self, error: DataError) -> str:
        if self.error is None:
            text = str(error)
            return text.split(";")[0] if text.startswith("checksum mismatch") else text
        reason = getattr(self.error, "reason", None) or self.error
        return f"{type(self.error).__name__}: {reason}".splitlines()[0]


class _Counted:
    """A response whose reads advance the progress bar."""

    def __init__(self, response: BinaryIO, source: _Source) -> None:
        self.response = response
        self.source = source

    def read(self, size: int = _CHUNK) -> bytes:
        try:
            chunk = self.response.read(size)
        except OSError as error:
            self.source.error = error
            raise
        if self.source.bar is not None:
            self.source.bar.update(len(chunk))
        return chunk

    def __enter__(self) -> _Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        self.response.close()
