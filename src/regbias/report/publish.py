"""Write a job's or a sweep's results into its MLflow run: tables, figures, ``report.md``.

The page itself is :mod:`regbias.report.markdown`'s; this module writes it, and the tables and
figures it links, into the run.
"""

from __future__ import annotations

import math

import pandas as pd

from regbias.analysis.multiplicity import p_column
from regbias.analysis.power.embedding import PowerResult
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.analysis.tests.embedding import PairTests
from regbias.analysis.tests.pairwise import DIFFERS, GROUP_A, GROUP_B, PairwiseTests
from regbias.analysis.tests.performance import PerfTests
from regbias.data.groups import BASELINE
from regbias.distances.matrix import DistanceMatrix
from regbias.report import figures as plots
from regbias.report.bottom_line import Evidence
from regbias.report.explain import explain_section, log_explanations
from regbias.report.markdown import (
    DISTRIBUTION_METRICS,
    power_section,
    primary_row,
    primary_scatter_path,
    region_shares,
    report_findings,
    report_markdown,
    representation_names,
    scatter_path,
    scatter_rows,
)
from regbias.report.noise import verdict_lines
from regbias.report.perf_record import (
    perf_figure,
)
from regbias.report.record import (
    pairs_columns,
    pairs_lines,
    pairs_metrics,
    record_matrix,
)
from regbias.tracking import artifacts as paths
from regbias.tracking.runs import RunLog

__all__ = [
    "log_analysis",
    "log_distances",
    "log_perf_record",
    "log_record",
    "log_tests",
]


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
        run.json(matrix.to_dict(), paths.distance_json(name))
        run.table(matrix.to_frame(), paths.distance_csv(name), index=True)
        sd = pd.DataFrame(matrix.sd, index=matrix.groups, columns=matrix.groups)
        run.table(sd, paths.distance_sd_csv(name), index=True)
        if figures:
            run.figure(plots.distance_heatmap(matrix), paths.distance_figure(name))
        if figures and matrix.floor is not None:
            run.figure(plots.floor_plot(matrix), paths.floor_figure(name))
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
    evidence = Evidence.of(results, analysis, settings)
    run.metrics({f"headline/{k}": v for k, v in evidence.numbers().items() if math.isfinite(v)})
    if analysis.summary is not None:
        run.table(analysis.summary, paths.SUMMARY_CSV)
        if analysis.gaps is not None:
            run.table(analysis.gaps, paths.GAPS_CSV)
        if analysis.dcor is not None:
            run.table(analysis.dcor, paths.DCOR_CSV)
        _log_group_means(run, analysis.summary)
        _distribution_figures(run, analysis.summary, results.groups)
    pairwise = pairs_columns(analysis.pairwise, results.record)
    pairwise = pairs_columns(pairwise, analysis.performance_record)
    run.table(pairwise, paths.PAIRWISE_CSV)
    if results.record is not None:
        log_record(run, results.record)
    if analysis.performance_record is not None:
        log_perf_record(run, analysis.performance_record)
    if analysis.performance_power is not None:
        run.table(analysis.performance_power.rates, paths.PERF_POWER_CSV)
    if analysis.correlations is not None:
        run.table(analysis.correlations, paths.CORRELATIONS_CSV)
        _correlation_figures(run, analysis, settings)
    if analysis.robustness is not None:
        run.table(analysis.robustness, paths.ROBUSTNESS_CSV)
    if analysis.primary is not None:
        run.table(analysis.primary.to_frame(), paths.PRIMARY_CSV)
        if analysis.primary.power is not None:
            run.table(analysis.primary.power.table, paths.PRIMARY_POWER_CSV)
    _representation_figures(run, results)
    lines = [
        *pairs_lines(results.record),
        *pairs_lines(analysis.performance_record),
        *verdict_lines(results.distances),
    ]
    run.json(evidence.numbers(), paths.HEADLINE_JSON)
    findings = report_findings(results, analysis, settings, extra_findings=lines)
    run.json(findings.to_dict(), paths.FINDINGS_JSON)
    report = report_markdown(results, analysis, settings, findings=findings)
    if power is not None:
        report += "\n" + power_section(power)
    if results.explained is not None:
        log_explanations(run, results.explained)
        report += "\n" + explain_section(results.explained)
    run.text(report, paths.REPORT_MD)


