"""The end of a sweep: pool every finished job's measurements into the parent run."""

from __future__ import annotations

import json
import logging
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from regbias.analysis.correlation.by_seed import Job, SeedPrimary, primary_by_seed
from regbias.analysis.pairs.pooled_scores import REWRITE_KEYS, pool_text_tables
from regbias.analysis.study import (
    AnalysisSettings,
    StudyResults,
    analyse,
    performance_tests,
    primary_on,
)
from regbias.data.data_dir import resolve_data_dir
from regbias.data.window_fit import WindowFit
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, RegbiasError
from regbias.interrupt import check_stop
from regbias.report.publish import (
    Published,
    log_analysis,
    log_distances,
    write_performance,
    write_study,
    write_variants,
)
from regbias.study.record import ParentTests
from regbias.study.timing import timed
from regbias.study.variant_runs import Analysed, run_variant
from regbias.tables import read_table
from regbias.tracking import artifacts as paths
from regbias.tracking.ledger import JobRecord
from regbias.tracking.run_log import RunLog
from regbias.tracking.ui import log_dataset

log = logging.getLogger(__name__)
#: A variant's tests of record and their power, from its jobs' records and pooled results.
TestsOf = Callable[[list[JobRecord], StudyResults], ParentTests]


def load_job_results(run: RunLog, workdir: Path) -> StudyResults | None:
    """A finished job's measurements, read back from its run's artifacts."""
    study = run.download(paths.STUDY_JSON, workdir)
    if study is None:
        log.warning("run %s has no %s: left out of the aggregation", run.run_id, paths.STUDY_JSON)
        return None
    meta = json.loads(study.read_text())
    run.download(paths.DISTANCES_FOLDER, workdir)
    distances = paths.read_distances(workdir, strict=True)
    per_model_path = run.download(paths.PER_MODEL_CSV, workdir)
    per_model = read_table(per_model_path) if per_model_path is not None else None
    texts_path = run.download(paths.TEXTS_CSV, workdir)
    texts = paths.read_text_table(texts_path) if texts_path is not None else None
    results = StudyResults(meta["groups"], distances, per_model, meta["group_sizes"], meta["meta"])
    results.texts = texts
    rewrites_path = run.download(paths.REWRITES_CSV, workdir)
    if rewrites_path is not None:
        results.rewrites = paths.read_rewrite_table(rewrites_path)
    draws_path = run.download(paths.DRAWS_CSV, workdir)
    if draws_path is not None:
        results.window_fits = WindowFit.of(read_table(draws_path))
    return results


def pool_results(jobs: list[StudyResults]) -> StudyResults:
    """All jobs together: matrices pooled over repetitions, per-model tables concatenated."""
    first = jobs[0]
    names = [n for n in first.distances if all(n in j.distances for j in jobs)]
    try:
        distances = {n: DistanceMatrix.pooled([j.distances[n] for j in jobs]) for n in names}
    except ValueError as error:
        raise ConfigError(
            f"{error}: the jobs of one variant must share their distance settings (set "
            "distance.sinkhorn.epsilon, or keep distance.calibration_seed the same for all)"
        ) from None
    tables = [j.per_model for j in jobs if j.per_model is not None]
    per_model = pd.concat(tables, ignore_index=True) if tables else None
    meta = {**first.meta, "jobs": len(jobs)}
    meta.pop("seed", None)
    meta["distance_repetitions"] = sum(int(j.meta.get("distance_repetitions", 0)) for j in jobs)
    pooled = StudyResults(first.groups, distances, per_model, first.group_sizes, meta)
    pooled.window_fits = WindowFit.pooled([j.window_fits for j in jobs])
    texts = [j.texts for j in jobs if j.texts is not None]
    if texts and len(texts) == len(jobs):  # a job without per-text scores: no test
        pooled.texts = pool_text_tables(texts)
    rewrites = [j.rewrites for j in jobs if j.rewrites is not None]
    if rewrites and len(rewrites) == len(jobs):
        pooled.rewrites = pool_text_tables(rewrites, keys=REWRITE_KEYS)
    return pooled


def unique_runs(records: list[JobRecord]) -> list[JobRecord]:
    """The records with one per MLflow run: a job that reused another's run is not pooled twice."""
    first: dict[str, JobRecord] = {}
    for record in records:
        kept = first.setdefault(record.run_id, record)
        if kept is not record:
            log.warning(
                "jobs %s and %s are one run (%s, the same config): its results count once",
                kept.job_num,
                record.job_num,
                record.run_id,
            )
    return list(first.values())


@dataclass(frozen=True)
class VariantResult:
    """One variant's pooled analysis, as the sweep's end wrote it.

    Attributes:
        variant: its jobs' ``regbias.variant``.
        folder: its folder in the sweep's report (``variant-<hash>``; "" in a sweep of one).
        records: its finished jobs' records.
        written: its pooled analysis as written, with its headline.
    """

    variant: str
    folder: str
    records: list[JobRecord]
    written: Published


