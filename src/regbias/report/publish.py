"""Write a job's or a sweep's results into its MLflow run, and copy a run's report.

Every result artifact goes through here: a job's measurements (its data, distance tables and
performance), the tables and figures of the report and ``report.md`` itself (the page is
:mod:`regbias.report.markdown`'s), ``task=power``'s plants, a sweep's own artifacts, and the
copies of a run (into a sweep's parent, or next to the Hydra outputs). The run-folder paths
are :mod:`regbias.tracking.artifacts`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from regbias.analysis.correlation.by_seed import SeedPrimary, seed_table
from regbias.analysis.correlation.result import RHO, TAU, correlation_frame, p_name
from regbias.analysis.multiplicity import STATISTICS
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import DIFFERS, GROUP_A, GROUP_B, PairwiseTests
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.analysis.power.embedding import PowerResult
from regbias.analysis.power.performance import PerfPower
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.data.groups import BASELINE
from regbias.distances.lda import LdaProjection
from regbias.distances.matrix import DistanceMatrix
from regbias.performance.text_scores import PROBABILITY_FORMAT
from regbias.report import figures as plots
from regbias.report.bottom_line import Evidence, mantel_kind
from regbias.report.counterfactual import counterfactual_section, log_counterfactual
from regbias.report.explain import explain_section, log_explanations
from regbias.report.findings_model import method_markdown
from regbias.report.headline import Headline, headline_of
from regbias.report.markdown import (
    DISTRIBUTION_METRICS,
    power_section,
    primary_scatter_path,
    region_shares,
    report_findings,
    report_markdown,
    representation_names,
    scatter_path,
    scatter_rows,
)
from regbias.report.noise import verdict_lines
from regbias.report.paper_table import paper_latex, paper_section, paper_table
from regbias.report.provenance import provenance_section
from regbias.report.record import (
    pairs_columns,
    pairs_lines,
    pairs_metrics,
    perf_figure,
    record_matrix,
)
from regbias.report.report_folder import RUN_DIR_KEY, replace_report
from regbias.tracking import artifacts as paths
from regbias.tracking.ledger import JobRecord
from regbias.tracking.run_log import RunLog
from regbias.tracking.runs import linked_runs


def write_groups(run: RunLog, table: pd.DataFrame, dropped: Mapping[str, int]) -> None:
    """The group table (sizes, training pool and sample) and the texts dropped per reason."""
    run.table(table, paths.GROUPS_CSV)
    run.json(dict(dropped), paths.DROPPED_JSON)


def write_draws(run: RunLog, frame: pd.DataFrame) -> None:
    """Every draw's size and group (``data/draws.csv``)."""
    run.table(frame, paths.DRAWS_CSV)


def write_lda(run: RunLog, projection: LdaProjection) -> None:
    """The LDA projection of the job's own passages, as a figure (repetition 0)."""
    figure = plots.lda_scatter(projection, "LDA projection (repetition 0)")
    run.figure(figure, paths.LDA_FIGURE)


def write_distance_tables(
    run: RunLog, sensitivity: Mapping[str, pd.DataFrame], diagnostics: Mapping[str, pd.DataFrame]
) -> None:
    """Each distance's sensitivity table and its Sinkhorn diagnostics per repetition."""
    for name, table in sensitivity.items():
        run.table(table, paths.sensitivity_csv(name))
    for name, table in diagnostics.items():
        run.table(table, paths.diagnostics_csv(name))


def write_performance(
    run: RunLog,
    per_model: pd.DataFrame,
    texts: pd.DataFrame | None,
    rewrites: pd.DataFrame | None = None,
) -> None:
    """The per-model scores and, if kept, each text's and rewrite's (:data:`PROBABILITY_FORMAT`)."""
    run.table(per_model, paths.PER_MODEL_CSV)
    if texts is not None:
        run.table(texts, paths.TEXTS_CSV, float_format=PROBABILITY_FORMAT)
    if rewrites is not None:
        run.table(rewrites, paths.REWRITES_CSV, float_format=PROBABILITY_FORMAT)


def write_study(run: RunLog, results: StudyResults, runs: list[str] | None = None) -> None:
    """The groups, their sizes and the meta (``study.json``); a pooled study adds its runs."""
    study: dict[str, object] = {
        "groups": results.groups,
        "group_sizes": results.group_sizes,
        "meta": results.meta,
    }
    if runs is not None:
        study["runs"] = runs
    run.json(study, paths.STUDY_JSON)


def log_distances(
    run: RunLog, matrices: dict[str, DistanceMatrix], *, figures: bool = True
) -> None:
    """Each matrix's ``distances/<name>.json|csv``, pair metrics and (``figures``) plots."""
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


