"""The pair tests' lines in the Findings' details: each family's verdict, the method said once."""

from __future__ import annotations

from regbias.report.record import pairs_lines
from tests.report.test_bottom_line import record_of


def test_the_method_is_said_once_for_both_families() -> None:
    tests = record_of([True, False, False], reference=2)
    regions, reference, *_ = pairs_lines(tests)
    method = tests.method()
    assert regions.startswith("Test of record, 3 region pairs: 1 differ")
    assert f"({method})" in regions
    assert reference.startswith("Test of record, 2 pairs with a reference group: 0 differ")
    assert method not in reference and "0 differ (the same test, as above): none" in reference
