"""Item 2 of issue 46's fault list: ``task=analyze`` and a verdictless test opened "Nothing here
is beyond noise".

On a table whose test of record found differing pairs, ``task=analyze`` dropped the table's
``pair_test_*`` columns and its bottom line said nothing was found; with one relabelling (no
verdict possible) the bottom line opened the same way as a test that ran and found nothing.
Checked on the findings a page, ``findings.json`` and the terminal show (issue 57: these tests
once read a bottom line no page printed any more, and the verdictless opening had come back).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from regbias.analysis.pair_table import recorded_verdicts
from regbias.analysis.study import StudyResults
from regbias.app.settings import read_settings
from regbias.report.answers import study_findings
from regbias.report.bottom_line import Evidence
from tests.faults.conftest import composed
from tests.faults.test_untestable_pairs import record_of

REGIONS = ["au", "ca", "nz", "uk"]


def table(tmp_path: Path, differing: set[tuple[str, str]]) -> Path:
    """A pairwise table with the test of record's columns, ``differing`` marked as differing."""
    groups = [*REGIONS, "baseline"]
    rows = []
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            family = "reference" if b == "baseline" else "regions"
            found = (a, b) in differing
            rows.append(
                {
                    "group_a": a,
                    "group_b": b,
                    "dist_x": float(i),
                    "gap_accuracy": 0.01 * len(rows),
                    "pair_test_family": family,
                    "pair_test_p_adjusted": 0.001 if found else 0.6,
                    "pair_test_differs": found,
                }
            )
    path = tmp_path / "pairwise.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def findings(recorded=(), record=None) -> str:
    """The findings' summary: the bottom line and the questions' table, as a page shows them."""
    settings = read_settings(composed()).analysis
    results = StudyResults([], record=record, recorded=list(recorded))
    analysis = SimpleNamespace(primary=None, correlations=None)
    evidence = Evidence.of(results, analysis, settings)  # type: ignore[arg-type]
    return study_findings(evidence, None).summary()


def test_the_tables_own_verdicts_reach_the_bottom_line(tmp_path):
    path = table(tmp_path, {("au", "ca"), ("nz", "uk"), ("au", "baseline")})
    verdicts = recorded_verdicts(path, ["baseline"])
    assert [(v.family, v.tested, v.differing) for v in verdicts] == [
        ("regions", 6, ("au-ca", "nz-uk")),
        ("reference", 4, ("au-baseline",)),
    ]
    text = findings(verdicts)
    assert "No test rejected" not in text
    assert text.startswith("**Bottom line.** Some tests rejected at their level")
    assert (
        "| As recorded, not re-run: 2 of 6 region pairs (au-ca, nz-uk); 1 of 4 pairs with a "
        "reference group (au-baseline) |" in text
    )


def test_a_table_without_those_columns_carries_no_verdict(tmp_path):
    path = table(tmp_path, set())
    frame = pd.read_csv(path).drop(columns=["pair_test_differs"])
    frame.to_csv(path, index=False)
    assert recorded_verdicts(path, ["baseline"]) == []


def test_a_table_whose_test_found_nothing_is_still_said(tmp_path):
    text = findings(recorded_verdicts(table(tmp_path, set()), ["baseline"]))
    assert text.startswith("**Bottom line.** No test rejected")
    assert "As recorded, not re-run: 0 of 6 region pairs; 0 of 4 pairs with a reference" in text


def test_a_test_that_cannot_reject_does_not_read_as_nothing_found():
    text = findings(record=record_of(relabellings=1))
    assert text.startswith(
        "**Bottom line.** Nothing was shown, and some pairs could get no verdict (too few "
        "relabellings)"
    )
    assert "No test rejected" not in text
    assert "| No verdict on the 2 region pairs (too few relabellings; 1 untestable) |" in text


def test_a_test_that_can_reject_and_finds_nothing_keeps_its_opening():
    same = record_of(relabellings=199)
    assert not findings(record=same).startswith("**Bottom line.** Nothing was shown")
