"""Write a job's or a sweep's results into its MLflow run: tables, figures, ``report.md``."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from regbias.analysis.correlations import strongest
from regbias.analysis.multiplicity import p_column
from regbias.analysis.pair_power import PowerResult
from regbias.analysis.pair_test import PairTests
from regbias.analysis.pair_verdicts import pair_verdicts, with_verdict_columns
from regbias.analysis.results import Analysis, AnalysisSettings, StudyResults
from regbias.data.groups import BASELINE
from regbias.data.sentiment140 import REGIONS
from regbias.distances.matrix import DistanceMatrix
from regbias.report import figures as plots
from regbias.report.bottom_line import Evidence, random_encoder_warning
from regbias.report.escape import markdown_code, markdown_text
from regbias.report.findings import findings_markdown
from regbias.report.headline import HEADLINE_FILE
from regbias.report.noise import noise_section, unusable_lines, verdict_lines
from regbias.report.record import (
    PAIR_TESTS_CSV,
    PAIR_TESTS_JSON,
    record_lines,
    record_matrix,
    record_metrics,
    record_section,
)
from regbias.tracking.runs import RunLog

__all__ = [
    "HEADLINE_FILE",
    "log_record",
    "with_record_columns",
    "artifact_name",
    "log_analysis",
    "log_distances",
    "report_markdown",
    "scatter_path",
    "scatter_rows",
]

# Metrics whose per-group distributions are drawn (the paper's Figs. 9/10).
DISTRIBUTION_METRICS = ("accuracy", "roc_auc", "subset_accuracy", "micro_f1")
MAX_SCATTERS = 12


def log_distances(
    run: RunLog, matrices: dict[str, DistanceMatrix], *, figures: bool = True
) -> None:
    """Log each matrix as ``distances/<name>.json`` and ``.csv``, with one metric per pair.

    Args:
        run: the run to log to.
        matrices: the distance matrices by name.
        figures: also log each matrix's heatmap and floor plot.
    """
    metrics: dict[str, float] = {}
    for name, matrix in matrices.items():
        run.json(matrix.to_dict(), f"distances/{name}.json")
        run.table(matrix.to_frame(), f"distances/{name}.csv", index=True)
        sd = pd.DataFrame(matrix.sd, index=matrix.groups, columns=matrix.groups)
        run.table(sd, f"distances/{name}_sd.csv", index=True)
        if figures:
            run.figure(plots.distance_heatmap(matrix), f"figures/{name}.png")
        if figures and matrix.floor is not None:
            run.figure(plots.floor_plot(matrix), f"figures/{name}_floor.png")
        for row in matrix.pairs().itertuples():
            metrics[f"dist/{name}/{row.group_a}__{row.group_b}"] = row.mean
    run.metrics({k: v for k, v in metrics.items() if math.isfinite(v)})


def log_analysis(
    run: RunLog,
    results: StudyResults,
    analysis: Analysis,
    settings: AnalysisSettings,
    *,
    power: PowerResult | None = None,
) -> None:
    """Performance tables, the pairwise table, correlations, figures and ``report.md``.

    The test of record (``results.record``) leads the pair verdicts; with ``power`` (planted
    mixtures) the report gains a power section.
    """
    # First, so the run's page lists the headline before the hundreds of other metrics.
    evidence = _evidence(results, analysis, settings)
    run.metrics({f"headline/{k}": v for k, v in evidence.numbers().items() if math.isfinite(v)})
    if analysis.summary is not None:
        run.table(analysis.summary, "performance/summary.csv")
        if analysis.gaps is not None:
            run.table(analysis.gaps, "performance/gaps.csv")
        if analysis.dcor is not None:
            run.table(analysis.dcor, "performance/dcor.csv")
        _log_group_means(run, analysis.summary)
        _distribution_figures(run, analysis.summary, results.groups)
    verdicts = pair_verdicts(results.distances, settings.adjust, settings.significance)
    pairwise = with_record_columns(
        with_verdict_columns(analysis.pairwise, verdicts), results.record
    )
    run.table(pairwise, "analysis/pairwise.csv")
    if results.record is not None:
        log_record(run, results.record)
    if analysis.correlations is not None:
        run.table(analysis.correlations, "analysis/correlations.csv")
        _correlation_figures(run, analysis, settings)
    if analysis.robustness is not None:
        run.table(analysis.robustness, "analysis/robustness.csv")
    if analysis.primary is not None:
        run.table(analysis.primary.to_frame(), "analysis/primary.csv")
        if analysis.primary.power is not None:
            run.table(analysis.primary.power.table, "analysis/primary_power.csv")
    _representation_figures(run, results)
    lines = [
        *record_lines(results.record),
        *verdict_lines(results.distances, settings.adjust, settings.significance),
    ]
    run.json(evidence.numbers(), HEADLINE_FILE)
    report = report_markdown(results, analysis, settings, extra_findings=lines)
    if power is not None:
        report += "\n" + power_section(power)
    run.text(report, "report.md")


def log_record(run: RunLog, tests: PairTests) -> None:
    """The test of record: ``analysis/pair_tests.csv|json``, its metrics and z heatmap."""
    run.table(tests.table, PAIR_TESTS_CSV)
    run.json(tests.to_dict(), PAIR_TESTS_JSON)
    run.metrics(record_metrics(tests))
    title = f"test of record: z of the {tests.settings.words()}"
    run.figure(plots.distance_heatmap(record_matrix(tests), title), "figures/pair_test_z.png")


def with_record_columns(pairwise: pd.DataFrame, tests: PairTests | None) -> pd.DataFrame:
    """The pair table with the test of record's columns (``pair_test_*``), pairs either order."""
    if tests is None:
        return pairwise
    keyed = {frozenset((r["group_a"], r["group_b"])): r for _, r in tests.table.iterrows()}
    out = pairwise.copy()
    for column in ("family", "z", "p", "p_adjusted", "differs", "detectable_share"):
        out[f"pair_test_{column}"] = [
            keyed[frozenset((a, b))][column] if frozenset((a, b)) in keyed else None
            for a, b in zip(out["group_a"], out["group_b"], strict=True)
        ]
    return out


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
        "![power](figures/power.png)",
    ]
    return "\n".join(lines) + "\n"


