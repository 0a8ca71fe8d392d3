"""Stage I of a job: fine-tune per fold (or per seed), then score every model on every group.

The stage sees no config object and no tracking store: it takes settings and plain inputs,
hands what it wants recorded (training curves, best scores, weights) to a
:class:`PerformanceSink`, and returns the per-model table.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Protocol

import numpy as np
import torch
from lightning.pytorch.loggers import Logger

from regbias.data.corpus import TextSet
from regbias.data.draws import evaluation_draws
from regbias.data.groups import BASELINE
from regbias.data.rewrite_sets import RewriteSet
from regbias.data.sampling import SizePolicy
from regbias.data.study import StudyData
from regbias.embeddings.cache import EmbeddingCache, embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.performance.evaluation import evaluate_groups
from regbias.performance.folds import FoldModel, run_folds
from regbias.performance.settings import EvaluationSettings, FinetuneSettings, TrainerSettings
from regbias.performance.table import PerformanceTable
from regbias.performance.text_scores import (
    per_model_rows,
    rewrite_subsets,
    rewrite_table,
    scored_subsets,
    text_table,
)
from regbias.performance.trainer import EncoderParts

log = logging.getLogger(__name__)


class PerformanceSink(Protocol):
    """Where stage I's records go (the app adapts a tracking run to it).

    Attributes:
        logger: a Lightning logger for the training curves, or ``None``.
    """

    @property
    def logger(self) -> Logger | None:
        """The Lightning logger of the training curves (``None``: no curves)."""
        ...

    def metrics(self, values: Mapping[str, float]) -> None:
        """Record scalar metrics (e.g. each fold's best monitored score)."""

    def model(self, seed: int, fold: int, module: torch.nn.Module) -> None:
        """Keep one fine-tuned model (its weights) of job ``seed``, fold ``fold``."""


def _max_length(settings: FinetuneSettings, encoder: Encoder) -> int:
    """Tokens per training text: ``finetune.max_length``, within what the model can take."""
    limit = int(getattr(encoder.model.config, "max_position_embeddings", settings.max_length))
    if settings.max_length > limit:
        message = "finetune.max_length=%s exceeds the encoder's %d positions: using %d"
        log.warning(message, settings.max_length, limit, limit)
    return min(settings.max_length, limit)


def _drawn_subsets(
    groups: dict[str, TextSet], size: int | None, repetitions: int, seed: int, policy: SizePolicy
) -> tuple[dict[str, TextSet], dict[str, list[np.ndarray]]]:
    """Each group cut to the texts its evaluation draws use, and the draws re-indexed to it.

    Models then predict only on texts that are scored (a few thousand, not all 28k tweets).
    """
    subsets, draws = {}, {}
    for name, texts in groups.items():
        full = evaluation_draws(name, len(texts), size, repetitions, seed, policy)
        used = np.unique(np.concatenate(full))
        subsets[name] = texts.subset(used)
        draws[name] = [np.searchsorted(used, d) for d in full]
    return subsets, draws


def run_performance_stage(
    finetune: FinetuneSettings,
    trainer: TrainerSettings,
    study: StudyData,
    encoder: Encoder,
    cache: EmbeddingCache,
    *,
    seed: int,
    policy: SizePolicy,
    log_models: bool = False,
    sink: PerformanceSink | None = None,
    scored: Mapping[str, Sequence[str]] | None = None,
    rewrites: Sequence[RewriteSet] = (),
) -> PerformanceTable:
    """Fine-tune and evaluate every model of one job.

    ``seed`` seeds folds, validation splits, training and (unless ``finetune.evaluation.seed`` is
    set) the evaluation draws; ``sink`` (None: nothing recorded) gets training curves, best scores
    and, with ``log_models``, every model; ``scored``: the ``texts`` design's texts per group (the
    test of record's; None: every distinct text); ``rewrites``: changed texts in another variety
    and their controls, scored too in the ``texts`` design of a binary task.

    Returns:
        The per-model table (``performance/per_model.csv``) and, in the ``texts`` design,
        what every model said of every text (``performance/texts.csv``) and of each rewrite
        (``performance/rewrites.csv``).
    """
    task = study.corpus.task
    parts = replace(EncoderParts.from_encoder(encoder), max_length=_max_length(finetune, encoder))
    features = partial(embed_pooled, encoder, cache) if finetune.mode == "head" else None
    groups = {g: t for g, t in study.groups.items() if g != BASELINE}

    def train(subsets: dict[str, TextSet]) -> list[FoldModel]:
        models = run_folds(
            study.training,
            subsets,
            finetune,
            trainer,
            task=task,
            seed=seed,
            encoder=parts,
            features=features,
            logger=None if sink is None else sink.logger,
            model_sink=partial(sink.model, seed) if log_models and sink is not None else None,
        )
        if sink is not None:
            sink.metrics(_best_scores(models, finetune.monitor))
        return models

    if finetune.evaluation.design == "texts":
        subsets = scored_subsets(groups, scored)
        rewrites = rewrites if task == "binary" else ()
        models = train({**subsets, **rewrite_subsets(rewrites, subsets)})
        texts = text_table(models, subsets, study.training, task, study.corpus.label_names)
        frame = per_model_rows(models, list(study.groups), study.training, subsets)
        scored_rewrites = rewrite_table(models, rewrites, subsets, study.training)
        return PerformanceTable(frame, texts, scored_rewrites if rewrites else None)
    # Multilabel groups are scored whole (see evaluate_groups).
    evaluation = finetune.evaluation
    size = evaluation_size(evaluation, groups, policy) if task == "binary" else None
    repetitions = evaluation.repetitions
    draw_seed = seed if evaluation.seed is None else evaluation.seed
    subsets, draws = _drawn_subsets(groups, size, repetitions, draw_seed, policy)
    models = train(subsets)
    frame = evaluate_groups(
        models, size, repetitions, draw_seed, policy, groups=list(study.groups), draws=draws
    )
    return PerformanceTable(frame)


def evaluation_size(
    evaluation: EvaluationSettings, groups: dict[str, TextSet], policy: SizePolicy
) -> int | None:
    """Texts per evaluation draw: the configured size, or the smallest group's if smaller.

    The smallest group's size applies when draws are matched under policy ``all``, so every
    group gets equal draws.
    """
    size = evaluation.draw_size
    if size is None or not evaluation.matched or policy != "all" or not groups:
        return size
    smallest = min(groups, key=lambda g: len(groups[g]))
    if len(groups[smallest]) >= size:
        return size
    log.warning(
        "evaluation draws of %d texts for every group: %r holds only %d (asked: %d)",
        len(groups[smallest]),
        smallest,
        len(groups[smallest]),
        size,
    )
    return len(groups[smallest])


def _best_scores(models: list[FoldModel], monitor: str) -> dict[str, float]:
    return {
        f"fold{model.fold}/best/{monitor}": model.best_score
        for model in models
        if model.best_score is not None
    }
