"""One job of the study: data and draws, then the distance suite and the performance stage."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from regbias.analysis.study import StudyResults, analyse
from regbias.data.draws import DistanceDraws, distance_draws
from regbias.data.groups import BASELINE, TRAIN_POOL, TRAIN_SAMPLE
from regbias.data.rewrite_sets import RewriteSet
from regbias.data.sampling import TokenBudget
from regbias.data.study import StudyData, group_table, require_training_rows
from regbias.data.window_fit import WindowFit
from regbias.distances.plugin import TOKEN_KINDS
from regbias.distances.suite import (
    DistanceSettings,
    DistanceSuiteResult,
    calibrate_distances,
    run_distance_suite,
)
from regbias.embeddings.cache import EmbeddingCache
from regbias.embeddings.encoder import Encoder
from regbias.performance.stage import run_performance_stage
from regbias.performance.table import PerformanceTable
from regbias.report.publish import (
    Published,
    log_analysis,
    log_distances,
    write_distance_tables,
    write_draws,
    write_groups,
    write_lda,
    write_performance,
    write_study,
)
from regbias.study.checks import preflight_job, preflight_study
from regbias.study.counterfactual import study_rewrites
from regbias.study.parts import record_study, scored_texts, study_cache, study_encoder
from regbias.study.record import record_and_power
from regbias.study.settings import StudySettings
from regbias.study.timing import timed
from regbias.tracking import artifacts as paths
from regbias.tracking.lightning import RunPerformanceSink
from regbias.tracking.run_log import RunLog
from regbias.tracking.ui import log_dataset, log_derived

log = logging.getLogger(__name__)


def prepare(
    settings: StudySettings, budget: TokenBudget | None = None
) -> tuple[StudyData, DistanceDraws]:
    """Check the settings, read the corpus, build the groups and sample, draw the texts.

    ``budget``: the encoder's window (:func:`token_budget`); None: fixed-size passages.
    """
    study = read_study(settings)
    return study, draw_texts(settings, study, budget)


def read_study(settings: StudySettings) -> StudyData:
    """Check the settings, read the corpus, build the groups and the training sample."""
    preflight_job(settings)
    study = record_study(settings, settings.seed)
    if settings.finetune.enabled:
        require_training_rows(study.corpus, len(study.training))
    preflight_study(settings.distance, len(study.groups), study.corpus.emptied_note())
    return study


def draw_texts(
    settings: StudySettings, study: StudyData, budget: TokenBudget | None
) -> DistanceDraws:
    """The distance suite's draws of the job (passages fit ``budget`` when one is given)."""
    sizes = settings.distance.draw_sizes()
    unit, policy = settings.dataset.unit, settings.sampling.policy
    return distance_draws(study.groups, sizes, unit, settings.seed, policy, budget)


def passage_budget(settings: StudySettings, encoder: Encoder) -> TokenBudget | None:
    """The window passages fit (``distance.long.fit_window``), or None: fixed-size passages."""
    return token_budget(encoder) if settings.distance.long.fit_window else None


def token_budget(encoder: Encoder) -> TokenBudget:
    """The encoder's window and its tokenizer's count (special tokens in, not truncated)."""
    tokenizer = encoder.tokenizer

    @lru_cache(maxsize=1 << 16)
    def count(text: str) -> int:
        encoded = tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)
        return len(encoded["input_ids"])

    return TokenBudget(encoder.spec.max_length, count)


def sweep_distances(
    settings: StudySettings,
    study: StudyData,
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache,
) -> DistanceSettings:
    """The distance settings shared by every job of a sweep, calibrated where a distance asks.

    One calibration draw of the study's groups (no baseline) seeded by
    ``distance.calibration_seed`` (null: each job's own draws) fixes them for every job.
    """
    distance = settings.distance
    if distance.calibration_seed is None or not any(k in draws.texts for k in TOKEN_KINDS):
        return distance
    if not any(m.needs_calibration() for m in distance.enabled_methods()):
        return distance
    groups = {g: t for g, t in study.groups.items() if g != BASELINE}
    sizes = replace(
        distance.draw_sizes(), repetitions=1, floors=False, lda_passages=None, sentences=False
    )
    calibration = distance_draws(
        groups,
        sizes,
        settings.dataset.unit,
        distance.calibration_seed,
        settings.sampling.policy,
        passage_budget(settings, encoder),
    )
    return calibrate_distances(calibration, encoder, cache, distance)