@dataclass
class SweepResult:
    """A sweep's pooled analyses, one per variant, and the seconds their steps took.

    ``times``: summed over the variants, ``load`` (the jobs' artifacts), ``analysis``
    (pooling, correlations, permutations and bootstraps) and ``report`` (tables, figures and
    the report written to the parent).
    """

    variants: list[VariantResult] = field(default_factory=list)
    times: dict[str, float] = field(default_factory=dict)


def aggregate_sweep(
    settings: AnalysisSettings,
    parent: RunLog,
    records: list[JobRecord],
    *,
    tests_of: TestsOf | None = None,
) -> SweepResult:
    """Analyse the finished jobs of ``records`` together and log it all to ``parent``.

    ``tests_of`` asks each variant's tests of record and their power (from its jobs' records
    and pooled results; None: the performance test only). Jobs are pooled only within their
    variant (the same config but the seed); several variants get one analysis each, in the
    variant's own run (:mod:`regbias.study.variant_runs`).
    """
    done = unique_runs([r for r in records if r.pooled])
    if not done:
        log.warning("no finished job to aggregate")
        return SweepResult()
    variants: dict[str, list[JobRecord]] = {}
    for record in done:
        variants.setdefault(record.variant, []).append(record)
    if len(variants) == 1:
        written, times = _aggregate_variant(parent, done, settings, tests_of)
        found = [VariantResult(done[0].variant, "", done, written)] if written else []
        return SweepResult(found, times)
    result, rows, spent = SweepResult(), [], Counter[str]()
    for variant, members in variants.items():

        def analyse(own: RunLog, members: list[JobRecord] = members) -> Analysed:
            return _aggregate_variant(own, members, settings, tests_of)

        written, times = run_variant(parent, variant, members, records, analyse)
        spent.update(times)
        if written is not None:
            result.variants.append(VariantResult(variant, f"variant-{variant}", members, written))
        jobs = ",".join(str(m.job_num) for m in members)
        overrides = " | ".join(m.overrides for m in members)
        rows.append({"variant": variant, "jobs": jobs, "overrides": overrides})
    write_variants(parent, rows)
    result.times = dict(spent)
    return result


def _aggregate_variant(
    parent: RunLog,
    records: list[JobRecord],
    settings: AnalysisSettings,
    tests_of: TestsOf | None = None,
) -> Analysed:
    times: dict[str, float] = {}
    with timed(times, "load"), tempfile.TemporaryDirectory() as tmp:
        jobs, loaded = [], []
        for i, record in enumerate(records):
            check_stop()  # safe points of the sweep's end: Ctrl-C and SIGTERM stop here
            results = load_job_results(RunLog(parent.client, record.run_id), Path(tmp) / str(i))
            if results is not None:
                jobs.append(results)
                loaded.append(record)
    if not jobs:
        return None, times
    pooled = pool_results(jobs)
    pooled.reused = [
        (str(r.job_num), r.run_id) for r in records if r.status == "REUSED" and r.run_id
    ]
    if tests_of is not None:
        tests = tests_of(records, pooled)
    else:  # no corpus to embed: the performance test only
        tests = ParentTests(None, None, None, *performance_tests(pooled, settings))
    power = tests.into(pooled)
    check_stop()
    with timed(times, "analysis"):
        analysis = analyse(pooled, settings)
        tested = analysis.primary is not None and not analysis.primary.note
        if tested:  # each seed's primary beside the study's
            analysis.by_seed = seed_primaries(jobs, [r.run_id for r in loaded], settings)
    check_stop()
    with timed(times, "report"):
        if pooled.per_model is not None:
            write_performance(parent, pooled.per_model, None)
        # The analysis first: its headline metrics lead the parent's metrics list.
        written = log_analysis(parent, pooled, analysis, settings, power=power)
        check_stop()
        log_distances(parent, pooled.distances)
        check_stop()
        write_study(parent, pooled, runs=[r.run_id for r in records])
    return written, times


def seed_primaries(
    jobs: list[StudyResults], run_ids: list[str], settings: AnalysisSettings
) -> tuple[SeedPrimary, ...]:
    """The primary for each job alone and for the study without it (none: fewer than 2 jobs)."""
    if settings.correlation.primary is None or len(jobs) < 2:
        return ()
    members = [
        Job(str(results.meta.get("seed", i)), results.distances, results.per_model, run_id)
        for i, (results, run_id) in enumerate(zip(jobs, run_ids, strict=True))
    ]
    return primary_by_seed(members, lambda table: primary_on(table, settings))


def log_inputs(run: RunLog, found: SweepResult | None, data_dir: str | None) -> None:
    """The groups each pooled analysis read, as the run's input datasets."""
    try:
        source = str(resolve_data_dir(data_dir).resolve())
    except RegbiasError:
        source = str(data_dir)
    for variant in sorted(found.variants if found else [], key=lambda v: v.folder):
        results = variant.written.results
        sizes = results.group_sizes
        table = pd.DataFrame({"group": list(sizes), "n_texts": list(sizes.values())})
        name = str(results.meta.get("dataset", "dataset"))
        log_dataset(run, table, name, source, "pooled groups")
