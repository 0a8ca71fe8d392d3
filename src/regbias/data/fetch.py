"""Download a dataset's public files into the data directory, checksum-verified.

Usage::

    python -m regbias.data.fetch sentiment140 [--data-dir DIR]
    python -m regbias.data.fetch reuters21578 [--data-dir DIR]

The data directory is ``--data-dir``, else ``$REGBIAS_DATA_DIR``, else ``./data``. Files already
present with the right checksum are kept; every other file is downloaded to a temporary file,
checked against the SHA-256 its dataset class lists (:mod:`regbias.data.registry`) and only then
moved into place, so an interrupted or corrupted download never leaves a half-written file behind.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from regbias.data.data_dir import DATA_DIR_ENV, data_dir_for
from regbias.data.dataset import ManifestEntry
from regbias.data.fingerprint import file_sha256
from regbias.data.registry import fetchable
from regbias.errors import DataError

#: Opens a URL for reading, like :func:`urllib.request.urlopen`.
Opener = Callable[[str], BinaryIO]

_CHUNK = 1 << 16
_TIMEOUT_S = 60


def fetch_command(dataset: str, data_dir: Path | None = None) -> str:
    """The shell command that downloads ``dataset`` (to ``data_dir`` if given), for messages."""
    command = f"python -m regbias.data.fetch {dataset}"
    return command if data_dir is None else f"{command} --data-dir {data_dir}"


def fetch(
    dataset: str, data_dir: Path | None = None, *, opener: Opener | None = None
) -> list[Path]:
    """Download every file of ``dataset`` that is missing or damaged in ``data_dir``.

    ``data_dir`` None: ``$REGBIAS_DATA_DIR``, else ``./data``; ``opener`` None:
    ``urllib.request.urlopen`` with a timeout.

    Returns:
        The paths of the dataset's files, all present and verified.

    Raises:
        DataError: unknown dataset, a download failed (offline, HTTP error) or a checksum
            does not match.
    """
    sets = fetchable()
    if dataset not in sets:
        raise DataError(f"unknown dataset {dataset!r}: choose one of {', '.join(sets)}")
    folder = data_dir_for() if data_dir is None else Path(data_dir)  # given: it wins
    return fetch_files(sets[dataset], folder, opener=opener)


def fetch_files(
    entries: Sequence[ManifestEntry], data_dir: Path, *, opener: Opener | None = None
) -> list[Path]:
    """Download each of ``entries`` that is missing or damaged in ``data_dir`` (:func:`fetch`)."""
    open_url = opener or urlopen
    paths = []
    for entry in entries:
        target = data_dir / entry.path
        if not (target.is_file() and file_sha256(target) == entry.sha256):
            _download(entry, data_dir, open_url)
        paths.append(target)
    return paths


def urlopen(url: str, timeout_s: float = _TIMEOUT_S) -> BinaryIO:
    """``url`` opened for reading (:func:`urllib.request.urlopen`), given up after ``timeout_s``."""
    return urllib.request.urlopen(url, timeout=timeout_s)


def _download(entry: ManifestEntry, data_dir: Path, open_url: Opener) -> None:
    target = data_dir / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(descriptor, "wb") as sink:
            try:
                with open_url(entry.url) as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        sink.write(chunk)
            except (urllib.error.URLError, OSError) as error:
                raise DataError(
                    f"cannot download {entry.url} ({_reason(error)}): check the internet "
                    f"connection, or copy the file to {target} by hand"
                ) from None
        if digest.hexdigest() != entry.sha256:
            raise DataError(
                f"checksum mismatch for {entry.url}: expected sha256 {entry.sha256}, got "
                f"{digest.hexdigest()}; the source changed or the download was corrupted "
                "(nothing was written)"
            )
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _reason(error: OSError) -> str:
    # A plain URLError (offline, DNS) hides the cause in .reason; HTTPError's str says it all.
    if type(error) is urllib.error.URLError:
        return str(error.reason)
    return str(error) or type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; prints one line and returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m regbias.data.fetch", description="Download a dataset for regbias."
    )
    parser.add_argument("dataset", choices=sorted(fetchable()))
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"default: ${DATA_DIR_ENV}, else ./data"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or data_dir_for()
    try:
        paths = fetch(args.dataset, data_dir)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{args.dataset}: {len(paths)} files verified in {data_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
