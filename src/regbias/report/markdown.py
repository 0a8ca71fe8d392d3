"""``report.md``: the page of a job's or a sweep's results, and the figure paths it links.

The page links figures by artifact path; :mod:`regbias.report.publish` draws them at the same
paths (:func:`scatter_path`, :func:`scatter_rows`, :func:`representation_names`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import (
    RHO,
    RHO_CI,
    RHO_P,
    TAU,
    TAU_P,
    correlation_frame,
    p_name,
    strongest_rows,
)
from regbias.analysis.multiplicity import STATISTICS
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.analysis.power.embedding import PowerResult
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.data.groups import BASELINE
from regbias.data.sentiment140 import REGIONS
from regbias.distances.matrix import DistanceMatrix
from regbias.report.answers import said_notes, study_findings
from regbias.report.bottom_line import Evidence, precision_caveat, random_encoder_warning
from regbias.report.escape import cell_text, markdown_code, markdown_text
from regbias.report.findings import details_markdown, finding_lines
from regbias.report.findings_model import Findings
from regbias.report.noise import noise_section, unusable_lines, unusable_warnings
from regbias.report.primary_checks import (
    checks_section,
    seed_line,
    seed_section,
    single_job_caveat,
)
from regbias.report.record import perf_section, record_section
from regbias.tracking import artifacts as paths

#: Metrics whose per-group distributions are drawn (the paper's Figs. 9/10).
DISTRIBUTION_METRICS = ("accuracy", "roc_auc", "subset_accuracy", "micro_f1")
#: At most this many significant correlations are drawn as scatter plots.
MAX_SCATTERS = 12


def report_findings(
    results: StudyResults,
    analysis: Analysis,
    settings: AnalysisSettings,
    extra_findings: Sequence[str] = (),
) -> Findings:
    """The study's findings: bottom line, answers, caveats, details (``extra_findings`` last)."""
    evidence = Evidence.of(results, analysis, settings)
    warnings = [
        line
        for line in (random_encoder_warning(results.meta), precision_caveat(results.meta))
        if line
    ]
    caveats = [
        *unusable_warnings(results.distances),
        *truncation_caveats(results),
        *reused_caveats(results),
    ]
    if one_seed := single_job_caveat(results.meta, analysis.primary):
        caveats.append(one_seed)
    details = finding_lines(
        analysis.correlations,
        analysis.robustness,
        primary=settings.correlation.primary,
        adjust=settings.correlation.adjust,
        significance=settings.significance,
        confidence=settings.robustness.confidence,
        note=analysis.note,
        primary_test=analysis.primary,
        said_above=said_notes(analysis.primary),
    )
    opening = unusable_lines(results.distances)
    seeds = [line for line in (seed_line(analysis.by_seed),) if line]
    found = study_findings(
        evidence,
        settings.correlation.primary,
        caveats,
        [*opening, *details, *seeds, *extra_findings],
    )
    return replace(found, warnings=tuple(warnings))


def report_markdown(
    results: StudyResults,
    analysis: Analysis,
    settings: AnalysisSettings,
    extra_findings: Sequence[str] = (),
    findings: Findings | None = None,
) -> str:
    """One page: findings, groups, encoder and revision, matrices, correlations, figures.

    ``findings`` already built (:func:`report_findings`) are used as they are, else built here.
    """
    meta = results.meta
    if findings is None:
        findings = report_findings(results, analysis, settings, extra_findings)
    lines = [report_title(meta), ""]
    lines += [findings.markdown(), details_markdown(findings.details)]
    lines += ["## Settings that ran", ""]
    said_below = {"training_pool"} if BASELINE in results.groups else set()  # with baseline's size
    lines += [
        f"- {markdown_text(k)}: {markdown_text(v)}" for k, v in meta.items() if k not in said_below
    ]
    lines += ["", "## Groups", "", "| group | texts |", "|---|---|"]
    lines += [f"| {markdown_text(g)} | {results.group_sizes.get(g, '')} |" for g in results.groups]
    if BASELINE in results.groups:
        lines += ["", baseline_sizes(results, analysis.performance_record)]
    floors = FLOOR_DIAGONAL  # said in full once, at the first table with floors
    for name, matrix in results.distances.items():
        shown = markdown_text(name)
        lines += ["", f"## Distance: {shown} (mean over {matrix.n_repetitions} repetitions)", ""]
        lines += [
            _markdown_table(floors_on_diagonal(matrix)),
            "",
            f"![{shown}]({paths.distance_figure(name)})",
        ]
        if matrix.floor is not None:
            lines += [
                "",
                floors,
                "",
                f"![{shown} against its noise floor]({paths.floor_figure(name)})",
            ]
            floors = FLOOR_DIAGONAL_AGAIN
        epsilon = matrix.config.get("epsilon")
        if epsilon is not None:
            lines += ["", f"Epsilon {epsilon:.4g} (OTT units, cost |x-y|^2) for every pair."]
    section = noise_section(results.distances)
    if section:
        lines += ["", section]
    if results.record is not None:
        lines += ["", record_section(results.record)]
    if analysis.summary is not None:
        means = analysis.summary.groupby(["group", "metric"], sort=False)["value"].mean().unstack()
        n_models = analysis.summary["model"].nunique()
        lines += ["", f"## Performance (mean over {n_models} models)", ""]
        lines += [_scored_how(results), "", _markdown_table(means)]
        drawn = [m for m in DISTRIBUTION_METRICS if m in set(analysis.summary["metric"])]
        lines += ["", *[f"![{m}]({paths.performance_figure(m)})" for m in drawn]]
        if analysis.performance_record is not None:
            lines += ["", perf_section(analysis.performance_record)]
    lines += _representation_section(results)
    lines += ["", *checks_section(analysis.primary), *seed_section(analysis.by_seed)]
    lines += ["## Strongest correlations", ""]
    lines += _correlation_section(analysis, settings)
    return "\n".join(lines) + "\n"


