"""Items 4 and 6 of issue 36: a missing interval says its true reason; too few units give none.

``task=analyze`` said "no bootstrap interval (one model and one repetition: nothing to
resample)" for a table from a 2-model run, though analyze never resamples a bare table; and a
smoke run's 2 models gave degenerate "95% intervals" ("rho 0.65, interval -0.17 to 0.65").
"""

from __future__ import annotations

from regbias.analysis.pair_table import read_pairwise_csv
from regbias.analysis.robustness.bootstrap import BARE_TABLE
from regbias.analysis.study import AnalysisSettings, analyse, analyse_table
from regbias.report.findings import primary_sentence
from tests.analysis.test_robustness import study_on_a_line
from tests.conftest import packaged
from tests.report.test_findings import findings_markdown

GROUPS = ["au", "ca", "nz", "uk", "us", "za", "mixed"]
PRIMARY = ("dist_sinkhorn_long", "gap_accuracy")


def settings() -> AnalysisSettings:
    return packaged(
        AnalysisSettings,
        "analysis",
        correlation={"relabellings": 99, "primary": list(PRIMARY)},
        robustness={"resamples": 200},
        reference_groups=["mixed"],
        power={"primary": {"simulations": 0}},
    )


def findings(analysis) -> str:
    return findings_markdown(
        analysis.correlations,
        analysis.robustness,
        primary=PRIMARY,
        adjust="maxt",
        significance=0.05,
        confidence=0.95,
    )


def test_a_bare_table_says_analyze_resamples_nothing(tmp_path):
    two_models = analyse(study_on_a_line(GROUPS, 0, repetitions=1, n_models=2), settings())
    path = tmp_path / "pairwise.csv"
    two_models.pairwise.to_csv(path, index=False)
    bare = analyse_table(read_pairwise_csv(path), settings())
    assert set(bare.robustness["bootstrap_note"]) == {BARE_TABLE}
    text = findings(bare)
    assert f"no bootstrap interval ({BARE_TABLE})" in text
    assert "one model and one repetition" not in text
    assert f"no bootstrap interval: {BARE_TABLE}" in primary_sentence(bare.primary)


def test_two_models_give_no_interval_but_say_too_few():
    analysis = analyse(study_on_a_line(GROUPS, 0, repetitions=1, n_models=2), settings())
    row = analysis.robustness.set_index(["distance", "performance"]).loc[PRIMARY]
    assert row.isna()["spearman_ci_low"] and row.isna()["spearman_ci_high"]
    # Each model is its own seed here: 2 seeds, the units a replicate draws.
    assert row["bootstrap_note"].startswith("too few seeds for an interval (1 repetition, 2 seeds")
    assert "no bootstrap interval (too few seeds for an interval" in findings(analysis)
    primary = analysis.primary
    assert primary.ci_low != primary.ci_low  # NaN
    assert "no bootstrap interval: too few seeds for an interval" in primary_sentence(primary)


def test_enough_models_give_an_interval():
    analysis = analyse(study_on_a_line(GROUPS, 0, repetitions=1, n_models=5), settings())
    row = analysis.robustness.set_index(["distance", "performance"]).loc[PRIMARY]
    assert row["spearman_ci_low"] <= row["spearman_rho"] <= row["spearman_ci_high"]
    assert row["bootstrap_note"] == ""
    assert analysis.primary.ci_low <= analysis.primary.rho <= analysis.primary.ci_high