def _log_group_means(run: RunLog, summary: pd.DataFrame) -> None:
    means = summary.groupby(["metric", "group"], sort=False)["value"].mean()
    run.metrics({f"test/{g}/{m}": v for (m, g), v in means.items() if math.isfinite(v)})


def _distribution_figures(run: RunLog, summary: pd.DataFrame, groups: list[str]) -> None:
    present = [g for g in groups if g in set(summary["group"])]
    for metric in DISTRIBUTION_METRICS:
        if metric in set(summary["metric"]):
            figure = plots.performance_distributions(summary, metric, groups=present)
            run.figure(figure, f"figures/performance_{metric}.png")


def _correlation_figures(run: RunLog, analysis: Analysis, settings: AnalysisSettings) -> None:
    found = analysis.correlations
    assert found is not None
    # Significance is marked by the p-values adjusted as `analysis.adjust` says.
    spearman_p, kendall_p = (p_column(s, settings.adjust) for s in ("spearman", "kendall"))
    for statistic, marking in (("spearman_rho", spearman_p), ("kendall_tau", kendall_p)):
        figure = plots.correlation_heatmap(found, statistic, marking, alpha=settings.significance)
        run.figure(figure, f"figures/correlations_{statistic}.png")
    suffix = spearman_p.removeprefix("spearman_")
    for row in scatter_rows(analysis, settings).itertuples():
        figure = plots.pair_scatter(
            analysis.pairwise, row.distance, row.performance, row._asdict(), p_suffix=suffix
        )
        run.figure(figure, scatter_path(row.distance, row.performance))