#: What a distance table's diagonal holds where the run measured floors.
FLOOR_DIAGONAL = (
    "The diagonal holds each group's noise floor (the group against a disjoint draw of itself "
    "of the same size), not 0: read a pair's distance against its two groups' floors "
    f"(`excess_dist_*` in `{paths.PAIRWISE_CSV}`)."
)
#: The same at every later table.
FLOOR_DIAGONAL_AGAIN = "The diagonal holds each group's noise floor, as above."


def floors_on_diagonal(matrix: DistanceMatrix) -> pd.DataFrame:
    """The matrix as a table, its diagonal the groups' noise floors where it has them."""
    frame = matrix.to_frame()
    if matrix.floor is not None:
        for index, group in enumerate(matrix.groups):
            frame.loc[group, group] = matrix.floor[index]
    return frame


def report_title(meta: Mapping[str, object]) -> str:
    """The page's title: the dataset, or the pair table ``task=analyze`` re-analysed."""
    if meta.get("dataset"):
        return f"# regbias report: {markdown_text(meta['dataset'])}"
    if meta.get("input"):
        return f"# regbias report: re-analysis of {markdown_code(str(meta['input']))}"
    return "# regbias report"


def reused_caveats(results: StudyResults) -> list[str]:
    """One caveat per job of a sweep that reused a run finished earlier instead of running.

    Its results are pooled like the others'; the run itself may sit elsewhere (another sweep's
    child, or a single run at the top of the experiment), so this run lists a link to it among
    its children (``<name> (reused)``, :func:`~regbias.tracking.runs.link_reused_run`).
    """
    return [
        f"Job {markdown_text(job)} reused run {markdown_code(run_id)} (finished earlier, not "
        "run again): its results are pooled here, and this run's children list it as a link "
        "(`(reused)` in its name)."
        for job, run_id in results.reused
    ]


def truncation_caveats(results: StudyResults) -> list[str]:
    """One caveat naming each measurement's share of drawn texts cut at the encoder's window.

    E.g. "Drawn texts cut at the encoder's 128-token window (their tail is not embedded):
    long 57.0% (1,368 of 2,400)." None where every drawn text fits or no window was known.
    """
    cut = [f for f in results.window_fits if f.in_full < f.texts]
    if not cut:
        return []
    window = results.meta.get("encoder_max_length")
    where = f"the encoder's {int(window)}-token window" if window else "the encoder's window"
    kinds = ", ".join(
        f"{f.kind} {f.cut_share:.1%} ({f.texts - f.in_full:,} of {f.texts:,})" for f in cut
    )
    return [f"Drawn texts cut at {where} (their tail is not embedded): {markdown_text(kinds)}."]


def baseline_sizes(results: StudyResults, record: PerformancePairTests | None) -> str:
    """Why ``baseline``'s size differs by measure, in one sentence of the run's own counts.

    Here it is a job's general training sample (its distances draw from all of it); the
    performance test of record counts every distinct training text some model scored on its
    held-out fold (over every job of a sweep); one model is scored on its own fold only
    (``task=describe`` shows that size).
    """
    parts = [
        f"`baseline` is {_count(results.group_sizes.get(BASELINE))} texts here (a job's general "
        "training sample: its distances draw from all of it)"
    ]
    if record is not None:
        rows = record.groups[
            (record.groups["group"] == BASELINE) & (record.groups["metric"] == record.metric)
        ]
        if len(rows):
            parts.append(
                f"{_count(int(rows['n_texts'].iloc[0]))} in the performance test of record "
                "(every distinct training text a model scored on its held-out fold, over all jobs)"
            )
    folds = _fold_sizes(results)
    if folds:
        parts.append(f"{folds} per model (its own held-out fold, as `task=describe` shows)")
    pool = results.meta.get("training_pool")
    said = f" The training pool is {markdown_text(pool)}." if pool else ""
    return "; ".join(parts) + "." + said