def log_tests(run: RunLog, tests: PairwiseTests, table: str, form: str) -> None:
    """A pairwise test of record: its table (at ``table``), JSON form (``form``) and metrics."""
    run.table(tests.table, table)
    run.json(tests.to_dict(), form)
    run.metrics(pairs_metrics(tests))


def log_record(run: RunLog, tests: PairTests) -> None:
    """The test of record: ``analysis/pair_tests.csv|json``, its metrics and effect heatmap."""
    log_tests(run, tests, paths.PAIR_TESTS_CSV, paths.PAIR_TESTS_JSON)
    title = f"test of record: size-free effect ({tests.settings.words()}); outlined: differs"
    differs = tests.table[tests.table[DIFFERS].astype(bool)]
    marked = set(zip(differs[GROUP_A], differs[GROUP_B], strict=True))
    figure = plots.distance_heatmap(record_matrix(tests), title, marked=marked)
    run.figure(figure, paths.PAIR_TEST_FIGURE)


def log_perf_record(run: RunLog, tests: PerfTests) -> None:
    """The performance test of record: its tables, JSON form, metrics and figure."""
    log_tests(run, tests, paths.PERF_TESTS_CSV, paths.PERF_TESTS_JSON)
    run.table(tests.groups, paths.PERF_GROUPS_CSV)
    run.figure(perf_figure(tests), paths.PERF_FIGURE)


def _log_group_means(run: RunLog, summary: pd.DataFrame) -> None:
    means = summary.groupby(["metric", "group"], sort=False)["value"].mean()
    run.metrics({f"test/{g}/{m}": v for (m, g), v in means.items() if math.isfinite(v)})


def _distribution_figures(run: RunLog, summary: pd.DataFrame, groups: list[str]) -> None:
    present = [g for g in groups if g in set(summary["group"])]
    for metric in DISTRIBUTION_METRICS:
        if metric in set(summary["metric"]):
            figure = plots.performance_distributions(summary, metric, groups=present)
            run.figure(figure, paths.performance_figure(metric))


def _correlation_figures(run: RunLog, analysis: Analysis, settings: AnalysisSettings) -> None:
    found = analysis.correlations
    assert found is not None
    # Significance is marked by the p-values adjusted as `analysis.correlation.adjust` says.
    spearman_p, kendall_p = (
        p_column(s, settings.correlation.adjust) for s in ("spearman", "kendall")
    )
    for statistic, marking in (("spearman_rho", spearman_p), ("kendall_tau", kendall_p)):
        figure = plots.correlation_heatmap(found, statistic, marking, alpha=settings.significance)
        run.figure(figure, paths.correlation_figure(statistic))
    suffix = spearman_p.removeprefix("spearman_")
    _primary_figure(run, analysis)
    for row in scatter_rows(analysis, settings).itertuples():
        figure = plots.pair_scatter(
            analysis.pairwise, row.distance, row.performance, row._asdict(), p_suffix=suffix
        )
        run.figure(figure, scatter_path(row.distance, row.performance))


def _primary_figure(run: RunLog, analysis: Analysis) -> None:
    """The primary hypothesis's own scatter plot: its regions' pairs, its test in the title."""
    test = analysis.primary
    if test is None or not len(primary_row(test)):
        return
    pairs = analysis.pairwise
    regions = pairs[pairs["group_a"].isin(test.groups) & pairs["group_b"].isin(test.groups)]
    kind = "exact Mantel p" if test.exact else "Mantel p"
    title = (
        f"primary hypothesis, regions only ({test.n_pairs} pairs): rho = {test.rho:.2f}, "
        f"{kind} = {test.p_value:.2g} (level {test.significance:g})"
    )
    figure = plots.pair_scatter(regions, test.distance, test.performance, title=title)
    run.figure(figure, primary_scatter_path(test))


def _representation_figures(run: RunLog, results: StudyResults) -> None:
    """Fig. 5: each region's distance to the baseline against its share of the regional data."""
    share = region_shares(results)
    for name in representation_names(results):
        matrix = results.distances[name]
        distance = {g: matrix.value(g, BASELINE) for g in share if g in matrix.groups}
        figure = plots.representation_plot(distance, share, name, log_share=True)
        run.figure(figure, paths.representation_figure(name))
