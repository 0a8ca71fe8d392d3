"""Content fingerprints of the data files a job reads, so resume never reuses stale results.

A file's SHA-256 is remembered in a small memo (JSON, in the cache folder) keyed by its path,
size and modification time; a file whose size or mtime changed is hashed again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from regbias.files import file_mode

MEMO_FILE = "file_hashes.json"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def memo_sha256(path: Path) -> str:
    """:func:`file_sha256`, remembered in this process by path, size and modification time."""
    stat = path.stat()
    return _sha256_at(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.cache
def _sha256_at(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))


def content_fingerprint(paths: list[Path], memo_dir: Path | None = None) -> str:
    """One hash over the names and contents of ``paths`` (a missing file counts as missing).

    ``memo_dir`` (created) memoises the file hashes; None hashes every file.
    """
    memo_path = None if memo_dir is None else memo_dir / MEMO_FILE
    memo = _read_memo(memo_path)
    parts, changed = [], False
    for path in paths:
        path = path.resolve()
        try:
            stat = path.stat()
        except OSError:
            parts.append(f"{path.name}:missing")
            continue
        stamp = [stat.st_size, stat.st_mtime_ns]
        known = memo.get(str(path))
        if known is None or known[:2] != stamp:
            memo[str(path)] = [*stamp, file_sha256(path)]
            changed = True
        parts.append(f"{path.name}:{memo[str(path)][2]}")
    if changed and memo_path is not None:
        _write_memo(memo_path, memo)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _read_memo(path: Path | None) -> dict[str, list[Any]]:
    if path is None:
        return {}
    try:
        memo = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}  # absent or damaged: hash again
    return memo if isinstance(memo, dict) else {}


def _write_memo(path: Path, memo: dict[str, list[Any]]) -> None:
    """Write the memo atomically; a memo that cannot be written only costs time later."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-memo-")
    except OSError:
        return
    try:
        os.fchmod(handle, file_mode())
        with os.fdopen(handle, "w") as stream:
            json.dump(memo, stream)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
