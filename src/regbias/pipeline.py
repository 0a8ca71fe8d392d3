"""One job of the study: data and draws, then the distance suite and the performance stage."""

from __future__ import annotations

import logging
from typing import Any

from omegaconf import DictConfig

from regbias.corpora import load_corpus, resolve_data_dir
from regbias.draws import DistanceDraws, DrawSizes, distance_draws
from regbias.study import StudyData, build_study, group_table
from regbias.tracking import RunLog

__all__ = ["run_pipeline", "prepare"]

log = logging.getLogger(__name__)


def prepare(cfg: DictConfig) -> tuple[StudyData, DistanceDraws]:
    """Read the corpus, build the job's groups and training sample, draw the distance texts."""
    corpus = load_corpus(cfg.dataset, resolve_data_dir(cfg.paths.data_dir))
    binary = corpus.task == "binary"
    study = build_study(
        corpus,
        _list(cfg.dataset.get("groups")),
        cfg.finetune.get("sample_size") if binary else None,
        int(cfg.seed),
        cfg.sampling.policy,
    )
    d = cfg.distance
    sizes = DrawSizes(
        repetitions=int(d.repetitions) if d.enabled else 0,
        short_texts=int(d.short.texts_per_draw) if d.short.enabled else None,
        long_passages=int(d.long.passages_per_draw) if d.long.enabled else None,
        texts_per_passage=int(d.long.texts_per_passage),
        lda_passages=int(d.lda.passages_per_group) if d.lda.enabled else None,
    )
    draws = distance_draws(
        study.groups, sizes, cfg.dataset.unit, int(cfg.seed), cfg.sampling.policy
    )
    return study, draws


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


def run_pipeline(cfg: DictConfig, run: RunLog) -> None:
    """The job: prepare and log the data, then run the enabled stages."""
    from lightning import seed_everything

    seed_everything(int(cfg.seed), workers=True, verbose=False)
    study, draws = prepare(cfg)
    log_study(run, study, draws)
