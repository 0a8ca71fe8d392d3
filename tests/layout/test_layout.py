"""Knowledge written once: the layout rules a reviewer would otherwise check by hand.

* no module of ``src/regbias`` over :data:`MAX_LINES` lines;
* no private name (``_x``) of ours imported from another module, in the package or its tests;
* no public constant (``UPPER_CASE``) defined at module level in two modules: one home, and
  importers import it (task lists, environment variables, defaults);
* every environment variable regbias reads is named by one constant, in one module;
* imports go down :data:`LAYERS` only (``docs/architecture.md``'s import order).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "regbias"
MAX_LINES = 500
ENV_PREFIXES = ("REGBIAS_", "MLFLOW_TRACKING_URI")
#: The package's folders and top-level modules, top to bottom: each imports only from the
#: layers below its own (the modules of one layer import none of each other).
LAYERS = (
    ("app",),
    ("study",),
    ("report",),
    ("tracking",),
    ("analysis",),
    ("performance",),
    ("distances",),
    ("embeddings",),
    ("data",),
    ("settings_reader", "config_files", "console", "tables", "files", "interrupt", "numbers"),
    ("serial",),
    ("redaction",),
    ("errors",),
)


def _modules(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


def _constants(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level ``NAME = value`` / ``NAME: T = value`` with a public upper-case name."""
    found: dict[str, ast.expr | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            found |= dict.fromkeys(names, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node.value
    return {n: v for n, v in found.items() if n.isupper() and not n.startswith("_") and n != "T"}


def _unit(path: Path) -> str:
    """The folder or top-level module of the package that ``path`` belongs to."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imported_units(tree: ast.Module) -> set[str]:
    """The package's folders and top-level modules a module imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] == "regbias":
                found |= {parts[1]} if len(parts) > 1 else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("regbias.")}
    return found


def test_imports_go_down_the_layers() -> None:
    layer = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}
    modules = [p for p in _modules(PACKAGE) if p.name != "__init__.py" or p.parent != PACKAGE]
    unplaced = sorted({_unit(p) for p in modules} - set(layer))
    assert not unplaced, f"give these a layer in LAYERS and docs/architecture.md: {unplaced}"
    upward = [
        f"{p.relative_to(PACKAGE)} imports regbias.{unit}"
        for p in modules
        for unit in sorted(_imported_units(ast.parse(p.read_text())) - {_unit(p)})
        if layer[unit] <= layer[_unit(p)]
    ]
    assert not upward, f"import only from the layers below (docs/architecture.md): {upward}"


#: analysis/ by question, top to bottom: the study's analysis (``study.py``) uses every
#: question; a question imports only the questions below it and the shared modules (the
#: bottom row: the pair table, ranks, the Mantel relabellings, multiplicity).
ANALYSIS_LAYERS = (
    ("study",),
    ("encoders",),
    ("robustness",),
    ("correlation",),
    ("power",),
    ("explain", "counterfactual"),
    ("pairs",),
    ("pair_table", "ranks", "permutations", "multiplicity"),
)
ANALYSIS = PACKAGE / "analysis"


