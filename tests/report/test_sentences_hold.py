"""Issue 57, item 4 (in part): sentences the numbers do not support, reworded.

Each test failed on f7bc9eb's wording:

* with no rejection the bottom line said "Nothing here is beyond noise", a non-rejection read
  as a finding of sameness; it now says that nothing is shown either way;
* the noise ratio's sentinel (1e3: the regions' values spread no more than their noise) was
  printed as a measurement, "1e+03 to 1e+03";
* a Holm p in the record's line was printed as 0.123 where every other p is ``p_text``'s 0.12;
* an encoder comparison of primary rhos said which is higher without saying that the rhos
  are measured ones, which noise lowers;
* the primary interval was read as "how strong it is as measured for these groups": it is the
  rho a repeat of this design would measure (``tests/analysis/test_primary_interval.py``);
* with 2 seeds the accuracy intervals took values no accuracy can (-0.05 to 1.07): with fewer
  training units than the primary's interval needs there are none, and the report says why;
* "too few repetitions or seeds for an interval (...)" was said in full in every findings bullet
  (five times in the smoke report): once now, "as above" after;
* README and docs/method.md cited the paper as "Lu et al.": its first author is Lyu.
The place-name control's wording ("differs only through place names") is held in
``tests/report/test_explain_report.py``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from regbias.analysis.correlation.result import correlation_rows
from regbias.analysis.pairs.embedding import EmbeddingPairTests, EmbeddingTestSettings
from regbias.analysis.pairs.performance import performance_pair_tests
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.power.primary import NO_SIGNAL
from regbias.report.answers import primary_answer, said_notes
from regbias.report.bottom_line import NOTHING_SHOWN
from regbias.report.encoder_contrast import primary_sentence as contrast_sentence
from regbias.report.findings import finding_lines, primary_sentence
from regbias.report.record import pairs_lines, perf_section
from tests.analysis.pairs.test_performance import perf_settings, scored_group, texts_frame
from tests.conftest import packaged
from tests.report.test_findings import findings_tables, primary_result

ROOT = Path(__file__).resolve().parents[2]


def test_no_rejection_is_said_as_nothing_shown_either_way() -> None:
    assert "beyond noise" not in NOTHING_SHOWN
    assert "no difference is shown and none is shown to be absent" in NOTHING_SHOWN


def test_the_noise_sentinel_is_never_printed_as_a_measurement() -> None:
    test = primary_result(0.12)
    assert test.power is not None
    flat = replace(test, power=replace(test.power, noise=(NO_SIGNAL,) * 6))
    text = primary_sentence(flat)
    assert "1e+03" not in text and "1000" not in text
    assert "spread no more than that noise: no true spread is measured" in text
    some = replace(test, power=replace(test.power, noise=(0.4, 0.9, NO_SIGNAL)))
    assert "true spread: 0.4 to over 1000" in primary_sentence(some)
    measured = replace(test, power=replace(test.power, noise=(0.4, 0.9)))
    assert "true spread: 0.4 to 0.9)" in primary_sentence(measured)


def test_a_holm_p_in_the_records_line_has_the_one_p_format() -> None:
    """At a level of 0.2 a pair differs at Holm p 0.123: ``p_text`` says 0.12, as elsewhere."""
    table = pd.DataFrame(
        {
            "group_a": ["uk", "nz"], "group_b": ["us", "za"], "family": ["regions"] * 2,
            "n_a": [2000, 329], "n_b": [2000, 250], "shared": [0, 0],
            "statistic": [0.01, 0.001], "z": [1.9, 0.3], "effect": [0.0099, 0.0001],
            "effect_ci_low": [0.009, -0.001], "effect_ci_high": [0.011, 0.002],
            "p": [0.06, 0.4], "p_adjusted": [0.123, 0.4], "differs": [True, False],
            "detectable_share": np.nan,
        }
    )  # fmt: skip
    tests = EmbeddingPairTests(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding"), 0.2, table
    )
    line = pairs_lines(tests)[0]
    assert "Holm p 0.12)" in line and "0.123" not in line


def test_an_encoder_contrast_says_its_rhos_are_measured_ones() -> None:
    row = {"first": "minilm", "second": "mpnet", "rho_first": 0.6, "rho_second": 0.3,
           "difference": 0.3, "ci_low": 0.1, "ci_high": 0.5}  # fmt: skip
    for low in (0.1, -0.1):
        line = contrast_sentence({**row, "ci_low": low}, 0.95)
        assert "noisier measures a lower rho at the same association" in line


def test_the_paper_is_cited_by_its_first_author() -> None:
    readme, method = (ROOT / "README.md").read_text(), (ROOT / "docs/method.md").read_text()
    assert "Lu et al" not in readme and "Lyu et al., 2024" in readme
    assert "Lu et al" not in method and "10.1007/s10994-024-06555-6" in method


def _perf_tests(models: int):
    rng = np.random.default_rng(3)
    groups = {g: scored_group(rng, 150, 0.5, (0.1, 0.9)) for g in ("au", "nz", "uk")}
    frame = texts_frame(groups, models=models, seed=3)
    return performance_pair_tests(
        PerfTexts.of(frame), ["au", "nz", "uk"], perf_settings(relabellings=99),
        n_bootstrap=200, confidence=0.95,
    )  # fmt: skip


def test_two_seeds_give_no_accuracy_interval_and_say_why() -> None:
    """With 2 seeds an accuracy interval ran from -0.05 to 1.07: now none, and the reason."""
    few = _perf_tests(models=2)
    assert not np.isfinite(few.confidence)
    assert few.groups[["ci_low", "ci_high"]].isna().all().all()
    assert few.table[["ci_low", "ci_high"]].isna().all().all()
    assert "2 training units (seeds) are too few to resample" in few.interval_note
    assert "run more seeds" in perf_section(few) and "Intervals (" not in perf_section(few)
    enough = _perf_tests(models=5)
    assert enough.confidence == 0.95 and not enough.interval_note
    low, high = enough.groups["ci_low"], enough.groups["ci_high"]
    assert ((low >= 0) & (high <= 1) & (low <= high)).all()


def test_a_repeated_interval_note_is_said_once() -> None:
    found, checks = findings_tables()
    note = "too few repetitions or seeds for an interval (2 repetitions, 2 seeds)"
    found[["spearman_ci_low", "spearman_ci_high"]] = np.nan
    checks = checks.assign(bootstrap_note=note)
    primary = replace(primary_result(0.2), ci_low=np.nan, ci_high=np.nan, ci_note=note)
    lines = finding_lines(
        correlation_rows(found), checks, primary=("dist_sinkhorn_long", "gap_accuracy"),
        adjust="maxt", significance=0.05, confidence=0.95, primary_test=primary,
    )  # fmt: skip
    assert len(lines) >= 3 and sum(note in line for line in lines) == 1
    assert note in lines[0] and all("no bootstrap interval (as above)" in x for x in lines[1:])


def test_a_note_the_answers_say_is_not_said_again_in_the_details() -> None:
    """The answers' table says the primary's missing interval in full; the details, "as above"."""
    found, checks = findings_tables()
    note = "too few repetitions or seeds for an interval (2 repetitions, 2 seeds)"
    primary = replace(primary_result(0.2), ci_low=np.nan, ci_high=np.nan, ci_note=note)
    assert said_notes(primary) == [note]
    assert note in primary_answer(primary, ("dist_sinkhorn_long", "gap_accuracy")).answer
    lines = finding_lines(
        correlation_rows(found), checks, primary=("dist_sinkhorn_long", "gap_accuracy"),
        adjust="maxt", significance=0.05, confidence=0.95, primary_test=primary,
        said_above=said_notes(primary),
    )  # fmt: skip
    assert not any(note in line for line in lines) and "as above" in lines[0]
    assert said_notes(primary_result(0.2)) == []  # an interval was made: nothing said above
