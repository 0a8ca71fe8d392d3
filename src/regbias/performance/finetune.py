"""Train one classifier, predict probabilities, and run the folds of stage I."""

from __future__ import annotations

import copy
import logging
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import Logger

from regbias.data.corpus import TaskKind, TextSet
from regbias.errors import ConfigError
from regbias.interrupt import StopRequested, check_stop
from regbias.performance.datamodule import (
    FoldDataModule,
    ModelInputs,
    fold_splits,
    make_loader,
    validation_split,
)
from regbias.performance.modules import (
    MODES,
    EncoderClassifier,
    MultilabelClassifier,
    SentimentClassifier,
    _optimizer_class,
    check_pooling,
)

__all__ = [
    "BASELINE",
    "EncoderParts",
    "FeatureFn",
    "FinetuneSettings",
    "FoldModel",
    "build_classifier",
    "fold_seed",
    "predict_proba",
    "run_folds",
    "train_fold",
    "train_model",
    "train_multilabel",
]

log = logging.getLogger(__name__)

BASELINE = "baseline"
LIGHTNING_CHATTER = ("lightning.pytorch.utilities.rank_zero", "lightning.pytorch.accelerators.cuda")
FeatureFn = Callable[[list[str]], np.ndarray]
# Receives each trained model (fold number, module), e.g. to log its weights.
ModelSink = Callable[[int, "EncoderClassifier"], None]


@dataclass(frozen=True)
class EncoderParts:
    """What fine-tuning needs from a pre-trained encoder.

    Attributes:
        model: the Hugging Face ``AutoModel`` (copied before each fine-tuning, never changed).
        tokenizer: its fast tokenizer.
        pooling: ``pooler``, ``cls`` or ``mean``.
        max_length: truncation length in tokens.
        has_pooler: whether the model has a trained pooler (``None``: read it from the model).
    """

    model: torch.nn.Module
    tokenizer: Any
    pooling: str = "cls"
    max_length: int = 128
    has_pooler: bool | None = None

    @classmethod
    def from_encoder(cls, encoder: Any) -> EncoderParts:
        """Take the parts of a ``regbias.embeddings.encoder.Encoder`` (read by attribute)."""
        return cls(
            model=encoder.model,
            tokenizer=encoder.tokenizer,
            pooling=encoder.spec.pooling,
            max_length=encoder.spec.max_length,
            has_pooler=encoder.has_pooler,
        )


