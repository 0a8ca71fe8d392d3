"""The report's first sentence: a finding only where an adjusted test or the primary says so."""

from __future__ import annotations

import pandas as pd

from regbias.analysis.correlation.result import Correlation, correlation_rows
from regbias.analysis.pairs.embedding import EmbeddingPairTests, EmbeddingTestSettings
from regbias.analysis.pairs.pairwise import PRIMARY_FAMILY, SECONDARY_FAMILY
from regbias.report.answers import study_findings
from regbias.report.bottom_line import (
    NOTHING_SHOWN,
    NOTHING_VERDICTLESS,
    Evidence,
    precision_caveat,
    random_encoder_warning,
)
from tests.conftest import packaged
from tests.report.test_findings import primary_result


def _correlations(p_maxt: list[float]) -> list[Correlation]:
    return correlation_rows(
        pd.DataFrame(
            {
                "distance": [f"dist_{i}" for i in range(len(p_maxt))],
                "performance": "gap_accuracy",
                "spearman_rho": 0.5,
                "spearman_p_perm": 0.001,  # unadjusted: never a finding
                "spearman_p_maxt": p_maxt,
            }
        )
    )


def record_of(
    differs: list[bool], relabellings: int = 9999, reference: int = 0
) -> EmbeddingPairTests:
    """A test of record whose region pairs differ as ``differs`` says, ``reference`` others."""
    n = len(differs) + reference
    table = pd.DataFrame(
        {
            "group_a": ["au"] * n,
            "group_b": [f"g{i}" for i in range(n)],
            "family": [PRIMARY_FAMILY] * len(differs) + [SECONDARY_FAMILY] * reference,
            "n_a": 100,
            "n_b": 100,
            "shared": 0,
            "statistic": 0.1,
            "z": 3.0,
            "p": 0.0001,
            "p_adjusted": [0.01 if d else 0.5 for d in differs] + [0.5] * reference,
            "differs": differs + [False] * reference,
            "detectable_share": float("nan"),
        }
    )
    return EmbeddingPairTests(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=relabellings),
        0.05,
        table,
    )


def _findings(evidence: Evidence) -> str:
    """The findings' summary as a page shows it: the bottom line, then the questions' table."""
    return study_findings(evidence, ("dist_sinkhorn_long", "gap_accuracy")).summary()


def test_nothing_shown_either_way_is_said_first_and_names_no_pair() -> None:
    text = _findings(
        Evidence(
            primary_result(0.14),
            _correlations([0.3, 0.9]),
            record_of([False] * 15, reference=13),
            "maxt",
            0.05,
        )
    )
    bottom = text.split("\n\n| question")[0]
    assert bottom.startswith(f"**Bottom line.** {NOTHING_SHOWN}; the table below says what")
    # Each verdict once: the answers below say the primary's and the counts (issue 57).
    assert bottom == f"**Bottom line.** {NOTHING_SHOWN}; the table below says what was tested."
    assert "| No: rho = 0.31, " in text and text.count("0.31") == 1
    assert text.count("15 region pairs") == 1 and text.count("of the 2") == 1
    assert (
        "| None of the 15 region pairs differ; none of the 13 pairs with a reference group" in text
    )
    assert "squared mean difference of sentence vectors; Holm within each family, p <= 0.05" in text
    assert "| None of the 2 | Spearman rho, Mantel permutation p, maxT-adjusted" in text


def test_findings_are_counted_by_their_adjusted_tests() -> None:
    text = _findings(
        Evidence(
            primary_result(0.01),
            _correlations([0.01, 0.9]),
            record_of([True, True, False]),
            "maxt",
            0.05,
        )
    )
    assert text.startswith("**Bottom line.** Some tests rejected at their level")
    assert "| Yes: rho = 0.31, " in text and text.count("0.31") == 1
    assert "| 2 of 3 region pairs differ: au-g0, au-g1 |" in text and text.count("2 of 3") == 1
    assert "| 1 of 2: gap_accuracy ~ dist_0 (rho = 0.50) |" in text and text.count("1 of 2") == 1


def test_a_test_that_cannot_reach_the_level_gives_no_verdict() -> None:
    text = _findings(Evidence(None, None, record_of([False] * 15, relabellings=99), "maxt", 0.05))
    assert text.startswith(f"**Bottom line.** {NOTHING_VERDICTLESS}")
    assert "| No verdict on the 15 region pairs (too few relabellings) |" in text


def test_unadjusted_correlations_are_never_a_finding() -> None:
    text = _findings(Evidence(None, _correlations([0.01]), None, "none", 0.05))
    assert "No test rejected" in text
    assert text.split("\n\n")[1].startswith("| question")  # the bottom line: one line
    assert "| None is a finding: the p-values are unadjusted |" in text


def test_headline_numbers_and_the_random_encoder_warning() -> None:
    numbers = Evidence(
        primary_result(0.14),
        _correlations([0.01, 0.9]),
        record_of([True, False], reference=1),
        "maxt",
        0.05,
    ).numbers()
    assert numbers == {
        "primary_rho": 0.31,
        "primary_p": 0.14,
        "primary_significant": 0.0,
        "correlations": 2.0,
        "significant_correlations": 1.0,
        "differing_pairs/regions": 1.0,
        "differing_pairs/reference": 0.0,
    }
    warning = random_encoder_warning({"encoder": "tiny", "encoder_identity": "random:tiny@ab"})
    assert warning is not None and warning.startswith("**Warning: random encoder.** `tiny`")
    assert random_encoder_warning({"encoder_identity": "package:minilm"}) is None


def test_a_run_embedded_in_bfloat16_says_so_and_a_float32_run_does_not() -> None:
    caveat = precision_caveat({"encoder_precision": "bfloat16"})
    assert caveat is not None and caveat.startswith("**Embedded in bfloat16**")
    assert "encoder.precision=bfloat16" in caveat and "docs/scale.md" in caveat
    assert precision_caveat({"encoder_precision": "float32"}) is None
    assert precision_caveat({}) is None  # a run from before the setting: float32
