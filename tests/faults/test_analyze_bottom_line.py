"""Item 2 of issue 46's fault list: ``task=analyze`` and a verdictless test opened "Nothing here
is beyond noise".

On a table whose test of record found differing pairs, ``task=analyze`` dropped the table's
``pair_test_*`` columns and its bottom line said nothing was found; with one relabelling (no
verdict possible) the bottom line opened the same way as a test that ran and found nothing.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from regbias.analysis.pair_table import recorded_verdicts
from regbias.analysis.study import StudyResults
from regbias.app.settings import read_settings
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


def sentence(recorded=(), record=None) -> str:
    settings = read_settings(composed()).analysis
    results = StudyResults([], record=record, recorded=list(recorded))
    analysis = SimpleNamespace(primary=None, correlations=None)
    return Evidence.of(results, analysis, settings).sentence()  # type: ignore[arg-type]


def test_the_tables_own_verdicts_reach_the_bottom_line(tmp_path):
    path = table(tmp_path, {("au", "ca"), ("nz", "uk"), ("au", "baseline")})
    verdicts = recorded_verdicts(path, ["baseline"])
    assert [(v.family, v.tested, v.differing) for v in verdicts] == [
        ("regions", 6, ("au-ca", "nz-uk")),
        ("reference", 4, ("au-baseline",)),
    ]
    line = sentence(verdicts)
    assert "No test rejected" not in line
    assert line.startswith(
        "**Bottom line.** The table's test of record (as recorded in it, not re-run): 2 of 6 "
        "region pairs differ (au-ca, nz-uk), 1 of 4 pairs with a reference group differ "
        "(au-baseline)."
    )


def test_a_table_without_those_columns_carries_no_verdict(tmp_path):
    path = table(tmp_path, set())
    frame = pd.read_csv(path).drop(columns=["pair_test_differs"])
    frame.to_csv(path, index=False)
    assert recorded_verdicts(path, ["baseline"]) == []


def test_a_table_whose_test_found_nothing_is_still_said(tmp_path):
    line = sentence(recorded_verdicts(table(tmp_path, set()), ["baseline"]))
    assert line.startswith("**Bottom line.** No test rejected")
    assert "0 of 6 region pairs differ" in line


def test_a_test_that_cannot_reject_does_not_read_as_nothing_found():
    line = sentence(record=record_of(relabellings=1))
    assert line.startswith("**Bottom line.** Nothing was shown; some pairs could get no verdict")
    assert "No test rejected" not in line
    assert "no verdict on the 2 region pairs (too few relabellings)" in line


def test_a_test_that_can_reject_and_finds_nothing_keeps_its_opening():
    same = record_of(relabellings=199)
    assert not sentence(record=same).startswith("**Bottom line.** Nothing was shown")