@dataclass(frozen=True)
class FinetuneSettings:
    """How one classifier is fine-tuned. Defaults: the authors' sentiment training.

    Attributes:
        mode: ``full`` (the encoder is fine-tuned) or ``head`` (frozen encoder; dropout +
            linear trained on cached pooled vectors).
        optimizer: a ``torch.optim`` optimiser name (case-insensitive).
        lr: learning rate.
        batch_size: training batch size.
        max_epochs: epochs at most.
        val_fraction: share of each train fold held out for validation / as dev set.
        weight_decay: weight decay (not on biases and LayerNorm weights).
        warmup_fraction: share of steps with linear warm-up then linear decay (0: constant lr).
        dropout: dropout before the linear layer.
        early_stopping_metric: validation metric (without fold prefix) that picks the best
            checkpoint and drives early stopping: ``val/loss``, ``val/acc``, ``val/micro_f1``.
        early_stopping_mode: ``min`` or ``max`` for that metric.
        early_stopping_patience: epochs without improvement before stopping; ``None`` trains
            all epochs and only restores the best checkpoint.
        accelerator: ``cpu``, ``gpu`` or ``auto``.
        precision: Lightning precision; ``None`` picks ``bf16-mixed`` on a GPU that supports
            it, else ``32-true``.
        deterministic: ask torch for deterministic algorithms (same seed, same predictions).
        num_workers: data loader worker processes (0 when JAX shares the process).
        enable_progress_bar: show Lightning's progress bar.
        predict_batch_size: batch size for predicting probabilities.
    """

    mode: Literal["full", "head"] = "full"
    optimizer: str = "Adagrad"
    lr: float = 1e-3
    batch_size: int = 32
    max_epochs: int = 8
    val_fraction: float = 0.1
    weight_decay: float = 0.0
    warmup_fraction: float = 0.0
    dropout: float = 0.1
    early_stopping_metric: str = "val/loss"
    early_stopping_mode: Literal["min", "max"] = "min"
    early_stopping_patience: int | None = None
    accelerator: str = "cpu"
    precision: str | None = None
    deterministic: bool = True
    num_workers: int = 0
    enable_progress_bar: bool = False
    predict_batch_size: int = 128

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"unknown fine-tuning mode {self.mode!r}: choose 'full' or 'head'")
        _optimizer_class(self.optimizer)
        if self.early_stopping_mode not in ("min", "max"):
            raise ConfigError(
                f"early_stopping_mode must be 'min' or 'max', not {self.early_stopping_mode!r}"
            )
        if self.accelerator not in ("cpu", "gpu", "auto"):
            raise ConfigError(f"accelerator must be cpu, gpu or auto, not {self.accelerator!r}")
        if self.batch_size < 1 or self.max_epochs < 1 or self.num_workers < 0:
            raise ConfigError("batch_size and max_epochs must be positive, num_workers >= 0")
        if not 0.0 <= self.warmup_fraction < 1.0:
            raise ConfigError(f"warmup_fraction must lie in [0, 1), got {self.warmup_fraction}")

    @classmethod
    def sentiment(cls, **overrides: Any) -> FinetuneSettings:
        """The authors' Sentiment140 training: Adagrad 1e-3, batch 32, 8 epochs, min val loss."""
        return replace(cls(), **overrides)

    @classmethod
    def reuters(cls, **overrides: Any) -> FinetuneSettings:
        """DocBERT-style Reuters training: AdamW 2e-5, 10% warm-up, early stop on dev micro-F1."""
        base = cls(
            optimizer="AdamW",
            lr=2e-5,
            batch_size=16,
            max_epochs=30,
            weight_decay=0.01,
            warmup_fraction=0.1,
            early_stopping_metric="val/micro_f1",
            early_stopping_mode="max",
            early_stopping_patience=5,
        )
        return replace(base, **overrides)

    def device_kind(self) -> str:
        """``cpu`` or ``gpu``: the accelerator that ``auto`` resolves to here."""
        if self.accelerator == "auto":
            return "gpu" if torch.cuda.is_available() else "cpu"
        return self.accelerator

    def resolved_precision(self) -> str:
        """The Lightning precision used on this machine."""
        if self.precision is not None:
            return self.precision
        if self.device_kind() == "gpu" and torch.cuda.is_bf16_supported():
            return "bf16-mixed"
        return "32-true"


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


def build_classifier(
    task: TaskKind,
    settings: FinetuneSettings,
    *,
    encoder: EncoderParts | None = None,
    feature_dim: int | None = None,
    n_labels: int = 1,
    metric_prefix: str = "",
) -> EncoderClassifier:
    """A fresh classifier for ``task`` (the encoder is copied, so the original stays pre-trained).

    Args:
        task: ``binary`` or ``multilabel``.
        settings: training settings (mode, optimiser, ...).
        encoder: the pre-trained encoder (required in ``full`` mode; in ``head`` mode only
            used to check the pooling).
        feature_dim: size of the cached vectors (``head`` mode).
        n_labels: number of topics (``multilabel``).
        metric_prefix: prepended to logged metric names.

    Returns:
        A :class:`SentimentClassifier` or :class:`MultilabelClassifier`.
    """
    if settings.mode == "full" and encoder is None:
        raise ConfigError("fine-tuning mode 'full' needs an encoder")
    if settings.mode == "head" and feature_dim is None:
        raise ConfigError("fine-tuning mode 'head' needs cached feature vectors")
    kwargs: dict[str, Any] = dict(
        mode=settings.mode,
        optimizer=settings.optimizer,
        lr=settings.lr,
        weight_decay=settings.weight_decay,
        warmup_fraction=settings.warmup_fraction,
        dropout=settings.dropout,
        metric_prefix=metric_prefix,
        feature_dim=feature_dim,
    )
    if encoder is not None:
        has_pooler = encoder.has_pooler
        if has_pooler is None:
            has_pooler = getattr(encoder.model, "pooler", None) is not None
        check_pooling(encoder.pooling, has_pooler)
        kwargs.update(
            encoder_model=copy.deepcopy(encoder.model) if settings.mode == "full" else None,
            tokenizer=encoder.tokenizer,
            pooling=encoder.pooling,
            max_length=encoder.max_length,
            has_pooler=has_pooler,
        )
    if task not in ("binary", "multilabel"):
        raise ConfigError(f"unknown task {task!r}: choose 'binary' or 'multilabel'")
    module = (
        SentimentClassifier(**kwargs)
        if task == "binary"
        else MultilabelClassifier(n_labels, **kwargs)
    )
    # Loaded encoders come in eval mode and Lightning keeps each submodule's mode: without
    # this, the encoder's dropout would stay off during fine-tuning.
    return module.train()


