"""The local report folder: regbias replaces only the files it wrote there, never a user's.

A run copies its report into ``<output dir>/report/``. That folder may be one a user chose
(``hydra.run.dir=DIR``) and already holds files of theirs. regbias writes a manifest,
:data:`MANIFEST`, beside its files, listing each one; a later copy removes exactly those and
nothing else. A non-empty folder without a manifest is refused, before any run starts
(:func:`check_report_folder`) and again at the copy, in one line that says what to do.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from regbias.errors import ConfigError

#: The folder of a local copy, inside a run's or a sweep's Hydra output directory.
REPORT_FOLDER = "report"
#: The settings that move a single run's and a sweep's outputs (named when a folder is refused).
RUN_DIR_KEY = "hydra.run.dir"
SWEEP_DIR_KEY = "hydra.sweep.dir"
#: The file in a report folder that lists, one relative path a line, the files regbias wrote.
MANIFEST = ".regbias-report"
#: How many of a user's files an error names (then "and N more").
NAMED = 3


def check_report_folder(folder: Path, key: str) -> None:
    """``folder`` is absent, empty or regbias's own (it holds the manifest).

    Raises:
        ConfigError: the folder holds files regbias did not write (``key`` is the setting
            that moves the outputs, named in the message).
    """
    if not folder.is_dir() or (folder / MANIFEST).is_file():
        return
    found = sorted(p.name for p in folder.iterdir())
    if found:
        raise ConfigError(_refusal(folder, found, key))


def replace_report(folder: Path, fill: Callable[[Path], None], key: str) -> Path:
    """Fill ``folder`` with what ``fill(staging)`` writes into an empty staging folder.

    The staging folder sits beside ``folder`` on the same disk, so a failed ``fill`` leaves
    the old report whole (:func:`move_in` says what replacing does).

    Raises:
        ConfigError: ``folder`` holds a user's files and no manifest, or a file of the new
            report would overwrite one of theirs.
    """
    staging = open_staging(folder, key)
    try:
        fill(staging)
        return move_in(staging, folder, key)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # the staging folder is regbias's own


def open_staging(folder: Path, key: str) -> Path:
    """An empty staging folder beside ``folder``, to be moved in by :func:`move_in`.

    Raises:
        ConfigError: ``folder`` holds a user's files and no manifest.
    """
    check_report_folder(folder, key)
    folder.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".report-", dir=folder.parent))


def move_in(staging: Path, folder: Path, key: str) -> Path:
    """The files of ``staging`` moved into ``folder``, replacing the last copy's.

    The files the last copy wrote (its manifest's) are removed; a user's files are left as
    they are, and none of them is overwritten.

    Raises:
        ConfigError: ``folder`` holds a user's files and no manifest, or a file of the new
            report would overwrite one of theirs.
    """
    check_report_folder(folder, key)
    written = sorted(p.relative_to(staging) for p in staging.rglob("*") if p.is_file())
    own = _listed(folder)
    clashes = [str(r) for r in written if (folder / r).exists() and r.as_posix() not in own]
    if clashes:
        raise ConfigError(_refusal(folder, clashes, key))
    folder.mkdir(parents=True, exist_ok=True)
    # Each file replaced in one step (a reader sees the old page or the new, never none
    # or half of one); then the old report's files the new one lacks are removed.
    for relative in written:
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (staging / relative).replace(folder / relative)
    _remove_own(folder, keep={r.as_posix() for r in written})
    _replace_text(folder / MANIFEST, "".join(f"{r.as_posix()}\n" for r in written))
    return folder


def record_written(path: Path) -> Path:
    """Add ``path``, written after the copy (a page, a comparison), to its report's manifest.

    The manifest is the nearest one in ``path``'s folders; a file outside any report folder
    is left as it is. Returns ``path``.
    """
    for folder in path.parents:
        manifest = folder / MANIFEST
        if manifest.is_file():
            relative = path.relative_to(folder).as_posix()
            if relative not in _listed(folder):
                with manifest.open("a", encoding="utf-8") as lines:
                    lines.write(f"{relative}\n")
            break
    return path


def write_page(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` in one step (a file beside it, renamed), listed as written.

    A browser reloading the page while it is rewritten reads the old page or the new one.
    """
    record_written(path)
    _replace_text(path, text)
    return path


def _replace_text(path: Path, text: str) -> None:
    """``path`` replaced by ``text`` through a new file of a unique name beside it."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".writing", dir=path.parent)
    temporary = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        temporary.chmod(0o644)  # mkstemp's 0600 would hide the page from other readers
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)  # a failed write (a full disk) leaves none behind


def _listed(folder: Path) -> set[str]:
    """The relative paths the manifest of ``folder`` lists (none without one)."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return set()
    return {line for line in manifest.read_text(encoding="utf-8").splitlines() if line}


def _remove_own(folder: Path, keep: set[str]) -> None:
    """Remove the files the manifest lists but ``keep``, then the folders this leaves empty."""
    listed = [folder / line for line in sorted(_listed(folder) - keep)]
    for path in listed:
        if path.resolve().is_relative_to(folder.resolve()) and path.is_file():
            path.unlink()
    inside = {p for path in listed for p in path.parents if p.is_relative_to(folder)} - {folder}
    for directory in sorted(inside, key=lambda p: len(p.parts), reverse=True):
        if directory.is_dir():
            with contextlib.suppress(OSError):  # only an empty one: a user's file keeps it
                directory.rmdir()


def _refusal(folder: Path, names: list[str], key: str) -> str:
    more = f" and {len(names) - NAMED} more" if len(names) > NAMED else ""
    shown = ", ".join(names[:NAMED]) + more
    return (
        f"the report folder {folder} holds files regbias did not write ({shown}); regbias "
        "deletes or overwrites only its own files: move them out of that folder, or write the "
        f"outputs elsewhere with {key}=/other/path"
    )
