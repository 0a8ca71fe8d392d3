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
from regbias.analysis.tests.performance import PerfTests
from regbias.data.groups import BASELINE
from regbias.distances.matrix import DistanceMatrix
from regbias.report import figures as plots
from regbias.report.bottom_line import Evidence
from regbias.report.headline import HEADLINE_FILE
from regbias.report.markdown import (
    DISTRIBUTION_METRICS,
    power_section,
    region_shares,
    report_markdown,
    representation_names,
    scatter_path,
    scatter_rows,
)
from regbias.report.noise import verdict_lines
from regbias.report.perf_record import (
    PERF_FIGURE,
    PERF_GROUPS_CSV,
    PERF_TESTS_CSV,
    PERF_TESTS_JSON,
    perf_figure,
    perf_lines,
    perf_metrics,
    with_perf_columns,
)
from regbias.report.record import (
    PAIR_TESTS_CSV,
    PAIR_TESTS_JSON,
    record_lines,
    record_matrix,
    record_metrics,
)
from regbias.tracking.runs import RunLog

__all__ = [
    "log_analysis",
    "log_distances",
    "log_perf_record",
    "log_record",
    "with_record_columns",
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
    evidence = Evidence.of(results, analysis, settings)
    run.metrics({f"headline/{k}": v for k, v in evidence.numbers().items() if math.isfinite(v)})
    if analysis.summary is not None:
        run.table(analysis.summary, "performance/summary.csv")
        if analysis.gaps is not None:
            run.table(analysis.gaps, "performance/gaps.csv")
        if analysis.dcor is not None:
            run.table(analysis.dcor, "performance/dcor.csv")
        _log_group_means(run, analysis.summary)
        _distribution_figures(run, analysis.summary, results.groups)
    pairwise = with_record_columns(analysis.pairwise, results.record)
    pairwise = with_perf_columns(pairwise, analysis.performance_record)
    run.table(pairwise, "analysis/pairwise.csv")
    if results.record is not None:
        log_record(run, results.record)
    if analysis.performance_record is not None:
        log_perf_record(run, analysis.performance_record)
    if analysis.performance_power is not None:
        run.table(analysis.performance_power.rates, "analysis/perf_power.csv")
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
        *perf_lines(analysis.performance_record),
        *verdict_lines(results.distances),
    ]
    run.json(evidence.numbers(), HEADLINE_FILE)
    report = report_markdown(results, analysis, settings, extra_findings=lines)
    if power is not None:
        report += "\n" + power_section(power)
    run.text(report, "report.md")


def log_record(run: RunLog, tests: PairTests) -> None:
    """The test of record: ``analysis/pair_tests.csv|json``, its metrics and effect heatmap."""
    run.table(tests.table, PAIR_TESTS_CSV)
    run.json(tests.to_dict(), PAIR_TESTS_JSON)
    run.metrics(record_metrics(tests))
    title = f"test of record: size-free effect ({tests.settings.words()})"
    run.figure(plots.distance_heatmap(record_matrix(tests), title), "figures/pair_test_effect.png")


def log_perf_record(run: RunLog, tests: PerfTests) -> None:
    """The performance test of record: its tables, JSON form, metrics and figure."""
    run.table(tests.table, PERF_TESTS_CSV)
    run.table(tests.groups, PERF_GROUPS_CSV)
    run.json(tests.to_dict(), PERF_TESTS_JSON)
    run.metrics(perf_metrics(tests))
    run.figure(perf_figure(tests), PERF_FIGURE)


def with_record_columns(pairwise: pd.DataFrame, tests: PairTests | None) -> pd.DataFrame:
    """The pair table with the test of record's columns (``pair_test_*``), pairs either order."""
    if tests is None:
        return pairwise
    keyed = {frozenset((r["group_a"], r["group_b"])): r for _, r in tests.table.iterrows()}
    out = pairwise.copy()
    columns = ("family", "effect", "effect_ci_low", "effect_ci_high", "z", "p", "p_adjusted")
    for column in (*columns, "differs", "detectable_share"):
        out[f"pair_test_{column}"] = [
            keyed[frozenset((a, b))][column] if frozenset((a, b)) in keyed else None
            for a, b in zip(out["group_a"], out["group_b"], strict=True)
        ]
    return out


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
    # Significance is marked by the p-values adjusted as `analysis.correlation.adjust` says.
    spearman_p, kendall_p = (
        p_column(s, settings.correlation.adjust) for s in ("spearman", "kendall")
    )
    for statistic, marking in (("spearman_rho", spearman_p), ("kendall_tau", kendall_p)):
        figure = plots.correlation_heatmap(found, statistic, marking, alpha=settings.significance)
        run.figure(figure, f"figures/correlations_{statistic}.png")
    suffix = spearman_p.removeprefix("spearman_")
    for row in scatter_rows(analysis, settings).itertuples():
        figure = plots.pair_scatter(
            analysis.pairwise, row.distance, row.performance, row._asdict(), p_suffix=suffix
        )
        run.figure(figure, scatter_path(row.distance, row.performance))


def _representation_figures(run: RunLog, results: StudyResults) -> None:
    """Fig. 5: each region's distance to the baseline against its share of the regional data."""
    share = region_shares(results)
    for name in representation_names(results):
        matrix = results.distances[name]
        distance = {g: matrix.value(g, BASELINE) for g in share if g in matrix.groups}
        figure = plots.representation_plot(distance, share, name, log_share=True)
        run.figure(figure, f"figures/representation_{name}.png")