def scatter_rows(analysis: Analysis, settings: AnalysisSettings) -> pd.DataFrame:
    """The correlations drawn as scatter plots.

    Args:
        analysis: the analysis whose correlation table is read.
        settings: its settings (``adjust`` says which adjusted p-values mark significance).

    Returns:
        The :data:`MAX_SCATTERS` strongest rows significant by Spearman's or Kendall's test
        (empty when there is no correlation table).
    """
    found = analysis.correlations
    if found is None:
        return pd.DataFrame()
    spearman_p, kendall_p = (p_column(s, settings.adjust) for s in ("spearman", "kendall"))
    alpha = settings.significance
    significant = found[(found[spearman_p] < alpha) | (found[kendall_p] < alpha)]
    order = significant["spearman_rho"].abs().sort_values(ascending=False).index
    return significant.reindex(order).head(MAX_SCATTERS)


def scatter_path(distance: str, performance: str) -> str:
    """The artifact path of one correlation's scatter plot."""
    return f"figures/scatter/{artifact_name(distance)}__{artifact_name(performance)}.png"


def artifact_name(name: object) -> str:
    """A user's column name made safe as one artifact path component.

    Only letters, digits, ``_``, ``-`` and ``.`` are kept (others become ``_``) and leading dots
    go, so ``../x`` or ``a/b`` can never leave or nest the run's artifact folder.
    """
    safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in str(name))
    return safe.lstrip(".") or "_"


def _representation_figures(run: RunLog, results: StudyResults) -> None:
    """Fig. 5: each region's distance to the baseline against its share of the regional data."""
    share = _region_shares(results)
    for name in _representation_names(results):
        matrix = results.distances[name]
        distance = {g: matrix.value(g, BASELINE) for g in share if g in matrix.groups}
        figure = plots.representation_plot(distance, share, name, log_share=True)
        run.figure(figure, f"figures/representation_{name}.png")


def _region_shares(results: StudyResults) -> dict[str, float]:
    """Each region's share of the regions' texts, in percent (empty without a baseline)."""
    regions = [g for g in results.groups if g in REGIONS and g in results.group_sizes]
    total = sum(results.group_sizes[g] for g in regions)
    if BASELINE not in results.groups or not total:
        return {}
    return {g: 100.0 * results.group_sizes[g] / total for g in regions}


def _representation_names(results: StudyResults) -> list[str]:
    """The distances drawn against representation (those measured to the baseline)."""
    if not _region_shares(results):
        return []
    return [n for n, m in results.distances.items() if BASELINE in m.groups]


def report_markdown(
    results: StudyResults,
    analysis: Analysis,
    settings: AnalysisSettings,
    extra_findings: Sequence[str] = (),
) -> str:
    """One page: findings, groups, encoder and revision, matrices, correlations, figures.

    Args:
        results: the measurements.
        analysis: their analysis.
        settings: the analysis settings (adjustment, level, primary hypothesis).
        extra_findings: further lines for the Findings section (e.g. pairs above noise).
    """
    meta = results.meta
    lines = [f"# regbias report: {markdown_text(meta.get('dataset', ''))}", ""]
    lines += [
        findings_markdown(
            analysis.correlations,
            analysis.robustness,
            primary=settings.primary,
            adjust=settings.adjust,
            significance=settings.significance,
            confidence=settings.confidence,
            extra_lines=extra_findings,
            note=analysis.note,
            primary_test=analysis.primary,
            opening=_opening(results, analysis, settings),
        )
    ]
    lines += ["## Settings that ran", ""]
    lines += [f"- {markdown_text(k)}: {markdown_text(v)}" for k, v in meta.items()]
    lines += ["", "## Groups", "", "| group | texts |", "|---|---|"]
    lines += [f"| {markdown_text(g)} | {results.group_sizes.get(g, '')} |" for g in results.groups]
    if BASELINE in results.groups:
        lines += [
            "",
            "`baseline` is a job's general training sample: its distances use all of it, and "
            "each fold model is scored on its own held-out fold (1/k of it).",
        ]
    for name, matrix in results.distances.items():
        shown = markdown_text(name)
        lines += ["", f"## Distance: {shown} (mean over {matrix.n_repetitions} repetitions)", ""]
        lines += [_markdown_table(matrix.to_frame()), "", f"![{shown}](figures/{name}.png)"]
        if matrix.floor is not None:
            lines += ["", f"![{shown} against its noise floor](figures/{name}_floor.png)"]
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
        lines += ["", f"## Performance (mean over {n_models} models)", "", _markdown_table(means)]
        drawn = [m for m in DISTRIBUTION_METRICS if m in set(analysis.summary["metric"])]
        lines += ["", *[f"![{m}](figures/performance_{m}.png)" for m in drawn]]
    lines += _representation_section(results)
    lines += ["", "## Strongest correlations", ""]
    lines += _correlation_section(analysis, settings)
    return "\n".join(lines) + "\n"


