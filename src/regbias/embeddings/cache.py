"""A disk cache of embeddings: every distinct text is embedded once per encoder and output kind.

Layout: ``root/<key>/`` per (encoder identity, output kind), ``key`` a hash of both, with a
``key.json`` naming them. Each :meth:`EmbeddingCache.put` adds one new shard, two files written
via a temporary file in the same folder and :func:`os.replace`: the data
``shard-<id>.data.npy`` (float32 rows: the token vectors of all its texts stacked, or one
pooled vector per text) first, then the index ``shard-<id>.index.npz`` (text hashes and row
offsets, and a BLAKE2b checksum of the data file). Readers only look at index files, so a
shard is visible whole or not at all; a killed writer leaves a temporary file or an orphan data
file, both ignored. Files are never modified after they appear, so any number of processes may
read and write one root at once.

Each process verifies a shard's checksum the first time it reads it. A shard that fails (a
flipped byte, rows overwritten, a truncated index) is reported in one log line naming it, moved
into ``<key>/quarantine/`` and its texts are embedded again. Files honour the umask, so a lab
can share one cache folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

import numpy as np

from regbias.errors import CacheError
from regbias.files import file_mode

if TYPE_CHECKING:
    from regbias.embeddings.encoder import Encoder, Padding

Embeddings = list[np.ndarray] | np.ndarray
"""Token vectors (a list of ``(n_tokens, d)`` arrays) or pooled vectors (an ``(n, d)`` array)."""

#: The name start of a temporary file or folder of a writer (a shard; an assembled model).
TEMP_PREFIX = ".tmp-"
_INDEX_SUFFIX = ".index.npz"
_DATA_SUFFIX = ".data.npy"
#: The age at which a temporary file or folder is a killed writer's (a live write is younger).
STALE_TEMP_SECONDS = 6 * 3600
_QUARANTINE = "quarantine"
#: A key's folder: the 32 hex digits of its BLAKE2b digest (:meth:`EmbeddingCache._index`).
_KEY_FOLDER = re.compile(r"[0-9a-f]{32}")

log = logging.getLogger(__name__)


def text_key(text: str) -> str:
    """The cache key of a text: a 128-bit BLAKE2b hash of its UTF-8 bytes, in hex."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass
class _Shard:
    """One shard's rows, memory-mapped read-only, and whether each text has several rows."""

    data: np.ndarray
    ragged: bool


@dataclass
class _KeyIndex:
    """What one process knows about one (encoder identity, kind) folder."""

    folder: Path
    shards: dict[str, _Shard] = field(default_factory=dict)
    # text hash -> (shard name, first row, end row)
    entries: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    ragged: bool | None = None


