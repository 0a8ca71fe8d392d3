"""One job of the study: data and draws, then the distance suite and the performance stage."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from regbias.analysis.results import AnalysisSettings, StudyResults, analyse
from regbias.app.preflight import draw_sizes, preflight_job, preflight_study, validate_seed
from regbias.data.draws import DistanceDraws, distance_draws
from regbias.data.loading import dataset_data_dir, load_corpus
from regbias.data.study import StudyData, build_study, group_table, require_training
from regbias.distances.suite import (
    DistanceSuiteResult,
    lda_settings,
    run_distance_suite,
    sinkhorn_settings,
)
from regbias.embeddings.cache import EmbeddingCache
from regbias.embeddings.encoder import Encoder, EncoderSpec, load_encoder
from regbias.performance.stage import finetune_settings, run_performance_stage
from regbias.report import figures as plots
from regbias.report.publish import log_analysis, log_distances
from regbias.tracking.runs import RunLog

__all__ = ["run_pipeline", "prepare"]

log = logging.getLogger(__name__)


def prepare(cfg: DictConfig) -> tuple[StudyData, DistanceDraws]:
    """Check the settings, read the corpus, build the groups and sample, draw the texts."""
    preflight_job(cfg)
    validate_settings(cfg)
    corpus = load_corpus(cfg.dataset, dataset_data_dir(cfg.dataset, cfg.paths.data_dir))
    binary = corpus.task == "binary"
    study = build_study(
        corpus,
        _list(cfg.dataset.get("groups")),
        cfg.finetune.get("sample_size") if binary else None,
        int(cfg.seed),
        cfg.sampling.policy,
    )
    if cfg.finetune.enabled:
        require_training(study)
    preflight_study(cfg.distance, len(study.groups))
    draws = distance_draws(
        study.groups, draw_sizes(cfg.distance), cfg.dataset.unit, int(cfg.seed), cfg.sampling.policy
    )
    return study, draws


def validate_settings(cfg: DictConfig) -> None:
    """Build every stage's settings once, so a bad value fails before minutes of embedding."""
    if cfg.distance.enabled:
        sinkhorn_settings(cfg.distance)
        lda_settings(cfg.distance)
    if cfg.finetune.enabled:
        finetune_settings(cfg.finetune, cfg.trainer)


def _list(value: Any) -> list[str] | None:
    return None if value is None else [str(v) for v in value]


def log_study(run: RunLog, study: StudyData, draws: DistanceDraws) -> None:
    """Group sizes, the training sample and every draw's size, as metrics and tables."""
    table = group_table(
        study.corpus, {"train_pool": study.corpus.train, "train_sample": study.training}
    )
    run.table(table, "data/groups.csv")
    run.json(study.corpus.dropped, "data/dropped.json")
    metrics = {f"data/size/{g}": len(t) for g, t in study.groups.items()}
    metrics["data/size/train_sample"] = len(study.training)
    metrics.update({f"data/dropped/{k}": v for k, v in study.corpus.dropped.items()})
    if draws.records:
        frame = draws.table()
        run.table(frame, "data/draws.csv")
        sizes = frame.groupby(["kind", "group"])["size"].min()
        metrics.update({f"draws/{k}/{g}/size": int(v) for (k, g), v in sizes.items()})
        whole = frame[frame["whole_group"]]
        if len(whole):
            run.tags({"sampling.whole_groups": ",".join(sorted(set(whole["group"])))})
            log.warning("groups taken whole (sampling.policy=all): %s", sorted(set(whole["group"])))
    run.metrics(metrics)


def _encoder(cfg: DictConfig) -> Encoder:
    spec = EncoderSpec.from_mapping(cfg.encoder)
    device = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda"}.get(str(cfg.trainer.accelerator), "auto")
    return load_encoder(spec, device=device)


def log_distance_suite(run: RunLog, suite: DistanceSuiteResult) -> None:
    """Matrices, heatmaps, per-pair metrics, and the Sinkhorn diagnostics per repetition."""
    log_distances(run, suite.matrices)
    if suite.lda_projection is not None:
        figure = plots.lda_scatter(suite.lda_projection, "LDA projection (repetition 0)")
        run.figure(figure, "figures/lda_projection.png")
    metrics: dict[str, float] = {}
    if suite.epsilon is not None:
        metrics["sinkhorn/epsilon"] = suite.epsilon
    for name, table in suite.diagnostics.items():
        run.table(table, f"distances/{name}_diagnostics.csv")
        flags = table[["xy_converged", "xx_converged", "yy_converged"]].to_numpy()
        failed = int((~flags.astype(bool)).sum())
        metrics[f"sinkhorn/{name}/not_converged"] = failed
        if failed:
            log.warning("%s: %d Sinkhorn solves did not converge (see diagnostics)", name, failed)
    run.metrics(metrics)


def run_pipeline(cfg: DictConfig, run: RunLog) -> StudyResults:
    """The job: prepare and log the data, run the enabled stages, analyse and log it all."""
    from lightning import seed_everything

    seed_everything(validate_seed(cfg.seed), workers=True, verbose=False)
    study, draws = prepare(cfg)
    log_study(run, study, draws)
    encoder = _encoder(cfg)
    cache = EmbeddingCache(Path(cfg.paths.cache_dir))
    run.tags(
        {
            "encoder.identity": encoder.spec.identity,
            "encoder.revision": str(encoder.spec.revision),
            "device": str(encoder.device),
        }
    )
    results = StudyResults(
        list(study.groups),
        group_sizes={g: len(t) for g, t in study.groups.items()},
        meta=_meta(cfg, encoder),
    )
    timings: dict[str, float] = {}
    if draws.texts:
        with _timed(timings, "distance_suite"):
            suite = run_distance_suite(draws, encoder, cache, cfg.distance)
        log_distance_suite(run, suite)
        results.distances = suite.matrices
    if cfg.finetune.enabled:
        with _timed(timings, "performance"):
            results.per_model = run_performance_stage(cfg, study, encoder, cache, run)
        run.table(results.per_model, "performance/per_model.csv")
    run.metrics({"cache/hits": cache.hits, "cache/misses": cache.misses})
    run.metrics({f"time/{stage}_s": seconds for stage, seconds in timings.items()})
    settings = AnalysisSettings.from_mapping(cfg.analysis)
    log_analysis(run, results, analyse(results, settings), settings)
    run.json(
        {"groups": results.groups, "group_sizes": results.group_sizes, "meta": results.meta},
        "results/study.json",
    )
    return results


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Wall seconds of a stage, logged as ``time/<stage>_s`` (embedding included)."""
    start = time.perf_counter()
    yield
    timings[stage] = time.perf_counter() - start
    log.info("%s took %.1f s", stage, timings[stage])


def _meta(cfg: DictConfig, encoder: Encoder) -> dict[str, Any]:
    return {
        "dataset": str(cfg.dataset.name),
        "encoder": encoder.spec.name,
        "encoder_revision": str(encoder.spec.revision),
        "encoder_identity": encoder.spec.identity,
        "seed": int(cfg.seed),
        "finetune_mode": str(cfg.finetune.mode),
        "distance_repetitions": int(cfg.distance.repetitions),
    }
