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
                # RunLog(...) or <anything>.under(...): a run, or a run's prefix
                if (isinstance(func, ast.Name) and func.id == "RunLog") or (
                    isinstance(func, ast.Attribute) and func.attr == "under"
                ):
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
    copy = run.under("variant-x/")
    copy.directory(local)
    own.text("page", "report.md")
    self.run.file(page)
    draws.table()
    run.metrics({"a": 1.0})
    run.tags({"a": "b"})
    json.dumps({})
"""
    tree = ast.parse(source)
    found = writer_calls(tree, run_names([tree]))
    assert [int(line.split(":")[0]) for line in found] == [3, 4, 5, 6, 9, 10, 11]


#: What reads a run's artifacts back (from the store, or its local copy's files).
READERS = frozenset(
    {
        "download",
        "download_artifacts",
        "copy_report",
        "read_headline",
        "read_table_at",
        "read_json",
        "read_distances",
        "read_text",
    }
)
#: The end of a sweep: whole modules, and app/summary.py's functions on that path.
SWEEP_END = ("study/variant_runs.py", "study/encoder_compare.py", "report/encoders.py")
SWEEP_END_FUNCTIONS = ("finish_sweep", "_headlines", "_sweep_times")


def _reader_calls(node: ast.AST) -> list[str]:
    return [
        f"{call.lineno}: {ast.unparse(call.func)}"
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and (
            call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        )
        in READERS
    ]


def test_the_end_of_a_sweep_reads_back_nothing_it_wrote() -> None:
    """Pages, headlines and comparisons come from the results in memory (issue 57, item 2);
    only the jobs' results are read, across hosts (``study/aggregate.load_job_results``)."""
    found = {
        m: calls
        for m in SWEEP_END
        if (calls := _reader_calls(ast.parse((PACKAGE / m).read_text())))
    }
    summary = ast.parse((PACKAGE / "app" / "summary.py").read_text())
    ends = [f for f in summary.body if isinstance(f, ast.FunctionDef)]
    for function in (f for f in ends if f.name in SWEEP_END_FUNCTIONS):
        if calls := _reader_calls(function):
            found[f"app/summary.py:{function.name}"] = calls
    assert not found, f"read from the results in memory instead: {found}"
