"""Stage I's fold plans: which models a task trains, and training and scoring them all.

The fold plan says which models a task trains: k-fold cross-validation for a binary corpus
(each held-out fold is that model's ``baseline``), one model on the whole training split for a
multilabel corpus (its groups are held out already).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from lightning.pytorch.loggers import Logger

from regbias.data.corpus import TaskKind, TextSet
from regbias.data.groups import BASELINE
from regbias.errors import ConfigError
from regbias.performance.datamodule import (
    FoldDataModule,
    ModelInputs,
    fold_splits,
    take_inputs,
    validation_split,
)
from regbias.performance.modules import EncoderClassifier
from regbias.performance.predict import FeatureFn, model_inputs, predict_proba
from regbias.performance.settings import FinetuneSettings, TrainerSettings
from regbias.performance.trainer import EncoderParts, check_monitor, text_parts, train_fold

log = logging.getLogger(__name__)

#: Receives each trained model (fold number, module), e.g. to log its weights.
ModelSink = Callable[[int, EncoderClassifier], None]


@dataclass
class FoldModel:
    """One fine-tuned model's predictions on every evaluation group.

    Attributes:
        seed: the job seed (the training sample's seed).
        fold: fold number (0 for a model trained on the whole training set).
        train_index: indices (into the training sample) the model was fitted on.
        val_index: indices used for validation / checkpoint choice.
        test_index: the held-out fold: the model's ``baseline`` group (empty for Reuters).
        predictions: group name -> predicted probabilities (``(n,)`` or ``(n, C)``).
        labels: group name -> true 0/1 labels, aligned with ``predictions``.
        baseline: texts and labels of the held-out fold (``None`` when there is none).
        best_score: the best value of the monitored validation metric.
    """

    seed: int
    fold: int
    train_index: np.ndarray
    val_index: np.ndarray
    test_index: np.ndarray
    predictions: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    baseline: TextSet | None = None
    best_score: float | None = None

    @property
    def name(self) -> str:
        """``seed{seed}/fold{fold}``: unique across a sweep."""
        return f"seed{self.seed}/fold{self.fold}"


def fold_seed(seed: int, fold: int) -> int:
    """A seed for fold ``fold`` of job ``seed`` that no other (seed, fold) pair shares."""
    return int(np.random.SeedSequence([seed, fold]).generate_state(1)[0])


@dataclass(frozen=True)
class FoldPlan:
    """One model to train: which sample texts it may see and how it is seeded.

    Attributes:
        fold: fold number (0 for a model trained on the whole training sample).
        train_index: sample indices for fitting and validation.
        test_index: the held-out fold, scored as the model's ``baseline`` (empty: none).
        seed: seeds the validation split, the weights, dropout and shuffling.
        metric_prefix: prefix of the logged curves (``fold0/``; empty for a single model).
    """

    fold: int
    train_index: np.ndarray
    test_index: np.ndarray
    seed: int
    metric_prefix: str


def fold_plans(task: TaskKind, n: int, k: int, seed: int) -> list[FoldPlan]:
    """The models stage I trains on a sample of ``n`` texts.

    Binary corpora: k-fold cross-validation, fold ``j`` seeded by :func:`fold_seed`, its
    held-out fold the model's ``baseline`` group. Multilabel corpora: one model on the whole
    sample, seeded by ``seed`` (the corpus's groups, e.g. Reuters' test split, are held out
    already); ``k`` is not used.

    Raises:
        ConfigError: ``k`` below 2 or above ``n`` for a binary corpus.
    """
    if task == "multilabel":
        return [FoldPlan(0, np.arange(n), np.zeros(0, dtype=np.int64), seed, "")]
    return [
        FoldPlan(fold, train, test, fold_seed(seed, fold), f"fold{fold}/")
        for fold, (train, test) in enumerate(fold_splits(n, k, seed))
    ]


@dataclass(frozen=True)
class _Run:
    """What every model of one stage I run shares."""

    task: TaskKind
    settings: FinetuneSettings
    trainer: TrainerSettings
    seed: int
    encoder: EncoderParts | None
    logger: Logger | None


def run_folds(
    sample: TextSet,
    groups: dict[str, TextSet],
    settings: FinetuneSettings,
    trainer: TrainerSettings,
    *,
    task: TaskKind,
    seed: int,
    encoder: EncoderParts | None = None,
    features: FeatureFn | None = None,
    logger: Logger | None = None,
    model_sink: ModelSink | None = None,
) -> list[FoldModel]:
    """Stage I: fine-tune every model of :func:`fold_plans` and predict every group.

    ``seed`` (the job's) seeds the fold split, validation splits and training; ``encoder`` serves
    ``full`` mode, ``features(texts)`` the cached pooled vectors of ``head`` mode (each text
    embedded once, not once per fold); fold ``j`` of a binary corpus logs under ``fold{j}/``;
    ``model_sink`` gets (fold, trained module) before the module is released.

    Model ``j`` is fitted on its train indices less a seeded ``val_fraction`` held out for
    validation; its held-out fold (binary corpora) is its ``baseline`` group, never seen in
    training.

    Returns:
        One :class:`FoldModel` per plan, in fold order.
    """
    if BASELINE in groups:
        raise ConfigError(f"group name {BASELINE!r} is reserved for each model's held-out fold")
    check_monitor(task, settings)  # before minutes of embedding, not after
    expected = (2, "(n, C) topic") if task == "multilabel" else (1, "(n,) 0/1")
    if np.asarray(sample.labels).ndim != expected[0]:
        raise ConfigError(
            f"a {task} task trains on {expected[1]} labels, got shape "
            f"{np.asarray(sample.labels).shape}"
        )
    plans = fold_plans(task, len(sample), settings.k_folds, seed)
    run = _Run(task, settings, trainer, seed, encoder, logger)
    sample_inputs = model_inputs(sample.texts, settings, features)
    inputs = {name: model_inputs(g.texts, settings, features) for name, g in groups.items()}
    targets = {name: np.asarray(g.labels) for name, g in groups.items()}
    models = []
    for plan in plans:
        module, model = _fit_plan(run, plan, sample, sample_inputs, inputs, targets)
        models.append(model)
        if model_sink is not None:
            model_sink(plan.fold, module)
        del module
    return models


def _fit_plan(
    run: _Run,
    plan: FoldPlan,
    sample: TextSet,
    sample_inputs: ModelInputs,
    group_inputs: dict[str, ModelInputs],
    group_labels: dict[str, np.ndarray],
) -> tuple[EncoderClassifier, FoldModel]:
    """Train one plan's model and predict its groups (with its held-out fold, if any)."""
    settings = run.settings
    fit_index, val_index = validation_split(plan.train_index, settings.val_fraction, plan.seed)
    sizes = (len(fit_index), len(val_index), len(plan.test_index))
    log.debug("seed %d fold %d: fit %d, val %d, test %d", run.seed, plan.fold, *sizes)
    tokenizer, max_length = text_parts(settings, run.encoder)
    datamodule = FoldDataModule.for_fold(
        sample_inputs,
        sample.labels,
        fit_index,
        val_index,
        mode=settings.mode,
        batch_size=settings.batch_size,
        tokenizer=tokenizer,
        max_length=max_length,
        seed=plan.seed,
        num_workers=run.trainer.num_workers,
    )
    module = train_fold(
        datamodule,
        settings,
        run.trainer,
        task=run.task,
        encoder=run.encoder,
        logger=run.logger,
        metric_prefix=plan.metric_prefix,
    )
    baseline = sample.subset(plan.test_index) if len(plan.test_index) else None
    if baseline is not None:
        group_inputs = {BASELINE: take_inputs(sample_inputs, plan.test_index), **group_inputs}
        group_labels = {BASELINE: np.asarray(baseline.labels), **group_labels}
    device = "cuda" if run.trainer.device_kind() == "gpu" else "cpu"
    model = FoldModel(
        seed=run.seed,
        fold=plan.fold,
        train_index=fit_index,
        val_index=val_index,
        test_index=plan.test_index,
        predictions={g: predict_proba(module, x, device=device) for g, x in group_inputs.items()},
        labels=group_labels,
        baseline=baseline,
        best_score=module.best_score,
    )
    return module, model