def log_study(run: RunLog, study: StudyData, draws: DistanceDraws, source: str) -> None:
    """Log group sizes, the training sample and every draw's size, as metrics and tables.

    The group table is also logged as the run's input dataset (read from ``source``).
    """
    table = group_table(
        study.corpus, {TRAIN_POOL: study.corpus.train, TRAIN_SAMPLE: study.training}
    )
    emptied = {f"empty_after_cleaning/{g}": n for g, n in study.corpus.emptied.items()}
    write_groups(run, table, {**study.corpus.dropped, **emptied})
    log_dataset(run, table, study.corpus.name, source, "groups")
    _warn_shared(study.corpus.dropped)
    if study.corpus.emptied:
        log.warning("%s", study.corpus.emptied_note())
    if study.corpus.duplicates:
        log.warning("%s", study.corpus.duplicates_note())
    metrics: dict[str, float] = {f"data/size/{g}": len(t) for g, t in study.groups.items()}
    metrics[f"data/size/{TRAIN_SAMPLE}"] = len(study.training)
    metrics.update({f"data/dropped/{k}": v for k, v in study.corpus.dropped.items()})
    if draws.pool_size:
        metrics["draws/pool_size"] = draws.pool_size
    if draws.records:
        frame = draws.table()
        write_draws(run, frame)
        sizes = frame.groupby(["kind", "group"])["size"].min()
        metrics.update({f"draws/{k}/{g}/size": int(v) for (k, g), v in sizes.items()})
        whole = frame[frame["whole_group"]]
        if len(whole):
            run.tags({"sampling.whole_groups": ",".join(sorted(set(whole["group"])))})
            log.warning("groups taken whole (sampling.policy=all): %s", sorted(set(whole["group"])))
        metrics.update(_texts_in_full(draws))
    run.metrics(metrics)


def _texts_in_full(draws: DistanceDraws) -> dict[str, float]:
    """``draws/<kind>/texts_in_full`` and its share, and one log line saying them."""
    metrics: dict[str, float] = {}
    parts = []
    for row in draws.texts_in_full().itertuples():
        parts.append(f"{row.kind} {row.texts_in_full:,} of {row.texts:,} ({row.share:.1%})")
        metrics[f"draws/{row.kind}/texts_in_full"] = int(row.texts_in_full)
        metrics[f"draws/{row.kind}/texts_in_full_share"] = float(row.share)
    if parts:
        log.info("texts embedded in full (within the encoder's window): %s", "; ".join(parts))
    return metrics


def _warn_shared(dropped: dict[str, int]) -> None:
    """Texts a CSV file keeps in two places (``shared/...`` in ``data/dropped.json``)."""
    shared = {k: v for k, v in dropped.items() if k.startswith("shared/")}
    if shared:
        counts = ", ".join(f"{k.removeprefix('shared/')} {v}" for k, v in shared.items())
        log.warning(
            "texts kept in two places (%s; counted in %s): remove the copies "
            "from the data if they are not meant to be shared",
            counts,
            paths.DROPPED_JSON,
        )


def data_source(settings: StudySettings) -> str:
    """Where the job's corpus is read from: its data directory, or (none needed) its files."""
    folder = settings.dataset.data_dir(settings.paths.data_dir)
    if folder is None:
        return "; ".join(str(path.resolve()) for path in settings.dataset.files(None))
    return str(folder.resolve())


def log_distance_suite(run: RunLog, suite: DistanceSuiteResult, *, figures: bool = True) -> None:
    """Log the matrices, per-pair metrics, Sinkhorn diagnostics, LDA projection and figures."""
    log_distances(run, suite.matrices, figures=figures)
    if suite.lda_projection is not None:
        write_lda(run, suite.lda_projection)
    metrics: dict[str, float] = {}
    if suite.epsilon is not None:
        metrics["sinkhorn/epsilon"] = suite.epsilon
    write_distance_tables(run, suite.sensitivity, suite.diagnostics)
    for name, table in suite.diagnostics.items():
        flags = table[["xy_converged", "xx_converged", "yy_converged"]].to_numpy()
        failed = int((~flags.astype(bool)).sum())
        metrics[f"sinkhorn/{name}/not_converged"] = failed
        if failed:
            log.warning("%s: %d Sinkhorn solves did not converge (see diagnostics)", name, failed)
    run.metrics(metrics)


