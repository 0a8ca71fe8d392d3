"""Adding a per-pair statistic touches two modules: the docs' example, run through the writer.

The computing module and the declarations are taken from ``docs/extending.md`` ("Adding a
per-pair statistic"), so the example a developer copies is the one tested. The test of record
runs on a small study (three regions of seeded sentence vectors, one set apart); the example's
function fills its column as ``_test`` would, and the real writer
(:func:`regbias.report.publish.log_analysis`) puts the statistic in ``pairwise.csv``, the
report and the MLflow metrics with no change to ``report/``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
from typing import Any

import numpy as np

from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.analysis.tests.embedding import PairTests, PairTestSettings, plan_pairs, record_tests
from regbias.report.publish import log_analysis
from regbias.tracking import artifacts as paths
from tests.conftest import ROOT, packaged
from tests.report.test_findings import FakeRun

GUIDE = ROOT / "docs" / "extending.md"
COLUMN = "centroid_cosine"


def _section() -> str:
    return GUIDE.read_text().split("## Adding a per-pair statistic", 1)[1].split("\n## ", 1)[0]


def _blocks() -> tuple[str, str]:
    """The guide's computing module and its declarations (its two Python blocks)."""
    computing, declaring = re.findall(r"```python\n(.*?)```", _section(), re.S)
    return computing, declaring


def _example() -> tuple[Any, type[PairTests]]:
    """The guide's function and its class, each run as a module of its own."""
    computing, declaring = _blocks()
    module = types.ModuleType("centroid")
    exec(compile(computing, "centroid.py", "exec"), module.__dict__)
    declared: dict[str, Any] = {"__name__": "centroid_tests"}
    exec(compile(declaring, "centroid_tests.py", "exec"), declared)
    return module.centroid_cosine, declared["CentroidTests"]


class MetricRun(FakeRun):
    """A :class:`FakeRun` that keeps the metrics it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.logged: dict[str, float] = {}

    def metrics(self, values: dict[str, float]) -> None:
        self.logged.update(values)


def _study() -> tuple[dict[str, list[str]], dict[str, np.ndarray]]:
    """Three regions of 20 texts; ``uk``'s vectors are moved away from the others'."""
    rng = np.random.default_rng(7)
    groups = {g: [f"{g} text {i}" for i in range(20)] for g in ("uk", "us", "au")}
    vectors = {t: rng.normal(size=4) + 1.0 for texts in groups.values() for t in texts}
    for text in groups["uk"]:
        vectors[text] = vectors[text] + np.array([3.0, -3.0, 0.0, 0.0])
    return groups, vectors


def _record(function: Any, kind: type[PairTests]) -> PairTests:
    """The test of record on the study, its rows gaining the statistic as ``_test`` adds it."""
    groups, vectors = _study()
    settings = packaged(PairTestSettings, "analysis.tests.embedding", relabellings=999)
    settings = dataclasses.replace(settings, statistic="mean", resamples=50)

    def embed(texts: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in texts])

    tests = record_tests(groups, embed, settings)
    values = [
        function(embed(plan.side_a), embed(plan.side_b)) if plan.testable else math.nan
        for plan in plan_pairs(groups, settings, ())
    ]
    table = tests.table.assign(**{COLUMN: values})
    return kind(tests.settings, tests.alpha, table, tests.group_sizes)


def _published(tests: PairTests) -> MetricRun:
    pairwise = tests.table[["group_a", "group_b"]].copy()
    analysis = Analysis(None, None, None, pairwise, None)
    results = StudyResults(list(tests.group_sizes), meta={"dataset": "toy"}, record=tests)
    run = MetricRun()
    log_analysis(run, results, analysis, packaged(AnalysisSettings, "analysis"))  # type: ignore[arg-type]
    return run


def test_the_statistic_reaches_pairwise_csv_the_report_and_mlflow() -> None:
    function, kind = _example()
    tests = _record(function, kind)
    run = _published(tests)
    uk_us = tests.table[(tests.table["group_a"] == "uk") & (tests.table["group_b"] == "us")]
    value = float(uk_us[COLUMN].iloc[0])
    assert value > 0.05 and bool(uk_us["differs"].iloc[0])

    pairwise = run.tables[paths.PAIRWISE_CSV]
    assert pairwise[f"pair_test_{COLUMN}"].tolist() == tests.table[COLUMN].tolist()
    assert "pair_test_effect" in pairwise and "pair_test_z" in pairwise

    report = run.texts[paths.REPORT_MD]
    section = report.split("## Which pairs differ: the test of record", 1)[1]
    header = next(line for line in section.splitlines() if line.startswith("| pair |"))
    assert header.endswith(f"| {COLUMN} |")
    assert f"centroid cosine {value:.3g}" in report
    assert f"centroid cosine {value:.3g}" in run.texts[paths.FINDINGS_JSON]

    assert run.logged[f"pair_test/uk__us/{COLUMN}"] == value
    assert {f"pair_test/{a}__{b}/{COLUMN}" for a, b in [("uk", "au"), ("us", "au")]} <= set(
        run.logged
    )


def test_without_the_declarations_the_statistic_reaches_nothing() -> None:
    """The same table as the shipped class: the column is in the test's table only."""
    function, _ = _example()
    run = _published(_record(function, PairTests))
    assert f"pair_test_{COLUMN}" not in run.tables[paths.PAIRWISE_CSV]
    assert "centroid cosine" not in run.texts[paths.REPORT_MD]
    assert not any(key.endswith(f"/{COLUMN}") for key in run.logged)
    assert COLUMN in run.tables[paths.PAIR_TESTS_CSV]


def test_the_guide_names_two_modules_and_declares_through_attributes_only() -> None:
    """At most two modules: the guide's, both there; the class adds the documented attributes."""
    section = _section()
    touched = set(re.findall(r"^- `(src/regbias/[\w/<>]+\.py)`", section, re.M))
    embedding = "src/regbias/analysis/tests/embedding.py"
    assert touched == {embedding, "src/regbias/analysis/tests/<statistic>.py"}
    assert (ROOT / embedding).is_file()
    _, kind = _example()
    added = {name for name in vars(kind) if not name.startswith("_")}
    documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert (
        added
        == documented
        == {
            "pairwise_columns",
            "metric_columns",
            "section_columns",
            "estimate_format",
        }
    )
    # Each is an attribute the shipped class already reads: no method, nothing in report/.
    assert all(hasattr(PairTests, name) for name in added)
    assert all(not callable(getattr(kind, name)) for name in added)
    for module in ("report/record.py", "report/publish.py"):
        assert COLUMN not in (ROOT / "src/regbias" / module).read_text()
