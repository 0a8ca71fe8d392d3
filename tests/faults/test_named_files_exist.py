"""Issue 36: every "regbias: error" and warning that names a file names one in the repository.

A warning of the secondary pair tests sent the reader to ``PROTOCOL.md``, a file the
repository does not hold.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "regbias"
#: A repository file a sentence may name: a path ending in .md, .yaml or .py.
NAMED = re.compile(r"(?<![\w/.{}$<-])((?:[\w.-]+/)*[\w-]+\.(?:md|yaml|py))\b")
#: Files a run writes (named in messages about its outputs), not the repository's.
WRITTEN = {"report.md"}


def _says(call: ast.Call) -> bool:
    """Whether a call raises an error of ours or logs a warning or error."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id.endswith("Error")
    return isinstance(func, ast.Attribute) and func.attr in {"warning", "error", "warn"}


def _sentences() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _says(node):
                for part in ast.walk(node):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        found.append((str(path.relative_to(ROOT)), part.value))
    return found


def test_every_file_an_error_or_warning_names_is_in_the_repository():
    missing = []
    for where, text in _sentences():
        for name in NAMED.findall(text):
            if name in WRITTEN or name.endswith("/report.md"):
                continue
            places = (ROOT / name, ROOT / "docs" / name, PACKAGE / name, ROOT / "conf" / name)
            if not any(place.exists() for place in places):
                missing.append(f"{where}: {name}")
    assert not missing, missing