def _correlation_section(analysis: Analysis, settings: AnalysisSettings) -> list[str]:
    """The primary hypothesis, then the strongest correlations, with their evidence."""
    found = analysis.correlations
    if found is None:
        return [analysis.note]
    top = strongest(found, k=8)
    if settings.primary is not None:
        distance, performance = settings.primary
        is_primary = (found["distance"] == distance) & (found["performance"] == performance)
        others = (top["distance"] != distance) | (top["performance"] != performance)
        top = pd.concat([found[is_primary], top[others]], ignore_index=True)
    spearman_p, kendall_p = (p_column(s, settings.adjust) for s in ("spearman", "kendall"))
    wanted = [
        "distance",
        "performance",
        "n_pairs",
        "spearman_rho",
        "spearman_p_perm",
        spearman_p,
        "spearman_ci_low",
        "spearman_ci_high",
        "loo_rho_min",
        "loo_rho_max",
        "kendall_tau",
        "kendall_p_perm",
        kendall_p,
    ]
    columns = [c for c in dict.fromkeys(wanted) if c in top.columns]
    primary = "" if settings.primary is None else " The declared primary hypothesis comes first."
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
    return [
        _markdown_table(top[columns].set_index("distance")),
        "",
        "![rho](figures/correlations_spearman_rho.png)",
        "![tau](figures/correlations_kendall_tau.png)",
        f"\nPermutation p-values are Mantel-style (group labels permuted). The primary "
        "hypothesis is tested alone, on the regions' pairs, one-sided (Findings). Every other "
        f"row is a secondary test: significance (level {settings.significance}) is marked by the "
        f"{settings.adjust} adjustment over all rows (*_p_maxt: Westfall-Young step-down maxT "
        "over the shared group relabellings, maxt_method says where it fell back to Holm; "
        f"*_p_holm, *_p_bh; none = unadjusted).{primary} {drawn} Robustness of every "
        "correlation: analysis/robustness.csv.",
        *(["", *images] if images else []),
    ]


def _opening(results: StudyResults, analysis: Analysis, settings: AnalysisSettings) -> list[str]:
    """The lines before every finding.

    A random encoder's warning, each distance with no usable value (with the settings that
    fix it), then the bottom line.
    """
    line = _evidence(results, analysis, settings).sentence()
    warning = random_encoder_warning(results.meta)
    return [*([warning] if warning else []), *unusable_lines(results.distances), line]


def _evidence(results: StudyResults, analysis: Analysis, settings: AnalysisSettings) -> Evidence:
    return Evidence(
        analysis.primary,
        analysis.correlations,
        results.record,
        settings.adjust,
        settings.significance,
    )


def _representation_section(results: StudyResults) -> list[str]:
    names = _representation_names(results)
    if not names:
        return []
    return [
        "",
        "## Distance to baseline against representation",
        "",
        "Each region's distance to `baseline` against its share of the regions' texts (percent, "
        "log scale).",
        "",
        *[f"![{n} to baseline](figures/representation_{n}.png)" for n in names],
    ]


def _markdown_table(frame: pd.DataFrame) -> str:
    names = [frame.index.name or "", *frame.columns]
    header = "| " + " | ".join(markdown_text(n) for n in names) + " |"
    rule = "|" + "---|" * (len(frame.columns) + 1)
    body = [
        "| " + " | ".join([markdown_text(i), *(_cell(v) for v in row)]) + " |"
        for i, row in zip(frame.index, frame.to_numpy(), strict=False)
    ]
    return "\n".join([header, rule, *body])


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    return markdown_text(value)