@dataclass(frozen=True)
class Published:
    """A pooled analysis as :func:`log_analysis` wrote it: the pages after it are built from it.

    Attributes:
        results: the measurements it analysed (with their tests of record).
        analysis: what it found.
        headline: what its report says first, and its headline metrics.
    """

    results: StudyResults
    analysis: Analysis
    headline: Headline


def log_analysis(
    run: RunLog,
    results: StudyResults,
    analysis: Analysis,
    settings: AnalysisSettings,
    *,
    power: PowerResult | None = None,
) -> Published:
    """Performance tables, the pairwise table, correlations, figures and ``report.md``.

    The test of record (``results.record``) leads the pair verdicts; with ``power`` (planted
    mixtures) the report gains a power section. Returns what was written, with its headline.
    """
    # First, so the run's page lists the headline before the hundreds of other metrics.
    evidence = Evidence.of(results, analysis, settings)
    numbers = evidence.numbers()
    run.metrics({f"headline/{k}": v for k, v in numbers.items() if math.isfinite(v)})
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
    paper = paper_table(pairwise)
    run.table(paper, paths.PAPER_CSV)
    run.text(paper_latex(paper, settings.robustness.confidence), paths.PAPER_TEX)
    if results.record is not None:
        log_record(run, results.record)
    if analysis.performance_record is not None:
        log_perf_record(run, analysis.performance_record)
    if analysis.performance_power is not None:
        run.table(analysis.performance_power.rates, paths.PERF_POWER_CSV)
    if analysis.correlations is not None:
        run.table(correlation_frame(analysis.correlations), paths.CORRELATIONS_CSV)
        _correlation_figures(run, analysis, settings)
    if analysis.robustness is not None:
        run.table(analysis.robustness, paths.ROBUSTNESS_CSV)
    if analysis.primary is not None:
        run.table(analysis.primary.to_frame(), paths.PRIMARY_CSV)
        if analysis.primary.power is not None:
            run.table(analysis.primary.power.table, paths.PRIMARY_POWER_CSV)
    if analysis.by_seed:
        log_seed_primaries(run, analysis.by_seed)
    _representation_figures(run, results)
    lines = [
        *pairs_lines(results.record),
        *pairs_lines(analysis.performance_record),
        *verdict_lines(results.distances),
    ]
    run.json(numbers, paths.HEADLINE_JSON)
    findings = report_findings(results, analysis, settings, extra_findings=lines)
    run.json(findings.to_dict(), paths.FINDINGS_JSON)
    report = report_markdown(results, analysis, settings, findings=findings)
    if power is not None:
        report += "\n" + power_section(power)
    if results.explained is not None:
        log_explanations(run, results.explained)
        pool = str(results.meta.get("training_pool", ""))
        report += "\n" + explain_section(results.explained, pool)
    if results.counterfactual is not None:
        log_counterfactual(run, results.counterfactual)
        report += "\n" + counterfactual_section(results.counterfactual)
    jobs = [item.run_id for item in analysis.by_seed if item.run_id]
    report += "\n" + paper_section(paper) + "\n" + provenance_section(run, jobs=jobs)
    run.text(report, paths.REPORT_MD)
    run.text(method_markdown(), paths.METHOD_MD)
    record = results.record.table if results.record is not None else None
    headline = headline_of(findings, numbers, analysis.correlations, results.distances, record)
    return Published(results, analysis, headline)


def log_seed_primaries(run: RunLog, found: Sequence[SeedPrimary]) -> None:
    """The primary seed by seed: a table, the parent's metrics by step, each job's headline.

    The parent gets ``primary_by_seed/{rho,p}_{alone,without}`` at one step per job (a chart
    over seeds in the MLflow UI); each job's run gets the ``headline/primary_*`` of its seed
    alone (and so does a link to a reused job's run), so the runs of a study compare in the
    UI's comparison view.
    """
    run.table(seed_table(found), paths.PRIMARY_BY_SEED_CSV)
    for step, item in enumerate(found):
        values = {"rho_alone": item.alone.rho, "p_alone": item.alone.p_value}
        if item.without is not None:
            values |= {"rho_without": item.without.rho, "p_without": item.without.p_value}
        finite = {f"primary_by_seed/{k}": v for k, v in values.items() if math.isfinite(v)}
        run.metrics(finite, step=step)
        if item.run_id and math.isfinite(item.alone.rho):
            headline = {
                "headline/primary_rho": item.alone.rho,
                "headline/primary_p": item.alone.p_value,
                "headline/primary_significant": float(item.alone.significant),
            }
            for run_id in [item.run_id, *linked_runs(run.client, item.run_id)]:
                RunLog(run.client, run_id).metrics(headline)