def _count(n: int | None) -> str:
    return "an unknown number of" if n is None else f"{n:,}"


def _fold_sizes(results: StudyResults) -> str:
    """The models' held-out fold sizes (``600``, ``599-600``), or "" where not scored whole.

    Only the ``texts`` design scores a model's whole fold (the ``draws`` design draws from it).
    """
    per_model = results.per_model
    texts_design = results.meta.get("evaluation_design", "texts") == "texts"
    if per_model is None or "n_texts" not in per_model or not texts_design:
        return ""
    sizes = per_model.loc[per_model["group"] == BASELINE, "n_texts"].dropna()
    if not len(sizes):
        return ""
    low, high = int(sizes.min()), int(sizes.max())
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def _scored_how(results: StudyResults) -> str:
    """What the per-model means are measured on: every text, or the first version's draws."""
    if results.meta.get("evaluation_design", "texts") == "texts":
        return (
            "Each model's metric on every distinct text of each group it did not train on "
            "(point means over the models; their noise, and which gaps are more than noise, "
            "in the test of record below)."
        )
    return (
        "Each model's metric averaged over its repeated evaluation draws (the first version's "
        "design: point means over the models, no interval and no test)."
    )


def power_section(power: PowerResult) -> str:
    """Markdown: the plants, the test's detection rate per size class and share, the figure."""
    rates = power.rates()
    rates["pair sizes"] = rates["n_a"].astype(str) + " + " + rates["n_b"].astype(str)
    table = rates.pivot(index="share", columns="pair sizes", values="power")
    table.index = [f"{s:.0%}" for s in table.index]
    table.index.name = "share"
    lines = [
        "## Power of the test of record",
        "",
        "At every size class of the tested pairs, two pseudo-groups cut from "
        f"{markdown_code(power.source)} (exchangeable), a share of one side replaced by fresh "
        f"texts of {markdown_code(power.donor)}, {int(rates['plants'].max())} plants per share, "
        f"{power.relabellings} relabellings each. Detected: p <= level / m (Holm's first step "
        "over the pair's family). Share 0 is the false-positive rate. 80% power is claimed "
        "only where the 95% Clopper-Pearson lower bound reaches it.",
        "",
        _markdown_table(table),
        "",
        *[f"- pairs of {a} and {b} texts: {power.sentence(a, b)}." for a, b in power.detectable()],
        "",
        f"![power]({paths.POWER_FIGURE})",
    ]
    return "\n".join(lines) + "\n"


def _correlation_section(analysis: Analysis, settings: AnalysisSettings) -> list[str]:
    """The primary hypothesis, then the strongest correlations, with their evidence."""
    if analysis.correlations is None:
        return [analysis.note]
    found, row = correlation_frame(analysis.correlations), primary_row(analysis.primary)
    top = correlation_frame(strongest_rows(analysis.correlations, 8))
    if settings.correlation.primary is not None:
        distance, performance = settings.correlation.primary
        is_primary = (found["distance"] == distance) & (found["performance"] == performance)
        others = (top["distance"] != distance) | (top["performance"] != performance)
        first = [row, found[is_primary]]
        top = pd.concat([f for f in first if len(f)] + [top[others]], ignore_index=True)
    spearman_p, kendall_p = (p_name(s, settings.correlation.adjust) for s in STATISTICS)
    wanted = [
        "distance",
        "performance",
        "n_pairs",
        RHO,
        RHO_P,
        spearman_p,
        *RHO_CI,
        "loo_rho_min",
        "loo_rho_max",
        TAU,
        TAU_P,
        kendall_p,
    ]
    columns = [c for c in dict.fromkeys(wanted) if c in top.columns]
    primary = ""
    if settings.correlation.primary is not None and len(row):
        primary = (
            " The declared primary hypothesis comes first: its regions-only test (its "
            "spearman_p_perm is its Mantel p, held alone to the level), then its pair on all "
            "groups, a secondary row."
        )
    elif settings.correlation.primary is not None:
        primary = " The declared primary hypothesis comes first."
    scatters = scatter_rows(analysis, settings)
    if len(scatters):
        drawn = (
            f"Scatter plots of the {len(scatters)} strongest correlations significant by "
            f"either test (at most {MAX_SCATTERS}) follow."
        )
    else:
        drawn = "No correlation is significant by either test: no scatter plot is drawn."
    images = [
        f"![{markdown_text(row.distance)} vs {markdown_text(row.performance)}]"
        f"({scatter_path(row.distance, row.performance)})"
        for row in scatters.itertuples()
    ]
    if (test := analysis.primary) is not None and len(row):
        shown = f"{markdown_text(test.distance)} vs {markdown_text(test.performance)}"
        images.insert(
            0, f"![primary hypothesis: {shown}, regions only]({primary_scatter_path(test)})"
        )
    return [
        _markdown_table(top[columns].set_index("distance")),
        "",
        f"![rho]({paths.correlation_figure(RHO)})",
        f"![tau]({paths.correlation_figure(TAU)})",
        f"\nPermutation p-values are Mantel-style (group labels permuted). The primary "
        "hypothesis is tested alone, on the regions' pairs, one-sided (Findings). Every other "
        f"row is a secondary test: significance (level {settings.significance}) is marked by the "
        f"{settings.correlation.adjust} adjustment over all rows (*_p_maxt: Westfall-Young "
        "step-down maxT over the shared group relabellings, maxt_method says where it fell back "
        "to Holm; "
        f"*_p_holm, *_p_bh; none = unadjusted).{primary} {drawn} Robustness of every "
        f"correlation: {paths.ROBUSTNESS_CSV}.",
        *(["", *images] if images else []),
    ]