def _text_parts(settings: FinetuneSettings, encoder: EncoderParts | None) -> tuple[Any, int]:
    """The tokenizer and truncation length that the loaders need (``None`` in ``head`` mode)."""
    if settings.mode == "head":
        return None, 128
    if encoder is None:
        raise ConfigError("fine-tuning mode 'full' needs an encoder")
    return encoder.tokenizer, encoder.max_length


def _trainer(
    settings: FinetuneSettings, callbacks: list[Any], logger: Logger | None, n_batches: int
) -> L.Trainer:
    return L.Trainer(
        accelerator=settings.device_kind(),
        devices=1,
        precision=settings.resolved_precision(),
        deterministic=settings.deterministic,
        max_epochs=settings.max_epochs,
        logger=logger if logger is not None else False,
        callbacks=callbacks,
        enable_progress_bar=settings.enable_progress_bar,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        log_every_n_steps=max(1, min(50, n_batches)),
    )


def train_model(
    train_inputs: ModelInputs,
    train_labels: np.ndarray,
    val_inputs: ModelInputs,
    val_labels: np.ndarray,
    settings: FinetuneSettings,
    *,
    task: TaskKind = "binary",
    encoder: EncoderParts | None = None,
    seed: int = 0,
    logger: Logger | None = None,
    metric_prefix: str = "",
) -> EncoderClassifier:
    """Fine-tune one classifier on given fit and validation sets; see :func:`train_fold`.

    Args:
        train_inputs: texts (``full`` mode) or ``(n, hidden)`` cached pooled vectors (``head``).
        train_labels: 0/1 labels, ``(n,)`` binary or ``(n, C)`` multilabel.
        val_inputs: validation texts or vectors.
        val_labels: validation labels.
        settings: training settings.
        task: ``binary`` or ``multilabel``.
        encoder: the pre-trained encoder (``full`` mode; optional in ``head`` mode).
        seed: seeds weights, dropout and shuffling (``seed_everything(seed, workers=True)``).
        logger: a Lightning logger (e.g. the pipeline's ``MLFlowLogger``); ``None`` logs nothing.
        metric_prefix: e.g. ``fold0/`` so that curves land as ``fold0/train/loss``.

    Returns:
        The trained module with the weights of its best validation epoch, in eval mode.
    """
    tokenizer, max_length = _text_parts(settings, encoder)
    datamodule = FoldDataModule(
        train_inputs,
        train_labels,
        val_inputs,
        val_labels,
        mode=settings.mode,
        tokenizer=tokenizer,
        max_length=max_length,
        batch_size=settings.batch_size,
        seed=seed,
        num_workers=settings.num_workers,
        predict_batch_size=settings.predict_batch_size,
    )
    return train_fold(
        datamodule,
        settings,
        task=task,
        encoder=encoder,
        logger=logger,
        metric_prefix=metric_prefix,
    )