class EmbeddingCache:
    """Embeddings on disk under ``root``, shared by draws, stages, jobs and sweeps.

    Attributes:
        root: the cache folder (created when missing).
        hits: distinct texts served from the cache, over all calls.
        misses: distinct texts computed, over all calls.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._indexes: dict[str, _KeyIndex] = {}
        self.remove_stale_temp_files()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.root)!r}, hits={self.hits}, misses={self.misses})"

    @overload
    def get_or_compute(
        self,
        kind: str,
        encoder_identity: str,
        texts: Sequence[str],
        compute: Callable[[list[str]], list[np.ndarray]],
    ) -> list[np.ndarray]: ...

    @overload
    def get_or_compute(
        self,
        kind: str,
        encoder_identity: str,
        texts: Sequence[str],
        compute: Callable[[list[str]], np.ndarray],
    ) -> np.ndarray: ...

    def get_or_compute(
        self,
        kind: str,
        encoder_identity: str,
        texts: Sequence[str],
        compute: Callable[[list[str]], list[np.ndarray]] | Callable[[list[str]], np.ndarray],
    ) -> Embeddings:
        """The embeddings of ``texts``, computing and storing only those not cached yet.

        Args:
            kind: the output kind, e.g. ``tokens-real``, ``tokens-max_length``, ``pooled-mean``.
            encoder_identity: the encoder's stable identity (``EncoderSpec.identity``).
            texts: texts to embed; duplicates are embedded once.
            compute: embeds a list of texts, returning per text a 2-D token array (a list) or
                one row per text (a 2-D array). Called at most once, with the distinct misses.

        Returns:
            Float32 embeddings in the order of ``texts``: a list of arrays when ``compute``
            returns lists, else one ``(len(texts), d)`` array.
        """
        index = self._index(kind, encoder_identity)
        keys = [text_key(text) for text in texts]
        missing = self._missing(index, keys, texts)
        self.hits += len(dict.fromkeys(keys)) - len(missing)
        self.misses += len(missing)
        if not keys and index.ragged is None:
            return _as_float32(compute([]))
        if missing:
            computed = _as_float32(compute(list(missing.values())))
            _check_count(computed, len(missing))
            self._put(kind, encoder_identity, list(missing), computed)
        return self._collect(index, keys)

    def missing(self, kind: str, encoder_identity: str, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` not cached yet (under ``kind``), in first-seen order."""
        index = self._index(kind, encoder_identity)
        return list(self._missing(index, [text_key(text) for text in texts], texts).values())

    def _missing(self, index: _KeyIndex, keys: list[str], texts: Sequence[str]) -> dict[str, str]:
        """Hash -> text of the uncached texts, each once, first seen first (new shards scanned)."""
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in index.entries}
        if missing:
            self._scan(index)
        return {key: text for key, text in missing.items() if key not in index.entries}

    def put(
        self, kind: str, encoder_identity: str, texts: Sequence[str], embeddings: Embeddings
    ) -> None:
        """Store the embeddings of ``texts`` as one new shard.

        ``embeddings``: a list of 2-D token arrays, or a 2-D array of one row per text.
        """
        self._put(kind, encoder_identity, [text_key(text) for text in texts], embeddings)

    def _put(
        self, kind: str, encoder_identity: str, keys: list[str], embeddings: Embeddings
    ) -> None:
        """Write one shard of the embeddings of the texts whose hashes are ``keys``."""
        if not keys:
            return
        index = self._index(kind, encoder_identity)
        ragged = isinstance(embeddings, list | tuple)
        if index.ragged is not None and ragged != index.ragged:
            raise ValueError(
                f"cache kind {kind!r} holds {'token' if index.ragged else 'pooled'} embeddings; "
                "store the other shape under another kind"
            )
        embeddings = _as_float32(embeddings)
        _check_count(embeddings, len(keys))
        lengths = [len(array) for array in embeddings] if ragged else [1] * len(embeddings)
        data = np.concatenate(embeddings) if ragged else embeddings
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        name = f"shard-{time.time_ns():020d}-{uuid.uuid4().hex[:12]}"
        digest = hashlib.blake2b(digest_size=16)
        _atomic_write(
            index.folder / f"{name}{_DATA_SUFFIX}", lambda f: np.save(_Hashing(f, digest), data)
        )
        _atomic_write(
            index.folder / f"{name}{_INDEX_SUFFIX}",
            lambda f: np.savez(
                f,
                keys=np.array(keys, dtype="U32"),
                offsets=offsets,
                ragged=ragged,
                checksum=digest.hexdigest(),
            ),
        )
        self._add_shard(index, name, verified=True)

    def remove_stale_temp_files(self, older_than_s: float = STALE_TEMP_SECONDS) -> int:
        """Delete temporary files left by killed writers; returns how many were removed.

        Only files older than ``older_than_s`` go, so a write in progress elsewhere survives,
        and only in the cache's key folders: ``paths.cache_dir`` may be a folder of the user's,
        whose other files are theirs. A killed model assembly's folder is swept by
        :func:`regbias.embeddings.parts.assemble_model`.
        """
        files = (
            p
            for p in self.root.glob(f"*/{TEMP_PREFIX}*")
            if _KEY_FOLDER.fullmatch(p.parent.name) and not p.is_dir()
        )
        return remove_stale(files, older_than_s)

    def _index(self, kind: str, encoder_identity: str) -> _KeyIndex:
        """The in-memory index of one key, read from disk on first use."""
        digest = hashlib.blake2b(f"{encoder_identity}\0{kind}".encode(), digest_size=16)
        key = digest.hexdigest()
        if key not in self._indexes:
            folder = self.root / key
            folder.mkdir(exist_ok=True)
            if not (folder / "key.json").exists():
                label = json.dumps({"encoder_identity": encoder_identity, "kind": kind})
                _atomic_write(folder / "key.json", lambda f: f.write(label.encode()))
            self._indexes[key] = _KeyIndex(folder)
            self._scan(self._indexes[key])
        return self._indexes[key]

    def _scan(self, index: _KeyIndex) -> None:
        """Add the shards other processes wrote since the last scan; oldest first wins."""
        names = sorted(
            path.name.removesuffix(_INDEX_SUFFIX)
            for path in index.folder.glob(f"shard-*{_INDEX_SUFFIX}")
        )
        for name in names:
            if name not in index.shards:
                self._add_shard(index, name)

    def _add_shard(self, index: _KeyIndex, name: str, verified: bool = False) -> None:
        """Load a shard's index, check its data (once per process), record its texts.

        ``verified``: this process just wrote the shard, so its checksum is known good.
        """
        try:
            keys, offsets, ragged, data = _open_shard(index.folder, name, verified)
        except Exception as error:  # BadZipFile, EOFError, OSError, ValueError, a bad checksum
            _quarantine(index.folder, name, error)
            index.shards[name] = _Shard(np.empty((0, 0), np.float32), ragged=False)
            return
        index.shards[name] = _Shard(data, ragged)
        index.ragged = ragged if index.ragged is None else index.ragged
        starts, ends = offsets[:-1].tolist(), offsets[1:].tolist()
        for key, start, end in zip(keys.tolist(), starts, ends, strict=True):
            index.entries.setdefault(key, (name, start, end))

    def _collect(self, index: _KeyIndex, keys: list[str]) -> Embeddings:
        """The stored embeddings of ``keys``, copied out of the shards, in order."""
        arrays = []
        for key in keys:
            name, start, end = index.entries[key]
            arrays.append(np.array(index.shards[name].data[start:end], dtype=np.float32))
        if index.ragged:
            return arrays
        if not arrays:
            return np.empty((0, 0), np.float32)
        return np.concatenate(arrays)


