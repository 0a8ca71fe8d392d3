"""The report's first sentence: a finding only where an adjusted test or the primary says so."""

from __future__ import annotations

import pandas as pd

from regbias.analysis.pair_verdicts import DistanceVerdict
from regbias.report.bottom_line import Evidence, random_encoder_warning
from tests.report.test_findings import primary_result


def _correlations(p_maxt: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "distance": [f"dist_{i}" for i in range(len(p_maxt))],
            "performance": "gap_accuracy",
            "spearman_rho": 0.5,
            "spearman_p_perm": 0.001,  # unadjusted: never a finding
            "spearman_p_maxt": p_maxt,
        }
    )


def _verdict(name: str, relabellings: int, differs: list[bool]) -> DistanceVerdict:
    table = pd.DataFrame(
        {
            "group_a": ["au"] * len(differs),
            "group_b": [f"g{i}" for i in range(len(differs))],
            "mean": 1.0,
            "excess": 0.1,
            "p": 0.001,
            "p_adjusted": [0.01 if d else 0.5 for d in differs],
            "differs": differs,
        }
    )
    return DistanceVerdict(name, relabellings, "holm", 0.05, table)


def test_nothing_beyond_noise_is_said_first_and_names_no_pair() -> None:
    verdicts = {
        "energy_long": _verdict("energy_long", 999, [False] * 28),
        "sinkhorn_long": _verdict("sinkhorn_long", 0, [False] * 28),
    }
    line = Evidence(
        primary_result(0.14), _correlations([0.3, 0.9]), verdicts, "maxt", 0.05
    ).sentence()
    assert line.startswith("**Bottom line.** Nothing here is beyond noise: the primary")
    assert "not supported (rho = 0.31, exact Mantel p = 0.14" in line
    assert "none of the 2 secondary correlations is significant (maxT-adjusted)" in line
    assert "no pair differs beyond noise by `energy_long`" in line
    assert "`sinkhorn_long` gave no pair verdict" in line
    assert "au-" not in line


def test_findings_are_counted_by_their_adjusted_tests() -> None:
    verdicts = {"lda": _verdict("lda", 999, [True, True, False])}
    line = Evidence(
        primary_result(0.01), _correlations([0.01, 0.9]), verdicts, "maxt", 0.05
    ).sentence()
    assert line.startswith("**Bottom line.** The primary hypothesis is supported")
    assert "1 of 2 secondary correlations are significant" in line
    assert "(of 3): 2 by `lda`" in line


def test_unadjusted_correlations_are_never_a_finding() -> None:
    line = Evidence(None, _correlations([0.01]), {}, "none", 0.05).sentence()
    assert "Nothing here is beyond noise" in line and "none is a finding" in line


def test_headline_numbers_and_the_random_encoder_warning() -> None:
    verdicts = {"lda": _verdict("lda", 999, [True, False]), "x": _verdict("x", 0, [False])}
    numbers = Evidence(
        primary_result(0.14), _correlations([0.01, 0.9]), verdicts, "maxt", 0.05
    ).numbers()
    assert numbers == {
        "primary_rho": 0.31,
        "primary_p": 0.14,
        "primary_significant": 0.0,
        "correlations": 2.0,
        "significant_correlations": 1.0,
        "differing_pairs/lda": 1.0,
    }
    warning = random_encoder_warning({"encoder": "tiny", "encoder_identity": "random:tiny@ab"})
    assert warning is not None and warning.startswith("**Warning: random encoder.** `tiny`")
    assert random_encoder_warning({"encoder_identity": "package:minilm"}) is None
