"""Every result artifact is written by ``report/``: ``study/`` and ``app/`` call no writer.

An AST scan of ``src/regbias/study`` and ``src/regbias/app``: no call of a
:class:`regbias.tracking.runs.RunLog` artifact writer (``table``, ``json``, ``figure``,
``text``, ``file``, ``directory``) on a run. A run is a name annotated ``RunLog`` (a parameter
or a variable) or bound to ``RunLog(...)`` anywhere in those folders, or a run's
``.under(...)`` prefix. Params, metrics and tags (``run.params``, ``run.metrics``,
``run.tags``) are no artifacts and stay with the wiring.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "regbias"
FOLDERS = (PACKAGE / "study", PACKAGE / "app")
#: ``RunLog``'s methods that write an artifact into the run.
WRITERS = frozenset({"table", "json", "figure", "text", "file", "directory"})


def _is_runlog(annotation: ast.expr | None) -> bool:
    """Whether an annotation names ``RunLog`` (alone, optional or quoted)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return "RunLog" in annotation.value
    return any(isinstance(n, ast.Name) and n.id == "RunLog" for n in ast.walk(annotation))


def run_names(trees: list[ast.Module]) -> set[str]:
    """The names bound to a run in ``trees``: annotated ``RunLog`` or assigned ``RunLog(...)``."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.arg) and _is_runlog(node.annotation):
                names.add(node.arg)
            elif isinstance(node, ast.AnnAssign) and _is_runlog(node.annotation):
                if isinstance(node.target, ast.Name):
                    names.add(node.target.id)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                func = node.value.func
                if isinstance(func, ast.Name) and func.id == "RunLog":
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _is_run(receiver: ast.expr, names: set[str]) -> bool:
    """Whether ``receiver`` is a run: one of ``names``, ``x.<name>``, or ``<run>.under(...)``."""
    if isinstance(receiver, ast.Name):
        return receiver.id in names
    if isinstance(receiver, ast.Attribute):
        return receiver.attr in names
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute):
        return receiver.func.attr == "under" and _is_run(receiver.func.value, names)
    return False


def writer_calls(tree: ast.Module, names: set[str]) -> list[str]:
    """``line: receiver.method`` for each call of a run's artifact writer in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr in WRITERS and _is_run(node.func.value, names):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}")
    return found


def test_study_and_app_write_no_result_artifact() -> None:
    paths = sorted(p for folder in FOLDERS for p in folder.rglob("*.py"))
    trees = {p: ast.parse(p.read_text()) for p in paths}
    names = run_names(list(trees.values()))
    assert {"run", "parent"} <= names  # the scan sees the runs the wiring is handed
    found = {
        str(p.relative_to(PACKAGE)): calls
        for p, tree in trees.items()
        if (calls := writer_calls(tree, names))
    }
    assert not found, f"write these through a function of regbias.report: {found}"


def test_the_scan_finds_each_form_of_a_write() -> None:
    source = """
def f(run: RunLog, target: "RunLog", other: RunLog | None, draws: Draws) -> None:
    run.table(frame, "a.csv")
    target.directory(local)
    other.json({}, "b.json")
    run.under("variant-x/").figure(figure, "c.png")
    own = RunLog(client, run_id)
    own.text("page", "report.md")
    self.run.file(page)
    draws.table()
    run.metrics({"a": 1.0})
    run.tags({"a": "b"})
    json.dumps({})
"""
    tree = ast.parse(source)
    found = writer_calls(tree, run_names([tree]))
    assert [int(line.split(":")[0]) for line in found] == [3, 4, 5, 6, 8, 9]
