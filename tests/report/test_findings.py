"""The report's Findings section and where significance marks come from."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import correlation_rows
from regbias.analysis.power.primary import PrimaryPower
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.data.groups import BASELINE
from regbias.data.window_fit import WindowFit
from regbias.report.findings import GLOSSARY, details_markdown, finding_lines, primary_sentence
from regbias.report.markdown import (
    baseline_sizes,
    report_findings,
    report_markdown,
    truncation_caveats,
)
from regbias.report.publish import log_analysis
from tests.analysis.pairs.test_performance import perf_tests_of, scored_group, texts_frame
from tests.conftest import packaged


def finding_bullets(*args, extra_lines=(), **kwargs) -> list[str]:
    """``finding_lines(*args, **kwargs)`` and ``extra_lines``, each a whole finding (one line)."""
    return [f"- {line}" for line in [*finding_lines(*_typed(args), **kwargs), *extra_lines]]


def findings_markdown(*args, extra_lines=(), **kwargs) -> str:
    """The details section of ``finding_lines(*args, **kwargs)`` and ``extra_lines``."""
    return details_markdown([*finding_lines(*_typed(args), **kwargs), *extra_lines])


def _typed(args: tuple) -> tuple:
    """The correlation table of ``args`` (first) as the analysis hands it on: typed rows."""
    found, *rest = args
    return (correlation_rows(found) if isinstance(found, pd.DataFrame) else found, *rest)


def findings_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    found = pd.DataFrame(
        {
            "distance": ["dist_sinkhorn_long", "dist_lda", "dist_lda", "dist_sinkhorn_short"],
            "performance": ["gap_accuracy", "gap_f1", "dcor_accuracy", "gap_f1"],
            "n_pairs": [28, 28, 28, 28],
            "spearman_rho": [0.40, -0.90, 0.70, 0.10],
            "spearman_p_perm": [0.03, 0.0001, 0.004, 0.6],
            "spearman_p_holm": [0.06, 0.0004, 0.012, 0.6],
            "spearman_p_bh": [0.04, 0.0004, 0.008, 0.6],
            "kendall_tau": [0.3, -0.7, 0.5, 0.05],
            "kendall_p_perm": [0.03, 0.0001, 0.004, 0.6],
            "kendall_p_holm": [0.06, 0.0004, 0.012, 0.6],
            "kendall_p_bh": [0.04, 0.0004, 0.008, 0.6],
            "spearman_ci_low": [0.1, -0.95, 0.5, -0.2],
            "spearman_ci_high": [0.6, -0.8, 0.8, 0.4],
        }
    )
    checks = found[["distance", "performance", "spearman_rho", "kendall_tau"]].assign(
        bootstrap_sources="repetitions+models",
        loo_rho_min=[0.1, -0.93, 0.2, -0.1],
        loo_rho_max=[0.5, -0.85, 0.8, 0.2],
        loo_most_influential=["za", "nz", "za", "us"],
        loo_rho_without_most_influential=[0.1, -0.85, 0.2, -0.1],
        loo_p_max=[0.4, 0.001, 0.3, 0.9],
        survives_loo=[False, True, False, False],
        partial_rho=[0.2, -0.8, 0.6, 0.0],
        partial_p=[0.3, 0.001, 0.02, 0.9],
    )
    return found, checks


def test_findings_state_primary_first_then_the_strongest_with_their_evidence() -> None:
    found, checks = findings_tables()
    bullets = finding_bullets(
        found,
        checks,
        primary=("dist_sinkhorn_long", "gap_accuracy"),
        adjust="holm",
        significance=0.05,
        confidence=0.95,
        extra_lines=["3 of 28 pairs are above the noise floor."],
    )
    assert bullets[0].startswith("- **Primary hypothesis.** The accuracy gap against the long")
    assert "rho = 0.40" in bullets[0] and "Holm-adjusted p = 0.06" in bullets[0]
    assert (
        "not significant at 0.05" in bullets[0]
        and "interval for the measured rho 0.10 to 0.60 (nominal 95%, the primary's kind; "
        "resampling repetitions and models)"
        in bullets[0]
    )
    # Not significant: the leave-one-group-out range is stated, no verdict on it.
    assert "; rho 0.10 to 0.50 with one group left out;" in bullets[0]
    assert "does not hold up" in bullets[2] and "without za rho is 0.20" in bullets[2]
    # Then the three strongest others by |rho|: -0.90, 0.70, 0.10.
    assert (
        "`dist_lda`, `gap_f1`" in bullets[1]
        and "survives leaving out any single group" in bullets[1]
    )
    assert "(significant at 0.05)" in bullets[1]
    assert "`dist_lda`, `dcor_accuracy`" in bullets[2]
    assert "`dist_sinkhorn_short`" in bullets[3]
    assert bullets[4] == "- 3 of 28 pairs are above the noise floor."
    text = details_markdown([line.removeprefix("- ") for line in bullets])
    assert text.index("## Findings in detail") < text.index("## Terms")
    assert all(term.split(":")[0] in text for term in GLOSSARY) and len(GLOSSARY) == 12

    missing = findings_markdown(
        found, None, primary=("dist_x", "gap_y"), adjust="bh", significance=0.05, confidence=0.9
    )
    assert "Primary hypothesis (dist_x vs gap_y): not measured" in missing
    assert "Benjamini-Hochberg-adjusted p = 0.0004" in missing


def primary_result(p_value: float, power: list[float] | None = None) -> PrimaryTest:
    table = pd.DataFrame({"coupling": [0.0, 0.8, 0.9, 1.0], "mean_rho": [0.0, 0.5, 0.7, 0.82]})
    table["power"] = power or [0.05, 0.7, 0.88, 0.97]
    table["power_low"] = table["power"] - 0.03
    table["power_high"] = table["power"] + 0.03
    return PrimaryTest(
        distance="dist_sinkhorn_long",
        performance="gap_accuracy",
        direction="greater",
        groups=("au", "ca", "nz", "uk", "us", "za"),
        left_out=("baseline", "mixed"),
        n_pairs=15,
        rho=0.31,
        p_value=p_value,
        exact=True,
        null_size=720,
        significance=0.05,
        power=PrimaryPower(6, "greater", 0.05, 1000, 720, True, 2, table),
    )


def test_the_primary_test_is_one_sentence_first_and_secondary_p_values_say_how_adjusted() -> None:
    found, checks = findings_tables()
    found["spearman_p_maxt"] = [0.07, 0.001, 0.03, 0.7]
    found["maxt_method"] = ["maxt", "maxt", "holm_fallback", "maxt"]
    checks.loc[2, "partial_p"] = 0.039
    bullets = finding_bullets(
        found,
        checks,
        primary=("dist_sinkhorn_long", "gap_accuracy"),
        adjust="maxt",
        significance=0.05,
        confidence=0.95,
        primary_test=primary_result(0.12),
    )
    assert bullets[0] == (
        "- **Primary hypothesis.** The accuracy gap against the long-text Sinkhorn distance "
        "(`dist_sinkhorn_long`, `gap_accuracy`; regions only, 15 pairs, one-sided rho > 0): "
        "rho = 0.31, exact Mantel p = 0.12, not significant at 0.05; with 6 groups this test "
        "detects rho >= 0.70 with 80% power (a group model in 2 dimensions whose gaps carry no "
        "evaluation noise (none measured here; noise lowers rho), where rho reaches 0.82 at most)."
    )
    # The same pair on all groups follows as a secondary test, then the strongest others.
    assert bullets[1].startswith("- **Primary pair on all groups (secondary).** The accuracy")
    assert "maxT-adjusted p = 0.07 (not significant at 0.05)" in bullets[1]
    assert "maxT-adjusted p = 0.001 (significant at 0.05)" in bullets[2]
    assert "Holm-adjusted p = 0.03 (significant at 0.05; Holm, not maxT: its pairs" in bullets[3]
    # Every p that is not adjusted says so: partial Mantel and leave-one-group-out.
    assert "partial rho = 0.60 (a check, not a test: unadjusted p = 0.039)" in bullets[3]
    assert "largest unadjusted permutation p 0.3" in bullets[3]
    for line in bullets[1:]:
        for clause in line.split("; "):
            if " p = " in clause and "adjusted p" not in clause:
                assert "unadjusted p" in clause, clause

    significant = primary_sentence(primary_result(0.004, power=[0.1, 0.2, 0.3, 0.4]))
    assert "exact Mantel p = 0.004, significant at 0.05" in significant
    assert (
        "with 6 groups 80% power is not reachable in a group model in 2 dimensions whose gaps "
        "carry no evaluation noise (none measured here; noise lowers rho): at its largest rho, "
        "0.82, the power is 0.40 (95% interval 0.37-0.43)."
    ) in significant
    # A rho beyond what the model's studies measure: its power is the model's, not the study's.
    beyond = primary_sentence(replace(primary_result(0.004, power=[0.1, 0.2, 0.3, 0.4]), rho=0.9))
    assert "(this study's rho, 0.90, lies beyond what the model's studies measure: " in beyond
    assert "lies beyond" not in significant
    # A point estimate at 80% whose Clopper-Pearson bound is below it is stated with its interval.
    unshown = primary_sentence(primary_result(0.2, power=[0.05, 0.3, 0.81, 0.82]))
    assert (
        "this test has power 0.81 (95% interval 0.78-0.84) at rho = 0.70, not shown to reach 80%"
    ) in unshown
    untested = PrimaryTest(
        "dist_lda", "gap_accuracy", "greater", 0.05,
        note="not measured in this run (no column dist_lda)",
    )  # fmt: skip
    assert "not measured in this run" in primary_sentence(untested)


def test_with_no_adjustment_nothing_is_called_significant() -> None:
    found, checks = findings_tables()
    text = findings_markdown(
        found, checks, primary=None, adjust="none", significance=0.05, confidence=0.95
    )
    assert "unadjusted p = 0.0001 (nominally below 0.05, no adjustment)" in text
    assert "significant at" not in text.replace("not significant at", "")
    assert "survives" not in text


class FakeRun:
    """Records what would be logged to MLflow."""

    def __init__(self) -> None:
        self.tables: dict[str, pd.DataFrame] = {}
        self.figures: list[str] = []
        self.texts: dict[str, str] = {}

    def table(self, frame: pd.DataFrame, path: str, index: bool = False) -> None:
        self.tables[path] = frame

    def figure(self, figure: object, path: str) -> None:
        self.figures.append(path)

    def text(self, text: str, path: str) -> None:
        self.texts[path] = text

    def json(self, data: object, path: str) -> None:
        self.texts[path] = str(data)

    def metrics(self, values: dict[str, float]) -> None:
        pass


def test_report_leads_with_findings_and_marks_significance_by_the_adjusted_p() -> None:
    found, checks = findings_tables()
    pairwise = pd.DataFrame(
        {"group_a": list("aaab"), "group_b": list("bcdc")}
        | {c: np.arange(4.0) for c in set(found["distance"]) | set(found["performance"])}
    )
    analysis = Analysis(None, None, None, pairwise, correlation_rows(found), robustness=checks)
    results = StudyResults(["a", "b", "c", "d"], meta={"dataset": "toy"})
    run = FakeRun()
    settings = packaged(AnalysisSettings, "analysis", correlation={"adjust": "holm"})
    log_analysis(run, results, analysis, settings)  # type: ignore[arg-type]
    assert run.tables["analysis/robustness.csv"] is checks
    # Holm leaves two correlations below 0.05 (the raw p would have flagged three).
    scatters = sorted(p for p in run.figures if p.startswith("figures/scatter/"))
    assert scatters == [
        "figures/scatter/dist_lda__dcor_accuracy.png",
        "figures/scatter/dist_lda__gap_f1.png",
    ]
    report = run.texts["report.md"]
    assert report.index("## Findings") < report.index("## Findings in detail")
    assert report.index("## Findings in detail") < report.index("## Groups")
    # The bottom line comes first; the scatter plots drawn are linked, no other is claimed.
    first = report.split("## Findings\n\n", 1)[1].splitlines()[0]
    assert first.startswith("**Bottom line.** Some tests rejected at their level")
    assert "| Which correlations survive adjustment? | 2 of 4: " in report
    assert report.count("**Bottom line") == 1  # said once: no "in full" repeat below
    assert "findings.json" in run.texts
    assert "![dist_lda vs gap_f1](figures/scatter/dist_lda__gap_f1.png)" in report
    assert "Scatter plots of the 2 strongest correlations" in report
    assert "analysis/headline.json" in run.texts
    none = report_markdown(
        results, analysis, packaged(AnalysisSettings, "analysis", correlation={"adjust": "none"})
    )
    assert "unadjusted p = 0.03" in none
    assert "None is a finding: the p-values are unadjusted" in none


def test_the_distances_have_no_pair_verdict_of_their_own():
    import numpy as np

    from regbias.distances.matrix import DistanceMatrix
    from regbias.report.noise import verdict_lines

    groups = ["a", "b", "c", "d"]
    mean = np.ones((4, 4)) - np.eye(4)
    matrices = {
        name: DistanceMatrix(name, groups, mean, np.zeros((4, 4)), 1)
        for name in ("sinkhorn_long", "lda")
    }
    (line,) = verdict_lines(matrices)
    named = "`sinkhorn_long` (long-text Sinkhorn distance), `lda` (LDA centroid distance)"
    assert line.startswith(f"{named}: estimates") and "test of record" in line
    assert "Secondary pair test" not in line


def test_the_test_of_record_says_what_differs_and_what_it_could_detect():
    import numpy as np
    import pandas as pd

    from regbias.analysis.pairs.embedding import EmbeddingPairTests, EmbeddingTestSettings
    from regbias.analysis.power.embedding import PowerResult
    from regbias.report.markdown import power_section
    from regbias.report.record import pairs_lines, record_section

    table = pd.DataFrame(
        {
            "group_a": ["uk", "nz", "au"],
            "group_b": ["us", "za", "mixed"],
            "family": ["regions", "regions", "reference"],
            "n_a": [2000, 329, 1800],
            "n_b": [2000, 250, 2000],
            "shared": [0, 0, 200],
            "statistic": [0.01, 0.001, 0.002],
            "z": [18.5, 0.3, 1.0],
            "effect": [0.0099, 0.0001, 0.001],
            "effect_ci_low": [0.009, -0.001, 0.0],
            "effect_ci_high": [0.011, 0.002, 0.002],
            "p": [0.0001, 0.4, 0.2],
            "p_adjusted": [0.0002, 0.4, 0.2],
            "differs": [True, False, False],
            "detectable_share": np.nan,
        }
    )
    tests = EmbeddingPairTests(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding"), 0.05, table
    )
    lines = pairs_lines(tests)
    assert lines[0].startswith("Test of record, 2 region pairs: 1 differ")
    assert "uk-us (effect 0.0099 [0.009, 0.011], Holm p 0.0002)" in lines[0]
    assert "not shown to differ: nz-za." in lines[0] and "no difference" not in lines[0]
    assert "`regbias task=power`" in lines[-1]
    plants = pd.DataFrame(
        [
            {"n_a": a, "n_b": b, "family_pairs": 2, "share": s, "plant": k, "p": p}
            for a, b in ((250, 320), (2000, 2000))
            for s in (0.0, 0.2, 0.4)
            for k in range(50)
            for p in [0.5 if s < 0.4 or a == 250 else 0.001]
        ]
    )
    power = PowerResult(plants, 0.05, "energy", 999, "us", "uk")
    detectable = power.detectable()
    assert np.isnan(detectable[(250, 320)]) and detectable[(2000, 2000)] == 0.4
    with_power = pairs_lines(tests.with_power(power.detectable(), power.donor))
    assert (
        "nz-za (at these sizes no planted mixture of uk-like texts is detected with 80% power)"
        in with_power[0]
    )
    assert not any("task=power" in line for line in with_power)
    section = power_section(power)
    assert section.startswith("## Power of the test of record") and "figures/power.png" in section
    assert (
        "pairs of 2000 and 2000 texts: would detect a mixture of >= 40% of uk-like texts with "
        "80% power" in section
    )
    assert "| pair | family |" in record_section(tests)


def test_baseline_s_size_is_explained_once_with_each_measure_s_count() -> None:
    rng = np.random.default_rng(0)
    groups = {g: scored_group(rng, n, 0.5, (0.8, 0.8)) for g, n in (("us", 50), ("baseline", 70))}
    record = perf_tests_of(texts_frame(groups))
    per_model = pd.DataFrame(
        {"model": ["m0", "m1"], "group": BASELINE, "metric": "accuracy", "n_texts": [14, 15]}
    )
    results = StudyResults(
        ["us", "baseline"], per_model=per_model, group_sizes={"us": 50, "baseline": 3000}
    )
    line = baseline_sizes(results, record)
    assert line.startswith("`baseline` is 3,000 texts here")
    assert "70 in the performance test of record" in line
    assert "14-15 per model" in line and "task=describe" in line
    # The draws design draws from a fold: no fold size is claimed; no record, no record count.
    drawn = replace(results, meta={"evaluation_design": "draws"})
    assert baseline_sizes(drawn, None) == (
        "`baseline` is 3,000 texts here (a job's general training sample: its distances "
        "draw from all of it)."
    )
    analysis = Analysis(None, None, None, None, None)
    report = report_markdown(results, analysis, packaged(AnalysisSettings, "analysis"))
    assert report.count("`baseline` is 3,000 texts here") == 1


def test_the_share_of_drawn_texts_cut_at_the_window_is_a_caveat_of_the_report() -> None:
    records = pd.DataFrame(
        {
            "kind": ["long", "long_twin", "lda", "short"],
            "texts": [60, 40, 50, 10],
            "texts_in_full": [30, 13, 50, 10],
        }
    )
    job = WindowFit.of(records)
    assert job == [WindowFit("long", 100, 43), WindowFit("lda", 50, 50), WindowFit("short", 10, 10)]
    assert WindowFit.pooled([job, job])[0] == WindowFit("long", 200, 86)
    assert WindowFit.of(records.drop(columns="texts_in_full")) == []
    results = StudyResults(
        ["a", "b"], meta={"dataset": "toy", "encoder_max_length": 128}, window_fits=job
    )
    (caveat,) = truncation_caveats(results)
    assert caveat == (
        "Drawn texts cut at the encoder's 128-token window (their tail is not embedded): "
        "long 57.0% (57 of 100)."
    )
    analysis = Analysis(None, None, None, None, None)
    settings = packaged(AnalysisSettings, "analysis")
    assert caveat in report_findings(results, analysis, settings).caveats
    assert f"- {caveat}" in report_markdown(results, analysis, settings)
    assert truncation_caveats(replace(results, window_fits=job[1:])) == []


def test_a_study_embedded_in_bfloat16_carries_the_precision_caveat_in_its_report() -> None:
    settings = packaged(AnalysisSettings, "analysis")
    analysis = Analysis(None, None, None, None, None)
    fast = StudyResults(["a", "b"], meta={"dataset": "toy", "encoder_precision": "bfloat16"})
    warnings = report_findings(fast, analysis, settings).warnings  # before the bottom line
    assert [c for c in warnings if c.startswith("**Embedded in bfloat16**")]
    assert "**Embedded in bfloat16**" in report_markdown(fast, analysis, settings)
    exact = replace(fast, meta={"dataset": "toy", "encoder_precision": "float32"})
    assert "Embedded in" not in report_markdown(exact, analysis, settings)
