"""The primary's checks, seed by seed and the single job's caveat, where a reader meets them.

Each test fails on f7bc9eb (issue 60): none of these words or numbers existed there.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from regbias.analysis.correlation.by_seed import SeedPrimary
from regbias.analysis.correlation.primary_checks import NoiseCheck, PrimaryCheck, PrimaryChecks
from regbias.analysis.pair_table import RecordedVerdict
from regbias.analysis.pairs.performance import PerformancePairTests, PerformanceTestSettings
from regbias.report.answers import WITHIN_NOISE, bottom_lines, study_findings
from regbias.report.bottom_line import Evidence
from regbias.report.findings_model import Findings
from regbias.report.markdown import report_title
from regbias.report.primary_checks import (
    checks_section,
    seed_line,
    seed_section,
    single_job_caveat,
)
from tests.conftest import packaged
from tests.report.test_findings import primary_result

P_WITHOUT = [0.01] * 4 + [0.06, 0.2]
EACH = tuple(PrimaryCheck(g, 0.7, p, p < 0.05) for g, p in zip("abcdef", P_WITHOUT, strict=True))


def _checked(p_value: float = 0.007, noise_p: float = 0.004) -> object:
    noise = NoiseCheck(0.38, noise_p, noise_p < 0.05, draws=999)
    return replace(primary_result(p_value), checks=PrimaryChecks(noise, EACH))


def _checks_line(test: object) -> str:
    """The bottom line's line on the primary (its verdict and numbers are the table's)."""
    lines = bottom_lines(Evidence(test, None, None, "maxt", 0.05))  # type: ignore[arg-type]
    assert len(lines) == 2
    return lines[1]


def test_a_supported_primary_that_loses_a_region_is_called_fragile_with_its_reason() -> None:
    clause = _checks_line(_checked())
    assert clause == (
        "The primary is fragile: beyond the groups' noise, p = 0.004 (noise alone gives rho "
        "0.38); each region left out, p = 0.01 to 0.2, not shown without e or f."
    )
    # Each result once: the p of a lost region is in the table, not repeated here; the rho and
    # the Mantel p are the Findings table's answer.
    assert clause.count("0.004") == 1 and "(p = 0.06)" not in clause
    assert "0.31" not in clause and "0.007" not in clause


def test_a_primary_lost_to_the_noise_check_is_fragile_and_an_unsupported_one_is_not() -> None:
    noise_lost = _checked(noise_p=0.3)
    assert "not shown beyond the groups' noise (p = 0.3)" in noise_lost.fragile  # type: ignore[attr-defined]
    clause = _checks_line(noise_lost)
    assert clause.startswith("The primary is fragile: beyond the groups' noise, p = 0.3, not ")
    assert "beyond the groups' noise, p = 0.3, not shown (noise alone gives rho 0.38);" in clause
    unsupported = _checks_line(_checked(p_value=0.2))
    assert unsupported.startswith("The primary's checks: beyond the groups' noise")
    assert "fragile" not in unsupported and "not shown" not in unsupported
    assert "beyond the groups' noise, p = 0.004 (noise alone gives rho 0.38); each" in unsupported


def test_the_checks_are_headline_metrics_and_a_table_on_the_page() -> None:
    numbers = Evidence(_checked(), None, None, "maxt", 0.05).numbers()  # type: ignore[arg-type]
    assert numbers["primary_fragile"] == 1.0
    assert numbers["primary_noise_only_p"] == 0.004 and numbers["primary_noise_only_rho"] == 0.38
    assert numbers["primary_left_out_p_max"] == 0.2
    page = "\n".join(checks_section(_checked()))  # type: ignore[arg-type]
    assert "## The primary against the groups' noise and each region" in page
    row = "| beyond the groups' noise (999 draws) | au ca nz uk us za | 0.31 against 0.38 |"
    assert f"{row} 0.004 | supported |" in page
    assert "| without f | " in page and "| not shown |" in page
    assert "**Supported but fragile:** the rows marked not shown." in page


def _performance(differs: list[bool]) -> PerformancePairTests:
    table = pd.DataFrame(
        {
            "group_a": ["au"] * len(differs),
            "group_b": [f"g{i}" for i in range(len(differs))],
            "family": "regions",
            "p": 0.5,
            "p_adjusted": [0.01 if d else 0.5 for d in differs],
            "differs": differs,
        }
    )
    settings = packaged(PerformanceTestSettings, "analysis.tests.performance")
    return PerformancePairTests(settings, 0.05, "accuracy", 0.95, table, pd.DataFrame(), 25)


def test_supported_beside_no_differing_gap_says_what_that_means_once() -> None:
    within = Evidence(_checked(), None, None, "maxt", 0.05, performance=_performance([False] * 3))
    lines = bottom_lines(within)  # type: ignore[arg-type]
    assert len(lines) == 2 and lines[1].endswith(f"not shown without e or f. {WITHIN_NOISE}")
    shown = Evidence(_checked(), None, None, "maxt", 0.05, performance=_performance([True, False]))
    assert not any(WITHIN_NOISE in line for line in bottom_lines(shown))  # type: ignore[arg-type]
    unsupported = Evidence(
        primary_result(0.3), None, None, "maxt", 0.05, performance=_performance([False])
    )
    assert not any(WITHIN_NOISE in line for line in bottom_lines(unsupported))
    dependence = replace(_checked(), performance="dcor_accuracy", direction="less")
    other = Evidence(dependence, None, None, "maxt", 0.05, performance=_performance([False]))
    assert not any(WITHIN_NOISE in line for line in bottom_lines(other))  # type: ignore[arg-type]


def _seed(seed: str, rho: float, p: float, p_without: float | None) -> SeedPrimary:
    alone = replace(primary_result(p), rho=rho)
    without = None if p_without is None else replace(primary_result(p_without), rho=0.8)
    return SeedPrimary(seed, f"run{seed}", alone, without)


def test_a_study_shows_its_primary_seed_by_seed() -> None:
    found = [_seed("0", -0.01, 0.53, 0.01), _seed("1", 0.6, 0.03, 0.07), _seed("2", 0.2, 0.2, 0.02)]
    line = seed_line(found)
    assert line.startswith("**Primary seed by seed.** Supported by 1 of 3 seeds' jobs alone")
    assert (
        "(rho -0.01 to 0.60); with each seed left out, supported in 2 of 3 (p up to 0.07)" in line
    )
    page = "\n".join(seed_section(found))
    assert "## The primary seed by seed" in page
    assert "| 0 | -0.01 | 0.53 | not shown | 0.80 | 0.01 | supported |" in page
    assert seed_line([]) == "" and seed_section([]) == []
    constant = [_seed("0", math.nan, math.nan, 0.3), _seed("1", 0.2, 0.3, None)]
    page = "\n".join(seed_section(constant))
    assert (
        "| 0 | – | – | no rank correlation (a constant column) | 0.80 | 0.3 | not shown |" in page
    )
    assert "| 1 | 0.20 | 0.3 | not shown | – | – | not tested |" in page and "nan" not in page
    assert "; 1 more gave no rank correlation)" in seed_line(constant)


def test_a_single_job_says_its_primary_is_one_seeds() -> None:
    caveat = single_job_caveat({"seed": 0, "dataset": "sentiment140"}, primary_result(0.5))
    assert caveat.startswith("One job, one seed (0): its primary tests this seed's")
    assert single_job_caveat({"seed": 0, "jobs": 5}, primary_result(0.5)) == ""  # a study
    assert single_job_caveat({"seed": 0}, None) == ""


def test_task_analyze_has_a_title_and_answers_with_the_verdicts_its_table_records() -> None:
    assert report_title({"input": "out/pairwise.csv"}) == (
        "# regbias report: re-analysis of `out/pairwise.csv`"
    )
    assert report_title({"dataset": "csv"}) == "# regbias report: csv"
    recorded = (
        RecordedVerdict("test of record", "regions", 15, ("au-nz",)),
        RecordedVerdict("performance test of record", "regions", 15, ()),
    )
    evidence = Evidence(primary_result(0.5), None, None, "maxt", 0.05, recorded=recorded)
    answers = study_findings(evidence, ("dist_sinkhorn_long", "gap_accuracy")).answers
    assert answers[0].answer == "As recorded, not re-run: 1 of 15 region pairs (au-nz)"
    assert answers[1].answer == "As recorded, not re-run: 0 of 15 region pairs"
    assert "not re-run here" in answers[0].how


def test_a_warning_comes_before_the_bottom_line_everywhere() -> None:
    findings = Findings(("**Bottom line.** x",), (), warnings=("**Warning: random encoder.** y",))
    assert findings.summary().index("Warning") < findings.summary().index("Bottom line")
    assert findings.plain_lines()[0].startswith("Warning: random encoder.")
    assert Findings.from_dict(findings.to_dict()) == findings
    assert Findings.from_dict({"bottom_line": ["b"], "answers": []}).warnings == ()  # older


def test_nan_checks_are_not_printed_as_numbers() -> None:
    untested = PrimaryChecks(NoiseCheck(note="no texts"), (PrimaryCheck("a", note="x"),))
    clause = _checks_line(replace(primary_result(0.01), checks=untested))
    assert "no test beyond the groups' noise (no texts)" in clause and "nan" not in clause
    assert math.isnan(untested.noise.null_rho)
    named = PrimaryChecks(NoiseCheck(note="no noise draws of za<b>"), untested.without_each)
    clause = _checks_line(replace(primary_result(0.01), checks=named))
    assert "no noise draws of za\\<b\\>" in clause and "<b>" not in clause
