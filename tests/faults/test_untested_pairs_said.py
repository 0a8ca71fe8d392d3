"""Item 3 of issue 36: with the test of record off, the findings say the pairs were not tested.

``analysis.tests.embedding.enabled=false`` left "Nothing here is beyond noise: ..." reading as if
the pairs had been tested. The bottom line points to the table for what was tested, and the
table's answer says it, once (issue 57).
"""

from __future__ import annotations

from types import SimpleNamespace

from regbias.analysis.study import StudyResults
from regbias.app.settings import read_settings
from regbias.report.answers import study_findings
from regbias.report.bottom_line import Evidence
from tests.faults.conftest import composed


def findings(*overrides: str) -> str:
    """The findings' summary (bottom line, questions' table), as a page shows them."""
    settings = read_settings(composed(*overrides)).analysis
    results = StudyResults([])
    analysis = SimpleNamespace(primary=None, correlations=None)
    evidence = Evidence.of(results, analysis, settings)  # type: ignore[arg-type]
    return study_findings(evidence, None).summary()


def test_the_bottom_line_says_the_pairs_were_not_tested():
    text = findings("analysis.tests.embedding.enabled=false")
    assert "No test rejected" in text
    bottom = text.split("\n\n")[0]
    assert bottom.endswith("the table below says what was tested.")
    assert text.count("| Not tested (analysis.tests.embedding.enabled=false) |") == 1


def test_an_enabled_test_adds_no_such_clause():
    assert "was not tested" not in findings()
