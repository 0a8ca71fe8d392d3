"""A per-pair statistic is one function and one declared column: the docs' example, published.

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
import sys
import types
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.pairs.columns import PairColumn
from regbias.analysis.pairs.embedding import (
    EmbeddingPairTests,
    EmbeddingTestSettings,
    embedding_pair_tests,
)
from regbias.analysis.pairs.performance import (
    PerformancePairTests,
    PerformanceTestSettings,
    performance_pair_tests,
)
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.report.publish import log_analysis
from regbias.report.record import pair_table, pairs_columns, pairs_lines, pairs_metrics
from regbias.tracking import artifacts as paths
from tests.analysis.pairs.test_performance import scored_group, texts_frame
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


def _example() -> tuple[Any, type[EmbeddingPairTests]]:
    """The guide's function and its class, each run as a module of its own.

    The declaration imports the function from its module in the package
    (``regbias.analysis.pairs.centroid``): the guide's first block, put there for the test.
    """
    computing, declaring = _blocks()
    module = types.ModuleType("regbias.analysis.pairs.centroid")
    exec(compile(computing, "centroid.py", "exec"), module.__dict__)
    declared: dict[str, Any] = {"__name__": "centroid_tests"}
    with mock.patch.dict(sys.modules, {module.__name__: module}):
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


def _record(kind: type[EmbeddingPairTests]) -> EmbeddingPairTests:
    """The test of record on the study, as the declared ``kind`` (its columns computed)."""
    groups, vectors = _study()
    settings = packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=999)
    settings = dataclasses.replace(settings, statistic="mean", resamples=50)

    def embed(texts: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in texts])

    return embedding_pair_tests(groups, embed, settings, kind=kind)


def _published(tests: EmbeddingPairTests) -> MetricRun:
    pairwise = tests.table[["group_a", "group_b"]].copy()
    analysis = Analysis(None, None, None, pairwise, None)
    results = StudyResults(list(tests.group_sizes), meta={"dataset": "toy"}, record=tests)
    run = MetricRun()
    log_analysis(run, results, analysis, packaged(AnalysisSettings, "analysis"))  # type: ignore[arg-type]
    return run


def test_the_statistic_reaches_pairwise_csv_the_report_and_mlflow() -> None:
    function, kind = _example()
    tests = _record(kind)
    run = _published(tests)
    uk_us = tests.table[(tests.table["group_a"] == "uk") & (tests.table["group_b"] == "us")]
    value = float(uk_us[COLUMN].iloc[0])
    assert value > 0.05 and bool(uk_us["differs"].iloc[0])
    groups, vectors = _study()
    sides = [np.stack([vectors[t] for t in groups[g]]) for g in ("uk", "us")]
    assert value == function(*sides)  # the test called the declared function on the sides

    pairwise = run.tables[paths.PAIRWISE_CSV]
    assert pairwise[f"pair_test_{COLUMN}"].tolist() == tests.table[COLUMN].tolist()
    assert "pair_test_effect" in pairwise and "pair_test_z" in pairwise

    report = run.texts[paths.REPORT_MD]
    section = report.split("## Which pairs differ: the test of record", 1)[1]
    header = next(line for line in section.splitlines() if line.startswith("| pair |"))
    assert f"| {COLUMN} |" in header
    assert f"centroid cosine {value:.3g}" in report
    assert f"centroid cosine {value:.3g}" in run.texts[paths.FINDINGS_JSON]

    assert run.logged[f"pair_test/uk__us/{COLUMN}"] == value
    assert {f"pair_test/{a}__{b}/{COLUMN}" for a, b in [("uk", "au"), ("us", "au")]} <= set(
        run.logged
    )


def test_without_the_declaration_the_statistic_is_not_computed() -> None:
    """The shipped class: no such column anywhere."""
    run = _published(_record(EmbeddingPairTests))
    assert f"pair_test_{COLUMN}" not in run.tables[paths.PAIRWISE_CSV]
    assert "centroid cosine" not in run.texts[paths.REPORT_MD]
    assert not any(key.endswith(f"/{COLUMN}") for key in run.logged)
    assert COLUMN not in run.tables[paths.PAIR_TESTS_CSV]


def test_the_guide_names_two_modules_and_one_declaration() -> None:
    """Two modules, both there; the class adds one attribute, ``columns``, one column longer."""
    section = _section()
    touched = set(re.findall(r"^- `(src/regbias/[\w/<>]+\.py)`", section, re.M))
    embedding = "src/regbias/analysis/pairs/embedding.py"
    assert touched == {embedding, "src/regbias/analysis/pairs/<statistic>.py"}
    assert (ROOT / embedding).is_file()
    _, kind = _example()
    assert {name for name in vars(kind) if not name.startswith("_")} == {"columns"}
    assert kind.columns[:-1] == EmbeddingPairTests.columns
    documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert documented <= {f.name for f in dataclasses.fields(PairColumn)}
    for module in ("report/record.py", "report/publish.py"):
        assert COLUMN not in (ROOT / "src/regbias" / module).read_text()


def _log_odds_right(side_a: np.ndarray, side_b: np.ndarray) -> float:
    """A performance statistic: the log odds ratio of being right, a against b (smoothed)."""
    right_a, right_b = float(side_a[:, 0].sum()), float(side_b[:, 0].sum())
    odds_a = (right_a + 0.5) / (len(side_a) - right_a + 0.5)
    odds_b = (right_b + 0.5) / (len(side_b) - right_b + 0.5)
    return math.log(odds_a / odds_b)


class OddsTests(PerformancePairTests):
    """The performance test of record with one more declared column (the guide's recipe)."""

    columns = (
        *PerformancePairTests.columns,
        PairColumn(
            "log_odds_right",
            pairwise=True,
            logged=True,
            shown="log odds right",
            signed="flip",
            estimate="log odds right {log_odds_right:+.2f}",
            compute=_log_odds_right,
        ),
    )


def test_a_performance_statistic_is_one_declaration_and_one_function() -> None:
    rng = np.random.default_rng(3)
    groups = {
        "au": scored_group(rng, 300, 0.5, (0.9, 0.9)),
        "uk": scored_group(rng, 300, 0.5, (0.5, 0.5)),
    }
    texts = PerfTexts.of(texts_frame(groups))
    settings = packaged(PerformanceTestSettings, "analysis.tests.performance", relabellings=999)
    tests = performance_pair_tests(texts, ["au", "uk"], settings, kind=OddsTests)
    row = tests.table.iloc[0]
    assert row["log_odds_right"] > 0.5 and bool(row["differs"])
    scores = texts.scores()
    sides = [scores[texts.members[g]] for g in ("au", "uk")]
    assert row["log_odds_right"] == pytest.approx(_log_odds_right(*sides))
    pairwise = pd.DataFrame({"group_a": ["uk"], "group_b": ["au"]})  # the other order: flipped
    flipped = pairs_columns(pairwise, tests)["perf_test_log_odds_right"].iloc[0]
    assert flipped == -row["log_odds_right"]
    assert "| log odds right |" in "\n".join(pair_table(tests))
    assert f"log odds right {row['log_odds_right']:+.2f}" in tests.estimate(row)
    assert "perf_test/au__uk/log_odds_right" in pairs_metrics(tests)


def test_old_and_hand_built_tables_render() -> None:
    """A table lacking declared columns takes their defaults; an older name is read as now."""
    hand = pd.DataFrame({"group_a": ["uk"], "group_b": ["us"], "family": ["regions"], "p": [0.01]})
    settings = packaged(EmbeddingTestSettings, "analysis.tests.embedding")
    tests = EmbeddingPairTests(settings, 0.05, hand)
    assert [c.name for c in tests.schema()] == list(tests.table.columns)
    assert "| uk-us |" in "\n".join(pair_table(tests)) and pairs_lines(tests)
    older = pd.DataFrame(
        {"group_a": ["uk"], "group_b": ["us"], "gap": [0.1], "p": [float("nan")], "note": ["why"]}
    )
    perf = packaged(PerformanceTestSettings, "analysis.tests.performance")
    read = PerformancePairTests(perf, 0.05, "accuracy", math.nan, older, pd.DataFrame(), 2)
    assert read.table["untestable"].tolist() == ["why"] and "note" not in read.table
    assert "untestable: why" in "\n".join(pair_table(read))