def train_fold(
    datamodule: FoldDataModule,
    settings: FinetuneSettings,
    *,
    task: TaskKind = "binary",
    encoder: EncoderParts | None = None,
    logger: Logger | None = None,
    metric_prefix: str = "",
) -> EncoderClassifier:
    """Fine-tune one classifier on a fold's DataModule and restore its best checkpoint.

    Args:
        datamodule: the fold's fit and validation sets; its ``seed`` seeds weights, dropout and
            shuffling (``seed_everything(seed, workers=True)``).
        settings: training settings (the mode must be the DataModule's).
        task: ``binary`` or ``multilabel``.
        encoder: the pre-trained encoder (``full`` mode; optional in ``head`` mode).
        logger: a Lightning logger (e.g. the pipeline's ``MLFlowLogger``); ``None`` logs nothing.
        metric_prefix: e.g. ``fold0/`` so that curves land as ``fold0/train/loss``.

    Returns:
        The trained module with the weights of its best validation epoch, in eval mode.
    """
    if datamodule.mode != settings.mode:
        raise ConfigError(
            f"the DataModule holds {datamodule.mode!r} mode inputs but the settings ask for "
            f"{settings.mode!r} mode"
        )
    L.seed_everything(datamodule.seed, workers=True, verbose=False)
    module = build_classifier(
        task,
        settings,
        encoder=encoder,
        feature_dim=datamodule.feature_dim,
        n_labels=datamodule.n_labels,
        metric_prefix=metric_prefix,
    )
    monitor = f"{metric_prefix}{settings.early_stopping_metric}"
    with tempfile.TemporaryDirectory(prefix="regbias-ckpt-") as ckpt_dir:
        checkpoint = _checkpoint(ckpt_dir, monitor, settings)
        callbacks = [checkpoint, *_early_stopping(monitor, settings), _StopCheck()]
        with _fit_scope(quiet=not settings.enable_progress_bar):
            trainer = _trainer(settings, callbacks, logger, datamodule.n_fit_batches)
            _fit(trainer, module, datamodule)
        _restore_best(module, checkpoint)
    return module.eval()


class _StopCheck(L.Callback):
    """A safe point after every training batch: a pending SIGTERM stops the fit there."""

    def on_train_batch_end(self, *args: Any, **kwargs: Any) -> None:
        check_stop()


def _fit(trainer: L.Trainer, module: EncoderClassifier, datamodule: Any) -> None:
    """``trainer.fit``, with Ctrl-C kept a KeyboardInterrupt.

    Lightning turns Ctrl-C into ``sys.exit(1)`` (and ignores SIGINT from then on); the job
    needs to tell an interrupt from a failure, so it gets its KeyboardInterrupt back.
    """
    try:
        trainer.fit(module, datamodule=datamodule)
    except SystemExit as exit_:
        if isinstance(exit_, StopRequested) or not trainer.interrupted:
            raise
        signal.signal(signal.SIGINT, signal.default_int_handler)
        raise KeyboardInterrupt from None


def _checkpoint(ckpt_dir: str, monitor: str, settings: FinetuneSettings) -> ModelCheckpoint:
    return ModelCheckpoint(
        dirpath=ckpt_dir,
        filename="best",
        monitor=monitor,
        mode=settings.early_stopping_mode,
        save_top_k=1,
        save_weights_only=True,
        auto_insert_metric_name=False,
    )


def _early_stopping(monitor: str, settings: FinetuneSettings) -> list[EarlyStopping]:
    if settings.early_stopping_patience is None:
        return []
    return [
        EarlyStopping(
            monitor, patience=settings.early_stopping_patience, mode=settings.early_stopping_mode
        )
    ]


@contextmanager
def _fit_scope(quiet: bool) -> Iterator[None]:
    """Silence Lightning's per-fit banners (device, tips) that repeat for every fold, and
    restore torch's global deterministic-algorithms flag, which ``deterministic=True`` sets,
    so later code in the process (embedding, other stages) runs as it would without us."""
    loggers = [logging.getLogger(name) for name in LIGHTNING_CHATTER] if quiet else []
    levels = [lg.level for lg in loggers]
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            # num_workers=0 is deliberate (JAX may share the process).
            warnings.filterwarnings("ignore", message=".*does not have many workers.*")
            warnings.filterwarnings("ignore", message=".*LeafSpec.*")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)


