"""Stage I of a job: fine-tune per fold (or per seed), then score every model on every group."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from lightning.pytorch.loggers import MLFlowLogger
from omegaconf import DictConfig

from regbias.data.corpus import TextSet
from regbias.embeddings.cache import EmbeddingCache, embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.performance.evaluation import evaluate_groups, evaluation_draws
from regbias.data.study import StudyData
from regbias.tracking.runs import RunLog
from regbias.performance import EncoderParts, FinetuneSettings, run_folds, train_multilabel

__all__ = ["JobRunLogger", "finetune_settings", "run_performance_stage"]

log = logging.getLogger(__name__)


class JobRunLogger(MLFlowLogger):
    """Lightning's MLflow logger writing into the job's own run, which it never ends.

    (Lightning's logger marks its run FINISHED after every fit; the job's run ends once, when
    the job does.)
    """

    def finalize(self, status: str = "success") -> None:
        return None


def finetune_settings(finetune: Mapping[str, Any], trainer: Mapping[str, Any]) -> FinetuneSettings:
    """The ``finetune`` and ``trainer`` config groups as training settings.

    In ``head`` mode ``finetune.head_lr`` is the learning rate: a linear head on frozen vectors
    needs a far larger step than fine-tuning the whole encoder.
    """
    head = finetune["mode"] == "head"
    patience = finetune.get("patience")
    return FinetuneSettings(
        mode=str(finetune["mode"]),
        optimizer=str(finetune["optimizer"]),
        lr=float(finetune["head_lr"] if head else finetune["lr"]),
        batch_size=int(finetune["batch_size"]),
        max_epochs=int(finetune["max_epochs"]),
        val_fraction=float(finetune["val_fraction"]),
        weight_decay=float(finetune["weight_decay"]),
        warmup_fraction=float(finetune["warmup_fraction"]),
        dropout=float(finetune["dropout"]),
        early_stopping_metric=str(finetune["monitor"]),
        early_stopping_mode=str(finetune["monitor_mode"]),
        early_stopping_patience=None if patience is None else int(patience),
        accelerator=str(trainer["accelerator"]),
        precision=None if trainer.get("precision") is None else str(trainer["precision"]),
        deterministic=bool(trainer["deterministic"]),
        num_workers=int(trainer["num_workers"]),
        enable_progress_bar=bool(trainer["enable_progress_bar"]),
    )


def _max_length(finetune: Mapping[str, Any], encoder: Encoder) -> int:
    """Tokens per training text: ``finetune.max_length``, within what the model can take."""
    limit = int(getattr(encoder.model.config, "max_position_embeddings", finetune["max_length"]))
    if int(finetune["max_length"]) > limit:
        log.warning(
            "finetune.max_length=%s exceeds the encoder's %d positions: using %d",
            finetune["max_length"],
            limit,
            limit,
        )
    return min(int(finetune["max_length"]), limit)


def _model_sink(run: RunLog, seed: int) -> Callable[[int, torch.nn.Module], None]:
    """Log each fine-tuned model's weights as ``models/seed{s}_fold{j}.pt`` (log_models=true)."""

    def keep(fold: int, module: torch.nn.Module) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"seed{seed}_fold{fold}.pt"
            torch.save(module.state_dict(), path)
            run.file(path, "models")

    return keep


def _drawn_subsets(
    groups: dict[str, TextSet], size: int | None, repetitions: int, seed: int, policy: str
) -> tuple[dict[str, TextSet], dict[str, list[np.ndarray]]]:
    """Each group cut to the texts its evaluation draws use, and the draws re-indexed to it.

    Models then predict only on texts that are scored (a few thousand, not all 28k tweets).
    """
    subsets, draws = {}, {}
    for name, texts in groups.items():
        full = evaluation_draws(name, len(texts), size, repetitions, seed, policy)  # type: ignore[arg-type]
        used = np.unique(np.concatenate(full))
        subsets[name] = texts.subset(used)
        draws[name] = [np.searchsorted(used, d) for d in full]
    return subsets, draws


def run_performance_stage(
    cfg: DictConfig, study: StudyData, encoder: Encoder, cache: EmbeddingCache, run: RunLog
) -> pd.DataFrame:
    """Fine-tune and evaluate; returns the long per-model table (``performance/per_model.csv``)."""
    ft, seed, policy = cfg.finetune, int(cfg.seed), str(cfg.sampling.policy)
    settings = finetune_settings(ft, cfg.trainer)
    parts = replace(EncoderParts.from_encoder(encoder), max_length=_max_length(ft, encoder))
    features = (
        (lambda texts: embed_pooled(encoder, cache, texts)) if settings.mode == "head" else None
    )
    logger = JobRunLogger(tracking_uri=run.tracking_uri, run_id=run.run_id, log_model=False)
    sink = _model_sink(run, seed) if cfg.tracking.get("log_models") else None
    groups = {g: t for g, t in study.groups.items() if g != "baseline"}
    size = None if ft.evaluation.draw_size is None else int(ft.evaluation.draw_size)
    repetitions = int(ft.evaluation.repetitions)
    common = {"encoder": parts, "features": features, "logger": logger, "model_sink": sink}
    if study.corpus.task == "binary":
        subsets, draws = _drawn_subsets(groups, size, repetitions, seed, policy)
        models = run_folds(study.training, subsets, int(ft.k_folds), settings, seed=seed, **common)
    else:
        draws = {}
        models = [train_multilabel(study.training, groups, settings, seed=seed, **common)]
    for model in models:
        if model.best_score is not None:
            run.metrics(
                {f"fold{model.fold}/best/{settings.early_stopping_metric}": model.best_score}
            )
    return evaluate_groups(
        models,
        size,
        repetitions,
        seed,
        policy,  # type: ignore[arg-type]
        groups=list(study.groups),
        draws=draws,
    )