def remove_stale(paths: Iterable[Path], older_than_s: float = STALE_TEMP_SECONDS) -> int:
    """Delete the temporary ``paths`` (files, folders whole) older than ``older_than_s``; count."""
    removed = 0
    cutoff = time.time() - older_than_s
    for path in paths:
        try:
            if path.stat().st_mtime < cutoff:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed


class _CorruptShard(ValueError):
    """A shard whose data does not match its index."""


def _open_shard(
    folder: Path, name: str, verified: bool
) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray]:
    """A shard's keys, offsets, raggedness and memory-mapped rows, checked against its index."""
    with np.load(folder / f"{name}{_INDEX_SUFFIX}") as stored:
        keys, offsets = stored["keys"], stored["offsets"]
        ragged = bool(stored["ragged"])
        checksum = str(stored["checksum"]) if "checksum" in stored.files else None
    path = folder / f"{name}{_DATA_SUFFIX}"
    if not verified:
        if checksum is None:
            raise _CorruptShard("no checksum (written by an older regbias)")
        if _file_digest(path) != checksum:
            raise _CorruptShard("checksum mismatch: the data file was modified or damaged")
    data = np.load(path, mmap_mode="r")
    if len(offsets) != len(keys) + 1 or int(offsets[-1]) != len(data):
        raise _CorruptShard(f"index holds {int(offsets[-1])} rows, data {len(data)}")
    return keys, offsets, ragged, data


def _file_digest(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, lambda: hashlib.blake2b(digest_size=16)).hexdigest()