def _restore_best(module: EncoderClassifier, checkpoint: ModelCheckpoint) -> None:
    if not checkpoint.best_model_path:
        raise ConfigError(
            f"no checkpoint was saved: the monitored metric {checkpoint.monitor!r} was never "
            "logged; use val/loss, val/acc (binary) or val/micro_f1 (multilabel)"
        )
    state = torch.load(checkpoint.best_model_path, map_location="cpu", weights_only=True)
    module.load_state_dict(state["state_dict"])
    score = checkpoint.best_model_score
    module.best_score = None if score is None else float(score)


def predict_proba(
    module: EncoderClassifier,
    inputs: ModelInputs,
    *,
    batch_size: int = 128,
    device: str | torch.device | None = None,
) -> np.ndarray:
    """Predicted probabilities of a trained classifier.

    Args:
        module: a trained :class:`SentimentClassifier` or :class:`MultilabelClassifier`.
        inputs: texts (``full`` mode) or ``(n, hidden)`` cached pooled vectors (``head`` mode).
        batch_size: inputs per forward pass.
        device: where to run (default: where the module's weights are).

    Returns:
        ``(n,)`` probabilities of the positive class (binary) or ``(n, C)`` per topic.
    """
    n_outputs = module.classifier.out_features
    if len(inputs) == 0:
        return np.zeros((0,) if n_outputs == 1 else (0, n_outputs), dtype=np.float32)
    device = torch.device(device) if device is not None else module.classifier.weight.device
    module = module.to(device).eval()
    loader = make_loader(
        inputs,
        None,
        batch_size,
        mode=module.mode,
        tokenizer=module.tokenizer,
        max_length=module.max_length,
    )
    chunks = []
    with torch.inference_mode():
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            chunks.append(torch.sigmoid(module(batch).float()).cpu())
    probs = torch.cat(chunks).numpy()
    return probs[:, 0] if n_outputs == 1 else probs


