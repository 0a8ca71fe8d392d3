"""Items 1 and 8 of issue 36: an untestable pair is said to be untestable, never "no difference".

Two groups holding the same texts leave both sides of their test empty: the row had no p but
``differs = False``, the findings counted it among the region pairs that do not differ ("0 of
3 ... no difference: g_a-g_b") although Holm ran over the 2 pairs actually tested. And with too
few relabellings the smallest Holm p was printed above 1 ("... over 3 pairs is 1.5").
"""

from __future__ import annotations

import hashlib

import numpy as np

from regbias.analysis.pairs.embedding import EmbeddingTestSettings, embedding_pair_tests
from regbias.analysis.pairs.pairwise import PRIMARY_FAMILY
from regbias.report.answers import record_answer
from regbias.report.record import pairs_lines, record_section
from tests.conftest import packaged


def vectors(texts: list[str]) -> np.ndarray:
    """A fixed vector per text (seeded by the text), group ``c`` shifted."""
    rows = []
    for text in texts:
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
        shift = 3.0 if text.startswith("c") else 0.0
        rows.append(np.random.default_rng(seed).normal(size=4) + shift)
    return np.asarray(rows)


def record_of(relabellings: int = 199):
    same = [f"t{i}" for i in range(20)]
    groups = {"g_a": same, "g_b": list(same), "c": [f"c{i}" for i in range(20)]}
    settings = packaged(
        EmbeddingTestSettings, "analysis.tests.embedding", relabellings=relabellings
    )
    return embedding_pair_tests(groups, vectors, settings)


def test_a_pair_with_no_texts_left_is_untestable_with_its_reason():
    tests = record_of()
    row = tests.table.set_index(["group_a", "group_b"]).loc[("g_a", "g_b")]
    assert np.isnan(row["p"])
    assert (
        "fewer than 2 texts a side (0 and 0 texts once the 20 both hold are left out)"
        in (row["untestable"])
    )
    assert len(tests.family(PRIMARY_FAMILY)) == 2
    assert list(tests.untestable(PRIMARY_FAMILY)["group_b"]) == ["g_b"]


def test_the_findings_count_only_the_tested_pairs_and_name_the_untestable_one():
    tests = record_of()
    line = pairs_lines(tests)[0]
    assert line.startswith("Test of record, 2 region pairs: 2 differ")
    assert "no difference: g_a-g_b" not in line
    assert "untestable, kept out of the count: g_a-g_b (fewer than 2 texts a side" in line
    answer = record_answer(tests).answer  # what the Findings table says of the pairs
    assert answer.startswith("2 of 2 region pairs differ (1 untestable)")
    assert "| untestable: fewer than 2 texts a side" in record_section(tests)


def test_the_smallest_holm_p_is_never_printed_above_one():
    tests = record_of(relabellings=1)
    line = pairs_lines(tests)[0]
    assert "the smallest Holm p over 2 pairs is 1 > 0.05" in line
    assert "untestable, kept out of the count" in line
