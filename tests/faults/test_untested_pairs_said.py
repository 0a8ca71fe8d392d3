"""Item 3 of issue 36: with the test of record off, the bottom line says the pairs were not tested.

``analysis.tests.embedding.enabled=false`` left "Nothing here is beyond noise: ..." reading as if
the pairs had been tested.
"""

from __future__ import annotations

from types import SimpleNamespace

from regbias.analysis.study import StudyResults
from regbias.app.settings import read_settings
from regbias.report.bottom_line import Evidence
from tests.faults.conftest import composed


def sentence(*overrides: str) -> str:
    settings = read_settings(composed(*overrides)).analysis
    results = StudyResults([])
    analysis = SimpleNamespace(primary=None, correlations=None)
    return Evidence.of(results, analysis, settings).sentence()  # type: ignore[arg-type]


def test_the_bottom_line_says_the_pairs_were_not_tested():
    line = sentence("analysis.tests.embedding.enabled=false")
    assert "No test rejected" in line
    assert "which pairs differ was not tested (analysis.tests.embedding.enabled=false)" in line


def test_an_enabled_test_adds_no_such_clause():
    assert "not tested" not in sentence()