def _model_inputs(
    texts: list[str], settings: FinetuneSettings, features: FeatureFn | None
) -> ModelInputs:
    if settings.mode == "full":
        return list(texts)
    if features is None:
        raise ConfigError("fine-tuning mode 'head' needs a features(texts) function")
    vectors = np.asarray(features(list(texts)), dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(texts):
        raise ConfigError(
            f"features(texts) must return an (n, hidden) array for {len(texts)} texts, "
            f"got shape {vectors.shape}"
        )
    return vectors


def _predict_groups(
    module: EncoderClassifier,
    group_inputs: dict[str, ModelInputs],
    settings: FinetuneSettings,
) -> dict[str, np.ndarray]:
    device = "cuda" if settings.device_kind() == "gpu" else "cpu"
    return {
        name: predict_proba(module, inputs, batch_size=settings.predict_batch_size, device=device)
        for name, inputs in group_inputs.items()
    }


def run_folds(
    sample: TextSet,
    groups: dict[str, TextSet],
    k: int,
    settings: FinetuneSettings,
    *,
    seed: int,
    encoder: EncoderParts | None = None,
    features: FeatureFn | None = None,
    logger: Logger | None = None,
    model_sink: ModelSink | None = None,
) -> list[FoldModel]:
    """Stage I for a binary task: k-fold fine-tuning on one training sample.

    Model ``j`` is fitted on every fold but ``j``, less a seeded ``val_fraction`` held out for
    validation; the held-out fold ``j`` is its ``baseline`` group, never seen in training.

    Args:
        sample: the general training sample (texts, 0/1 labels).
        groups: evaluation groups by name (regions, ``mixed``); ``baseline`` is added per model.
        k: number of folds.
        settings: training settings.
        seed: the job seed: seeds the fold split, validation splits and training.
        encoder: the pre-trained encoder (``full`` mode).
        features: ``features(texts) -> (n, hidden)`` cached pooled vectors (``head`` mode);
            each text is embedded once, not once per fold.
        logger: a Lightning logger; fold ``j`` logs under ``fold{j}/``.
        model_sink: called with (fold, trained module) before the module is released.

    Returns:
        One :class:`FoldModel` per fold, in fold order.
    """
    if BASELINE in groups:
        raise ConfigError(f"group name {BASELINE!r} is reserved for each model's held-out fold")
    tokenizer, max_length = _text_parts(settings, encoder)
    sample_inputs = _model_inputs(sample.texts, settings, features)
    group_inputs = {name: _model_inputs(g.texts, settings, features) for name, g in groups.items()}
    group_labels = {name: np.asarray(g.labels) for name, g in groups.items()}
    models = []
    for fold, (train_index, test_index) in enumerate(fold_splits(len(sample), k, seed)):
        this_seed = fold_seed(seed, fold)
        fit_index, val_index = validation_split(train_index, settings.val_fraction, this_seed)
        log.info(
            "seed %d fold %d: fit %d, val %d, test %d",
            seed,
            fold,
            len(fit_index),
            len(val_index),
            len(test_index),
        )
        datamodule = FoldDataModule.for_fold(
            sample_inputs,
            sample.labels,
            fit_index,
            val_index,
            settings,
            tokenizer=tokenizer,
            max_length=max_length,
            seed=this_seed,
            predict_index=test_index,
        )
        module = train_fold(
            datamodule,
            settings,
            task="binary",
            encoder=encoder,
            logger=logger,
            metric_prefix=f"fold{fold}/",
        )
        inputs = {BASELINE: datamodule.inputs["predict"], **group_inputs}
        baseline = sample.subset(test_index)
        models.append(
            FoldModel(
                seed=seed,
                fold=fold,
                train_index=fit_index,
                val_index=val_index,
                test_index=test_index,
                predictions=_predict_groups(module, inputs, settings),
                labels={BASELINE: np.asarray(baseline.labels), **group_labels},
                baseline=baseline,
                best_score=module.best_score,
            )
        )
        if model_sink is not None:
            model_sink(fold, module)
        del module
    return models


def train_multilabel(
    train: TextSet,
    groups: dict[str, TextSet],
    settings: FinetuneSettings,
    *,
    seed: int,
    encoder: EncoderParts | None = None,
    features: FeatureFn | None = None,
    logger: Logger | None = None,
    metric_prefix: str = "",
    model_sink: ModelSink | None = None,
) -> FoldModel:
    """Stage I for a multilabel task (Reuters): one model per seed, every group evaluated whole.

    The dev set is a seeded ``val_fraction`` of ``train``; it picks the checkpoint and drives
    early stopping (DocBERT: dev micro-F1, patience 5, see :meth:`FinetuneSettings.reuters`).

    Args:
        train: the training documents with ``(n, C)`` 0/1 topic labels.
        groups: evaluation groups by name (``ca``, ``au``, ..., ``test``).
        settings: training settings.
        seed: seeds the dev split and training.
        encoder: the pre-trained encoder (``full`` mode).
        features: cached pooled vectors function (``head`` mode).
        logger: a Lightning logger.
        metric_prefix: prepended to logged metric names.
        model_sink: called with (0, trained module) once predictions are made.

    Returns:
        A :class:`FoldModel` with ``fold=0`` and an empty ``test_index``.
    """
    labels = np.asarray(train.labels)
    if labels.ndim != 2:
        raise ConfigError("train_multilabel needs (n, n_topics) labels; use run_folds for binary")
    tokenizer, max_length = _text_parts(settings, encoder)
    inputs = _model_inputs(train.texts, settings, features)
    fit_index, val_index = validation_split(np.arange(len(train)), settings.val_fraction, seed)
    datamodule = FoldDataModule.for_fold(
        inputs,
        labels,
        fit_index,
        val_index,
        settings,
        tokenizer=tokenizer,
        max_length=max_length,
        seed=seed,
    )
    module = train_fold(
        datamodule,
        settings,
        task="multilabel",
        encoder=encoder,
        logger=logger,
        metric_prefix=metric_prefix,
    )
    group_inputs = {name: _model_inputs(g.texts, settings, features) for name, g in groups.items()}
    model = FoldModel(
        seed=seed,
        fold=0,
        train_index=fit_index,
        val_index=val_index,
        test_index=np.zeros(0, dtype=np.int64),
        predictions=_predict_groups(module, group_inputs, settings),
        labels={name: np.asarray(g.labels) for name, g in groups.items()},
        best_score=module.best_score,
    )
    if model_sink is not None:
        model_sink(0, module)
    return model
