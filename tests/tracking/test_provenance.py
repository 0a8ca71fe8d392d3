"""git_state: the hash of uncommitted code changes, and only of code."""

from __future__ import annotations

import subprocess
from pathlib import Path

from regbias.tracking.provenance import git_state


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_only_edits_to_the_code_change_the_diff_hash(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@t")
    _git(tmp_path, "config", "user.name", "t")
    for name in ("src/m.py", "docs/a.md", "tests/t.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "c")
    clean = git_state(tmp_path)
    assert clean["git.dirty"] == "false" and clean["git.diff_hash"] == "none"
    (tmp_path / "docs" / "a.md").write_text("edited during a sweep\n")
    (tmp_path / "tests" / "t.py").write_text("x = 2\n")
    (tmp_path / "notes.md").write_text("untracked, outside the code\n")
    assert git_state(tmp_path) == clean
    (tmp_path / "src" / "m.py").write_text("x = 2\n")
    edited = git_state(tmp_path)
    assert edited["git.dirty"] == "true" and edited["git.diff_hash"] != "none"
    (tmp_path / "src" / "new.py").write_text("y = 1\n")  # untracked code counts too
    assert git_state(tmp_path)["git.diff_hash"] != edited["git.diff_hash"]