def run_pipeline(settings: StudySettings, run: RunLog, *, pooled: bool = False) -> Published | None:
    """The job: prepare and log the data, run the enabled stages, analyse and log it all.

    Each step's wall time is logged as ``time/<step>_s``; ``pooled`` (a sweep's job) skips the
    job's own figures, analysis and report. Returns the report it wrote (None when pooled).
    """
    from lightning import seed_everything

    seed_everything(settings.seed, workers=True, verbose=False)
    timings: dict[str, float] = {}
    with timed(timings, "data"):
        study = read_study(settings)
        rewrites = study_rewrites(settings, study).sets  # before any heavy work: it may refuse
    with timed(timings, "encoder"):
        encoder = study_encoder(settings)
    with timed(timings, "data"):  # passages fit the encoder's window: drawn once it is known
        draws = draw_texts(settings, study, passage_budget(settings, encoder))
        log_study(run, study, draws, data_source(settings))
    cache = study_cache(settings)
    run.tags(
        {
            "encoder.identity": encoder.spec.identity,
            "encoder.revision": encoder.spec.recorded_revision,
            "device": str(encoder.device),
        }
    )
    results = StudyResults(
        list(study.groups),
        group_sizes={g: len(t) for g, t in study.groups.items()},
        meta=_meta(settings, encoder, study.corpus.pool),
        window_fits=WindowFit.of(draws.table()) if draws.records else [],
    )
    if draws.texts:
        with timed(timings, "distance_suite"):
            distance = sweep_distances(settings, study, draws, encoder, cache)
            suite = run_distance_suite(draws, encoder, cache, distance, seed=settings.seed)
        with timed(timings, "distance_logging"):
            log_distance_suite(run, suite, figures=not pooled)
            log_derived(run, {"distance.sinkhorn.epsilon": suite.epsilon})
        results.distances = suite.matrices
    if settings.finetune.enabled:
        with timed(timings, "performance"):
            performance = _performance(settings, study, encoder, cache, run, rewrites)
            results.per_model, results.texts = performance.frame, performance.texts
            results.rewrites = performance.rewrites
            write_performance(run, results.per_model, results.texts, results.rewrites)
    published = None
    if not pooled:
        tests = record_and_power(settings, timings, results, study=study, encoder=encoder)
        power = tests.into(results)
        with timed(timings, "analysis"):  # minutes with many groups: say when it is done
            log.info("analysing %d groups (correlations, robustness)", len(results.groups))
            analysis = analyse(results, settings.analysis)
            published = log_analysis(run, results, analysis, settings.analysis, power=power)
    run.metrics({"cache/hits": cache.hits, "cache/misses": cache.misses})
    run.metrics({f"time/{stage}_s": seconds for stage, seconds in timings.items()})
    write_study(run, results)
    return published


def _performance(
    settings: StudySettings,
    study: StudyData,
    encoder: Encoder,
    cache: EmbeddingCache,
    run: RunLog,
    rewrites: Sequence[RewriteSet],
) -> PerformanceTable:
    return run_performance_stage(
        settings.finetune,
        settings.trainer,
        study,
        encoder,
        cache,
        seed=settings.seed,
        policy=settings.sampling.policy,
        log_models=settings.tracking.log_models,
        sink=RunPerformanceSink(run),
        scored=scored_texts(settings, study),
        rewrites=rewrites,
    )


def _meta(settings: StudySettings, encoder: Encoder, pool: str = "") -> dict[str, Any]:
    """What the report states of a job's settings (``pool``: how its training pool was drawn)."""
    return {
        "dataset": settings.dataset.name,
        "encoder": encoder.spec.name,
        "encoder_revision": encoder.spec.recorded_revision,
        "encoder_identity": encoder.spec.identity,
        "encoder_precision": encoder.spec.precision,
        "encoder_control": getattr(settings.encoder, "random_weights_seed", None),
        "encoder_max_length": encoder.spec.max_length,
        "seed": settings.seed,
        "finetune_mode": settings.finetune.mode,
        "distance_repetitions": settings.distance.repetitions,
        "matched_pool": settings.distance.matched_pool,
        "floors": settings.distance.floors,
        **{k: v for m in settings.distance.methods.values() for k, v in m.meta().items()},
        "evaluation_seed": settings.finetune.evaluation.seed,
        "evaluation_design": settings.finetune.evaluation.design,
    } | ({"training_pool": pool} if pool else {})