def _question(module: str) -> str | None:
    """The question (subpackage or shared module) of ``regbias.analysis.<...>``, if any."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["regbias", "analysis"] else None


def test_analysis_questions_import_down_only() -> None:
    layer = {unit: depth for depth, units in enumerate(ANALYSIS_LAYERS) for unit in units}
    shared = set(ANALYSIS_LAYERS[-1])
    modules = [p for p in _modules(ANALYSIS) if p.name != "__init__.py"]
    unplaced = sorted(
        {p.relative_to(ANALYSIS).parts[0].removesuffix(".py") for p in modules} - set(layer)
    )
    assert not unplaced, (
        f"give these a place in ANALYSIS_LAYERS and docs/architecture.md: {unplaced}"
    )
    upward = []
    for path in modules:
        own = path.relative_to(ANALYSIS).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                other = _question(node.module)
                if other is None or other == own or (own in shared and other in shared):
                    continue
                if layer[other] <= layer[own]:
                    upward.append(f"{path.relative_to(PACKAGE)} imports {node.module}")
    assert not upward, f"import only from the questions below (docs/architecture.md): {upward}"


def test_app_imports_no_analysis_internals() -> None:
    """``app/`` is Hydra, the CLI, printing and launching: the study floor wires the analysis."""
    found = [
        f"{p.relative_to(PACKAGE)} imports {node.module}"
        for p in _modules(PACKAGE / "app")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("regbias.analysis")
    ]
    assert not found, f"reach the analysis through regbias.study or regbias.report: {found}"


#: Who may import a framework (docs/architecture.md): Hydra's config is read in app/ only
#: (``config_files`` reads one packaged YAML with OmegaConf); MLflow is reached through
#: tracking/ (app/ opens the runs).
MAY_IMPORT = {
    "hydra": {"app"},
    "omegaconf": {"app", "config_files"},
    "mlflow": {"app", "tracking"},
}


def test_only_their_floors_import_hydra_and_mlflow() -> None:
    found = []
    for path in _modules(PACKAGE):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module and not node.level
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if top in MAY_IMPORT and _unit(path) not in MAY_IMPORT[top]:
                    found.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not found, f"only {MAY_IMPORT} (docs/architecture.md): {found}"


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _modules(PACKAGE)
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these along their sections: {long}"


def test_no_private_name_is_imported_from_another_module() -> None:
    imports = []
    for path in _modules(PACKAGE, ROOT / "tests", ROOT / "benchmarks"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if not node.module.startswith(("regbias", "tests")):
                continue  # a third-party private name is that library's business
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    imports.append(f"{path.relative_to(ROOT)}: {node.module}.{alias.name}")
    assert not imports, "make these public where they belong, or keep them in their module"


def test_no_public_constant_is_defined_in_two_modules() -> None:
    homes: dict[str, list[str]] = defaultdict(list)
    for path in _modules(PACKAGE):
        for name in _constants(ast.parse(path.read_text())):
            homes[name].append(str(path.relative_to(PACKAGE)))
    twice = {name: where for name, where in homes.items() if len(where) > 1}
    assert not twice, f"define each once and import it: {twice}"


def test_each_environment_variable_is_named_once() -> None:
    homes: dict[str, list[str]] = defaultdict(list)
    for path in _modules(PACKAGE):
        for node in ast.walk(ast.parse(path.read_text())):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and value.startswith(ENV_PREFIXES) and value.isupper():
                homes[value].append(str(path.relative_to(PACKAGE)))
    twice = {name: where for name, where in homes.items() if len(where) > 1}
    assert not twice, f"name each variable in one constant and import it: {twice}"
    assert {"REGBIAS_DATA_DIR", "REGBIAS_CACHE_DIR", "REGBIAS_OFFLINE"} <= set(homes)


def test_the_config_alone_takes_the_data_directory_from_the_environment() -> None:
    """``conf/config.yaml`` sets ``paths.data_dir`` from ``$REGBIAS_DATA_DIR``, as the cache's.

    No module chooses the directory from the variable (``data/data_dir.py`` reads it only to
    say where a value came from).
    """
    config = (PACKAGE / "conf" / "config.yaml").read_text()
    assert "data_dir: ${oc.env:REGBIAS_DATA_DIR," in config
    assert "cache_dir: ${oc.env:REGBIAS_CACHE_DIR," in config
    readers = [
        str(p.relative_to(PACKAGE))
        for p in _modules(PACKAGE)
        if "environ.get(DATA_DIR_ENV)" in p.read_text() and p.name != "data_dir.py"
    ]
    assert not readers, f"read the composed paths.data_dir instead: {readers}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(tree: ast.Module, known: set[str]) -> set[str]:
    """The package's modules a module imports, anywhere in it (inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module in known:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names} & known
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names} & known
    return found


def test_no_two_modules_import_each_other() -> None:
    """No circle of imports between the package's modules, deferred (in-function) ones included.

    A circle is what an import inside a function hides; one owner of what both sides use
    breaks it (``study/parts.py`` owns the study the test of record and power both read).
    """
    paths = {_module_name(p): p for p in _modules(PACKAGE)}
    graph = {
        name: _imported_modules(ast.parse(path.read_text()), set(paths)) - {name}
        for name, path in paths.items()
    }
    circles: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                circles.append(" -> ".join([*trail[trail.index(other) :], other]))
            elif other not in state:
                visit(other, [*trail, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, f"give what both sides use one owner below them: {circles}"