def log_tests(run: RunLog, tests: PairwiseTests, table: str, form: str) -> None:
    """A pairwise test of record: its table (at ``table``), JSON form (``form``) and metrics."""
    run.table(tests.table, table)
    run.json(tests.to_dict(), form)
    run.metrics(pairs_metrics(tests))


def log_record(run: RunLog, tests: EmbeddingPairTests) -> None:
    """The test of record: ``analysis/pair_tests.csv|json``, its metrics and effect heatmap."""
    log_tests(run, tests, paths.PAIR_TESTS_CSV, paths.PAIR_TESTS_JSON)
    title = f"test of record: size-free effect ({tests.settings.words()}); outlined: differs"
    differs = tests.table[tests.table[DIFFERS].astype(bool)]
    marked = set(zip(differs[GROUP_A], differs[GROUP_B], strict=True))
    figure = plots.distance_heatmap(record_matrix(tests), title, marked=marked)
    run.figure(figure, paths.PAIR_TEST_FIGURE)


def log_perf_record(run: RunLog, tests: PerformancePairTests) -> None:
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
    assert analysis.correlations is not None
    found = correlation_frame(analysis.correlations)
    # Significance is marked by the p-values adjusted as `analysis.correlation.adjust` says.
    spearman_p, kendall_p = (p_name(s, settings.correlation.adjust) for s in STATISTICS)
    for statistic, marking in ((RHO, spearman_p), (TAU, kendall_p)):
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
    if test is None or not math.isfinite(test.rho):  # no rank correlation: no plot
        return
    pairs = analysis.pairwise
    regions = pairs[pairs["group_a"].isin(test.groups) & pairs["group_b"].isin(test.groups)]
    title = (
        f"primary hypothesis, regions only ({test.n_pairs} pairs): rho = {test.rho:.2f}, "
        f"{mantel_kind(test)} = {test.p_value:.2g} (level {test.significance:g})"
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


def write_power(run: RunLog, result: PowerResult) -> None:
    """``task=power``: the embedding test's plants and rates, and its power curves."""
    run.table(result.plants, paths.POWER_PLANTS_CSV)
    rates = result.rates()
    run.table(rates, paths.POWER_RATES_CSV)
    curves = rates.assign(distance=rates["n_a"].astype(str) + " + " + rates["n_b"].astype(str))
    run.figure(plots.power_curves(curves, "p <= alpha / m"), paths.POWER_FIGURE)


def write_perf_power(run: RunLog, result: PerfPower) -> None:
    """``task=power``: the performance test's planted-gap rates as a table."""
    run.table(result.rates, paths.PERF_POWER_RATES_CSV)


def write_variants(parent: RunLog, rows: Sequence[Mapping[str, str]]) -> None:
    """One row per variant of the sweep: its hash, its jobs and their overrides."""
    parent.table(pd.DataFrame(list(rows)), paths.VARIANTS_CSV)


def write_versions(parent: RunLog, versions: Mapping[str, str]) -> None:
    """The packages' versions, as one artifact of the sweep's parent."""
    parent.json(dict(versions), paths.VERSIONS_JSON)


def write_jobs(parent: RunLog, records: list[JobRecord]) -> None:
    """Every job record of the sweep (its ledger), as ``sweep/jobs.json``."""
    parent.json([r.to_dict() for r in records], paths.JOBS_JSON)


def copy_folder(target: RunLog, folder: Path) -> None:
    """A local folder of artifacts (a variant's, as it wrote them) logged into ``target``."""
    target.directory(folder)


def copy_report(run: RunLog, destination: Path, key: str = RUN_DIR_KEY) -> Path:
    """Copy every artifact of ``run`` but ``NOT_IN_REPORT`` (config, weights) into ``destination``.

    A reader opens ``multirun/<date>/<time>/report/report.md`` (or ``outputs/.../report/``)
    with any Markdown viewer, without MLflow; its figure links are relative, so they work there.
    The files of an earlier copy are replaced; a user's files there are never touched
    (:mod:`regbias.report.report_folder`; ``key`` is the setting named when it refuses).
    """

    def download(staging: Path) -> None:
        for artifact in run.client.list_artifacts(run.run_id):
            if artifact.path not in paths.NOT_IN_REPORT:
                run.client.download_artifacts(run.run_id, artifact.path, str(staging))

    return replace_report(destination, download, key)
