"""Item 9 of issue 36: the glossary defines the pair test as the test of record.

It still read "a permutation test of one distance between two groups: the mean over all
repetitions of all jobs ...", the retired per-job tests.
"""

from __future__ import annotations

from regbias.report.findings import GLOSSARY


def test_the_glossary_defines_the_test_of_record():
    (entry,) = [line for line in GLOSSARY if line.startswith("- *pair test*")]
    assert "test of record" in entry and "distinct texts" in entry and "Holm" in entry
    assert "repetitions of all jobs" not in entry and "one distance" not in entry
    assert "untestable" in entry
