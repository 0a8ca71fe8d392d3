"""Download a dataset's public files into the data directory, checksum-verified.

Usage::

    python -m regbias.data.fetch sentiment140 [--data-dir DIR]
    python -m regbias.data.fetch reuters21578 [--data-dir DIR]

The data directory is ``--data-dir``, else ``$REGBIAS_DATA_DIR``, else ``./data``. Files already
present with the right checksum are kept; every other file is downloaded to a temporary file,
checked against the SHA-256 in :mod:`regbias.data.manifest` and only then moved into place, so an
interrupted or corrupted download never leaves a half-written file behind.
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

from regbias.data.manifest import MANIFEST, ManifestEntry
from regbias.errors import DataError

__all__ = [
    "DATA_DIR_ENV",
    "Opener",
    "default_data_dir",
    "fetch",
    "fetch_command",
    "main",
]

#: Environment variable naming the data directory.
DATA_DIR_ENV = "REGBIAS_DATA_DIR"
#: Opens a URL for reading, like :func:`urllib.request.urlopen`.
Opener = Callable[[str], BinaryIO]

_CHUNK = 1 << 16
_TIMEOUT_S = 60


def default_data_dir() -> Path:
    """The data directory when none is given: ``$REGBIAS_DATA_DIR``, else ``./data``."""
    return Path(os.environ.get(DATA_DIR_ENV) or "data")


def fetch_command(dataset: str, data_dir: Path | None = None) -> str:
    """The shell command that downloads ``dataset``, for error messages to quote.

    Args:
        dataset: a dataset name of the manifest (``sentiment140``, ``reuters21578``, ...).
        data_dir: the data directory to name; omitted from the command when ``None``.
    """
    command = f"python -m regbias.data.fetch {dataset}"
    return command if data_dir is None else f"{command} --data-dir {data_dir}"


def fetch(
    dataset: str, data_dir: Path | None = None, *, opener: Opener | None = None
) -> list[Path]:
    """Download every file of ``dataset`` that is missing or damaged in ``data_dir``.

    Args:
        dataset: a dataset name of the manifest.
        data_dir: the data directory; :func:`default_data_dir` when ``None``.
        opener: opens a URL; ``urllib.request.urlopen`` with a timeout when ``None``.

    Returns:
        The paths of the dataset's files, all present and verified.

    Raises:
        DataError: unknown dataset, a download failed (offline, HTTP error) or a checksum
            does not match.
    """
    if dataset not in MANIFEST:
        raise DataError(f"unknown dataset {dataset!r}: choose one of {', '.join(MANIFEST)}")
    data_dir = default_data_dir() if data_dir is None else Path(data_dir)
    open_url = opener or _urlopen
    paths = []
    for entry in MANIFEST[dataset]:
        target = data_dir / entry.path
        if not (target.is_file() and _sha256_file(target) == entry.sha256):
            _download(entry, data_dir, open_url)
        paths.append(target)
    return paths


def _urlopen(url: str) -> BinaryIO:
    return urllib.request.urlopen(url, timeout=_TIMEOUT_S)


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


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; prints one line and returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m regbias.data.fetch", description="Download a dataset for regbias."
    )
    parser.add_argument("dataset", choices=sorted(MANIFEST))
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"default: ${DATA_DIR_ENV}, else ./data"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or default_data_dir()
    try:
        paths = fetch(args.dataset, data_dir)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{args.dataset}: {len(paths)} files verified in {data_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
