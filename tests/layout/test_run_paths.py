"""Every run-folder path is named in ``tracking/artifacts.py`` alone.

An AST scan of ``src/regbias``: outside that module no string (docstrings aside) holds a
path of a run folder, whether whole (``"analysis/pairwise.csv"``), formatted
(``f"distances/{name}.json"``), in a Markdown link, or joined (``folder / "analysis"``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from regbias.tracking import artifacts

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "regbias"
HOME = PACKAGE / "tracking" / "artifacts.py"
#: The run folder's top-level files: a literal of one is a path of the run folder.
TOP_FILES = {artifacts.REPORT_MD, artifacts.REPORT_HTML, artifacts.ERROR_TXT}
_FOLDERS = "|".join(re.escape(f) for f in artifacts.RUN_FOLDERS)
#: A run-folder path inside a string: one of its folders, then a file with a known suffix.
_PATH = re.compile(rf"(?<![\w./-])(?:{_FOLDERS})/[^\s()\"']*\.(?:csv|json|md|html|png|txt)\b")


def _docstrings(tree: ast.Module) -> set[int]:
    """The ``id`` of every docstring's constant node."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def _text(node: ast.expr) -> str | None:
    """A string constant's text; an f-string's with ``{}`` for each formatted value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) or "{}" for v in node.values)
    return None


def run_path_literals(source: str) -> list[str]:
    """The run-folder path literals of one module's source, as ``line: text``."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    names = {*artifacts.RUN_FOLDERS, *TOP_FILES}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip |= {id(v) for v in node.values}
        text = _text(node) if isinstance(node, ast.expr) and id(node) not in skip else None
        if text is not None and (_PATH.search(text) or text in TOP_FILES):
            found.append(f"{node.lineno}: {text!r}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = _text(node.right)
            if right in names:
                found.append(f"{node.lineno}: / {right!r}")
    return found


def test_no_module_but_artifacts_writes_a_run_folder_path() -> None:
    found = {
        str(path.relative_to(PACKAGE)): literals
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME and (literals := run_path_literals(path.read_text()))
    }
    assert not found, f"name these in regbias.tracking.artifacts and import them: {found}"


def test_the_scan_finds_each_form_of_a_path() -> None:
    source = '''
"""A docstring may say analysis/pairwise.csv."""
a = "analysis/pairwise.csv"
b = f"distances/{name}.json"
c = f"![power](figures/power.png)"
d = folder / "analysis" / "other.csv"
e = "report.md"
f = f"data/size/{group}"
g = "tokenizer.json"
'''
    found = run_path_literals(source)
    assert sorted(int(line.split(":")[0]) for line in found) == [3, 4, 5, 6, 7]