def _quarantine(folder: Path, name: str, error: BaseException) -> None:
    """Move a bad shard's files aside (kept for inspection) and say so in one line."""
    target = folder / _QUARANTINE
    target.mkdir(exist_ok=True)
    for suffix in (_INDEX_SUFFIX, _DATA_SUFFIX):
        try:
            (folder / f"{name}{suffix}").replace(target / f"{name}{suffix}")
        except FileNotFoundError:  # never written, or another process moved it first
            continue
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    log.warning(
        "corrupt embedding cache shard %s (%s): moved to %s, its texts will be embedded again",
        folder / f"{name}{_INDEX_SUFFIX}",
        reason,
        target,
    )


class _Hashing:
    """A write-only file wrapper that hashes what passes through (np.save streams into it)."""

    def __init__(self, file: object, digest: object) -> None:
        self._file, self._digest = file, digest

    def write(self, data: bytes) -> int:
        self._digest.update(data)  # type: ignore[attr-defined]
        return self._file.write(data)  # type: ignore[attr-defined]


def _as_float32(embeddings: Embeddings) -> Embeddings:
    """Float32 copies of a compute result, which may be a list of arrays or one array."""
    if isinstance(embeddings, list | tuple):
        arrays = [np.asarray(array, dtype=np.float32) for array in embeddings]
        for array in arrays:
            if array.ndim != 2:
                raise ValueError(f"token embeddings must be 2-D per text, got {array.shape}")
        return arrays
    array = np.asarray(embeddings, dtype=np.float32)
    if array.ndim != 2:
        raise ValueError(f"pooled embeddings must be 2-D (texts, dim), got {array.shape}")
    return array


def _check_count(computed: Embeddings, expected: int) -> None:
    """Raise unless there is one embedding per text."""
    if len(computed) != expected:
        raise ValueError(f"compute returned {len(computed)} embeddings for {expected} texts")


def _atomic_write(path: Path, write: Callable[..., object]) -> None:
    """Write ``path`` whole or not at all: a temporary file in its folder, then a rename.

    Raises:
        CacheError: the disk is full or not writable; the message names the file.
    """
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX)
    except OSError as error:
        raise _cache_error(path, error) from error
    try:
        os.fchmod(handle, file_mode())  # mkstemp makes 0600; a shared cache needs the umask's
        with os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _cache_error(path, error) from error
        raise


def _cache_error(path: Path, error: OSError) -> CacheError:
    reason = error.strerror or str(error).splitlines()[0]
    return CacheError(
        f"cannot write the embedding cache file {path} ({reason}): free space in "
        f"{path.parent.parent} or point paths.cache_dir (REGBIAS_CACHE_DIR) elsewhere"
    )


def embed_tokens(
    encoder: Encoder,
    cache: EmbeddingCache | None,
    texts: Sequence[str],
    padding: Padding = "real",
    batch_size: int = 64,
) -> list[np.ndarray]:
    """Token vectors of ``texts`` from ``encoder``, through ``cache`` when given.

    Per text a float32 ``(n_tokens, d)`` array, in input order; ``padding`` as
    :meth:`regbias.embeddings.encoder.Encoder.token_embeddings` takes it.
    """

    def compute(batch: list[str]) -> list[np.ndarray]:
        return encoder.token_embeddings(batch, padding=padding, batch_size=batch_size)

    if cache is None:
        return compute(list(texts))
    return cache.get_or_compute(f"tokens-{padding}", encoder.spec.identity, texts, compute)


def embed_pooled(
    encoder: Encoder, cache: EmbeddingCache | None, texts: Sequence[str], batch_size: int = 64
) -> np.ndarray:
    """Pooled ``(len(texts), d)`` float32 vectors of ``texts``, through ``cache`` when given."""

    def compute(batch: list[str]) -> np.ndarray:
        return encoder.pooled(batch, batch_size=batch_size)

    if cache is None:
        return compute(list(texts))
    kind = f"pooled-{encoder.spec.pooling}"
    result = cache.get_or_compute(kind, encoder.spec.identity, texts, compute)
    return result if len(texts) else np.empty((0, encoder.hidden_size), np.float32)