def _representation_section(results: StudyResults) -> list[str]:
    names = representation_names(results)
    if not names:
        return []
    return [
        "",
        "## Distance to baseline against representation",
        "",
        "Each region's distance to `baseline` against its share of the regions' texts (percent, "
        "log scale).",
        "",
        *[f"![{n} to baseline]({paths.representation_figure(n)})" for n in names],
    ]


def _markdown_table(frame: pd.DataFrame) -> str:
    names = [frame.index.name or "", *frame.columns]
    header = "| " + " | ".join(markdown_text(n) for n in names) + " |"
    rule = "|" + "---|" * (len(frame.columns) + 1)
    body = [
        "| " + " | ".join([markdown_text(i), *(cell_text(v) for v in row)]) + " |"
        for i, row in zip(frame.index, frame.to_numpy(), strict=False)
    ]
    return "\n".join([header, rule, *body])


def scatter_rows(analysis: Analysis, settings: AnalysisSettings) -> pd.DataFrame:
    """The :data:`MAX_SCATTERS` strongest correlations significant by Spearman or Kendall."""
    if analysis.correlations is None:
        return pd.DataFrame()
    found = correlation_frame(analysis.correlations)
    spearman_p, kendall_p = (p_name(s, settings.correlation.adjust) for s in STATISTICS)
    alpha = settings.significance
    significant = found[(found[spearman_p] < alpha) | (found[kendall_p] < alpha)]
    order = significant[RHO].abs().sort_values(ascending=False).index
    return significant.reindex(order).head(MAX_SCATTERS)


def primary_scatter_path(test: PrimaryTest) -> str:
    """The artifact path of the primary hypothesis's regions-only scatter plot."""
    return scatter_path(test.distance, test.performance).replace("/scatter/", "/scatter/primary__")


def primary_row(test: PrimaryTest | None) -> pd.DataFrame:
    """The primary test as a row of the correlation table (empty: no rank correlation).

    Its ``distance`` says it is the regions-only test; ``spearman_p_perm`` is its Mantel p,
    held alone to the level.
    """
    if test is None or not math.isfinite(test.rho):
        return pd.DataFrame()
    row = {
        "distance": f"{test.distance} (primary: regions only)",
        "performance": test.performance,
        "n_pairs": test.n_pairs,
        RHO: test.rho,
        RHO_P: test.p_value,
        RHO_CI[0]: test.ci_low,
        RHO_CI[1]: test.ci_high,
    }
    return pd.DataFrame([row])


def scatter_path(distance: str, performance: str) -> str:
    """The artifact path of one correlation's scatter plot (one per distance and column)."""
    return paths.scatter_figure(paths.pair_name(str(distance), str(performance), "__"))


def representation_names(results: StudyResults) -> list[str]:
    """The distances drawn against representation (those measured to the baseline)."""
    if not region_shares(results):
        return []
    return [n for n, m in results.distances.items() if BASELINE in m.groups]


def region_shares(results: StudyResults) -> dict[str, float]:
    """Each region's share of the regions' texts, in percent (empty without a baseline)."""
    regions = [g for g in results.groups if g in REGIONS and g in results.group_sizes]
    total = sum(results.group_sizes[g] for g in regions)
    if BASELINE not in results.groups or not total:
        return {}
    return {g: 100.0 * results.group_sizes[g] / total for g in regions}
