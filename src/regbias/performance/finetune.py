"""Stage I's one training path: fine-tune a classifier per fold, predict every group.

Binary sentiment and multilabel topics share this loop; they differ only in the classifier
class (:func:`regbias.performance.modules.classifier_for`), its validation metric and the
monitored metric (``finetune.monitor``). The fold plan says which models a task trains: k-fold
cross-validation for a binary corpus (each held-out fold is that model's ``baseline``), one
model on the whole training split for a multilabel corpus (its groups are held out already).
"""

from __future__ import annotations

import copy
import logging
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import Logger

from regbias.console import progress_mode
from regbias.data.corpus import TaskKind, TextSet
from regbias.data.groups import BASELINE
from regbias.errors import ConfigError
from regbias.interrupt import StopRequested, check_stop
from regbias.performance.datamodule import (
    PREDICT_BATCH_SIZE,
    FoldDataModule,
    ModelInputs,
    fold_splits,
    make_loader,
    take_inputs,
    validation_split,
)
from regbias.performance.modules import (
    MODES,
    EncoderClassifier,
    classifier_for,
    optimizer_names,
)

__all__ = [
    "EncoderParts",
    "EvaluationSettings",
    "FeatureFn",
    "FinetuneSettings",
    "FoldModel",
    "FoldPlan",
    "ModelSink",
    "TrainerSettings",
    "build_classifier",
    "fold_plans",
    "fold_seed",
    "predict_proba",
    "run_folds",
    "train_fold",
    "train_model",
]

log = logging.getLogger(__name__)

LIGHTNING_CHATTER = ("lightning.pytorch.utilities.rank_zero", "lightning.pytorch.accelerators.cuda")
MONITORS = ("train/loss", "val/loss", "val/acc", "val/micro_f1")
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


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


@dataclass(frozen=True, kw_only=True)
class EvaluationSettings:
    """How each fine-tuned model is scored (the ``finetune.evaluation`` config keys).

    Attributes:
        draw_size: texts per evaluation draw; ``None`` scores every group whole.
        repetitions: draws per group.
        seed: seed of the draws, shared by every job of a sweep so that all its models are
            scored on the same texts (as the paper did); ``None`` = the job's seed.
        matched: under ``sampling.policy=all``, a group smaller than ``draw_size`` shrinks the
            draws of every group to its size (same size and repetitions for all) instead of
            being scored whole once.
    """

    draw_size: int | None
    repetitions: int
    seed: int | None = None
    matched: bool = True

    def __post_init__(self) -> None:
        _require(
            self.draw_size is None or self.draw_size >= 1,
            f"finetune.evaluation.draw_size must be >= 1 or null, got {self.draw_size}",
        )
        _require(
            self.repetitions >= 1,
            f"finetune.evaluation.repetitions must be >= 1, got {self.repetitions}",
        )


@dataclass(frozen=True, kw_only=True)
class FinetuneSettings:
    """How stage I trains and scores its classifiers: one field per ``finetune`` config key.

    Values live in ``conf/finetune/*.yaml`` (none are repeated here); build the settings from
    the composed config.

    Attributes:
        mode: ``full`` (the encoder is fine-tuned) or ``head`` (frozen encoder; dropout +
            linear trained on cached pooled vectors).
        enabled: whether stage I runs.
        sample_size: texts in a job's training sample (binary corpora; ``None``: all of the
            training split, as for multilabel corpora, whose configs omit the key).
        k_folds: cross-validation folds (binary corpora; a multilabel corpus trains one model).
        val_fraction: share of each train fold held out for validation / as dev set.
        optimizer: a ``torch.optim`` optimiser name (case-insensitive).
        lr: learning rate in ``full`` mode.
        head_lr: learning rate in ``head`` mode (a linear head needs a larger step).
        weight_decay: weight decay (not on biases and LayerNorm weights).
        warmup_fraction: share of steps with linear warm-up then linear decay (0: constant lr).
        batch_size: training batch size.
        max_epochs: epochs at most.
        max_length: tokens per training text (cut to what the encoder can take).
        monitor: metric (without fold prefix) that picks the best checkpoint and drives early
            stopping: ``val/loss``, ``val/acc`` (binary), ``val/micro_f1`` (multilabel).
        monitor_mode: ``min`` or ``max`` for that metric.
        patience: epochs without improvement before stopping; ``None`` trains all epochs and
            only restores the best checkpoint.
        dropout: dropout before the linear layer.
        evaluation: how each model is scored.
    """

    mode: Literal["full", "head"]
    enabled: bool
    sample_size: int | None = None
    k_folds: int
    val_fraction: float
    optimizer: str
    lr: float
    head_lr: float
    weight_decay: float
    warmup_fraction: float
    batch_size: int
    max_epochs: int
    max_length: int
    monitor: str
    monitor_mode: Literal["min", "max"]
    patience: int | None
    dropout: float
    evaluation: EvaluationSettings

    def __post_init__(self) -> None:
        _require(self.mode in MODES, f"finetune.mode must be 'full' or 'head', not {self.mode!r}")
        known = {name.lower() for name in optimizer_names()}
        _require(
            self.optimizer.lower() in known,
            f"finetune.optimizer: unknown optimizer {self.optimizer!r}; choose one of "
            f"{', '.join(optimizer_names())}",
        )
        _require(self.k_folds >= 1, f"finetune.k_folds must be >= 1, got {self.k_folds}")
        _require(
            self.sample_size is None or self.sample_size >= 1,
            f"finetune.sample_size must be >= 1 or null, got {self.sample_size}",
        )
        _require(
            0.0 < self.val_fraction < 1.0,
            f"finetune.val_fraction must lie strictly between 0 and 1, got {self.val_fraction}",
        )
        for key in ("lr", "head_lr", "batch_size", "max_epochs"):
            value = getattr(self, key)
            _require(value > 0, f"finetune.{key} must be positive, got {value}")
        _require(self.max_length >= 2, f"finetune.max_length must be >= 2, got {self.max_length}")
        self._check_fractions()
        self._check_monitor()

    def _check_fractions(self) -> None:
        _require(
            self.weight_decay >= 0.0,
            f"finetune.weight_decay must be >= 0, got {self.weight_decay}",
        )
        _require(
            0.0 <= self.warmup_fraction < 1.0,
            f"finetune.warmup_fraction must lie in [0, 1), got {self.warmup_fraction}",
        )
        _require(
            0.0 <= self.dropout < 1.0, f"finetune.dropout must lie in [0, 1), got {self.dropout}"
        )

    def _check_monitor(self) -> None:
        _require(
            self.monitor in MONITORS,
            f"finetune.monitor must be one of {', '.join(MONITORS)}, not {self.monitor!r}",
        )
        _require(
            self.monitor_mode in ("min", "max"),
            f"finetune.monitor_mode must be 'min' or 'max', not {self.monitor_mode!r}",
        )
        _require(
            self.patience is None or self.patience >= 1,
            f"finetune.patience must be >= 1 or null, got {self.patience}",
        )

    @property
    def learning_rate(self) -> float:
        """The learning rate that trains: ``head_lr`` in ``head`` mode, else ``lr``."""
        return self.head_lr if self.mode == "head" else self.lr


@dataclass(frozen=True, kw_only=True)
class TrainerSettings:
    """Where and how Lightning runs: one field per ``trainer`` config key.

    Attributes:
        accelerator: ``cpu``, ``gpu`` or ``auto`` (the GPU when there is one).
        precision: Lightning precision; ``None`` picks ``bf16-mixed`` on a GPU that supports
            it, else ``32-true``.
        deterministic: ask torch for deterministic algorithms (same seed, same predictions).
        num_workers: data loader worker processes (0 when JAX shares the process).
        enable_progress_bar: show Lightning's progress bar.
    """

    accelerator: str
    precision: str | None
    deterministic: bool
    num_workers: int
    enable_progress_bar: bool

    def __post_init__(self) -> None:
        _require(
            self.accelerator in ("cpu", "gpu", "auto"),
            f"trainer.accelerator must be cpu, gpu or auto, not {self.accelerator!r}",
        )
        _require(self.num_workers >= 0, f"trainer.num_workers must be >= 0, got {self.num_workers}")

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
    classifier = classifier_for(task)
    if settings.mode == "full" and encoder is None:
        raise ConfigError("fine-tuning mode 'full' needs an encoder")
    if settings.mode == "head" and feature_dim is None:
        raise ConfigError("fine-tuning mode 'head' needs cached feature vectors")
    kwargs: dict[str, Any] = dict(
        mode=settings.mode,
        optimizer=settings.optimizer,
        lr=settings.learning_rate,
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
        kwargs.update(
            encoder_model=copy.deepcopy(encoder.model) if settings.mode == "full" else None,
            tokenizer=encoder.tokenizer,
            pooling=encoder.pooling,
            max_length=encoder.max_length,
            has_pooler=has_pooler,
        )
    # Loaded encoders come in eval mode and Lightning keeps each submodule's mode: without
    # this, the encoder's dropout would stay off during fine-tuning.
    return classifier(n_labels, **kwargs).train()


def _text_parts(settings: FinetuneSettings, encoder: EncoderParts | None) -> tuple[Any, int]:
    """The tokenizer and truncation length that the loaders need (``None`` in ``head`` mode)."""
    if settings.mode == "head":
        return None, 128
    if encoder is None:
        raise ConfigError("fine-tuning mode 'full' needs an encoder")
    return encoder.tokenizer, encoder.max_length


def _lightning_trainer(
    trainer: TrainerSettings,
    max_epochs: int,
    callbacks: list[Any],
    logger: Logger | None,
    n_batches: int,
) -> L.Trainer:
    return L.Trainer(
        accelerator=trainer.device_kind(),
        devices=1,
        precision=trainer.resolved_precision(),
        deterministic=trainer.deterministic,
        max_epochs=max_epochs,
        logger=logger if logger is not None else False,
        callbacks=callbacks,
        enable_progress_bar=trainer.enable_progress_bar and progress_mode() == "bar",
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
    trainer: TrainerSettings,
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
        trainer: where and how Lightning runs.
        task: ``binary`` or ``multilabel``.
        encoder: the pre-trained encoder (``full`` mode; optional in ``head`` mode).
        seed: seeds weights, dropout and shuffling (``seed_everything(seed, workers=True)``).
        logger: a Lightning logger; ``None`` logs nothing.
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
        num_workers=trainer.num_workers,
    )
    return train_fold(
        datamodule,
        settings,
        trainer,
        task=task,
        encoder=encoder,
        logger=logger,
        metric_prefix=metric_prefix,
    )


def train_fold(
    datamodule: FoldDataModule,
    settings: FinetuneSettings,
    trainer: TrainerSettings,
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
        trainer: where and how Lightning runs.
        task: ``binary`` or ``multilabel``.
        encoder: the pre-trained encoder (``full`` mode; optional in ``head`` mode).
        logger: a Lightning logger; ``None`` logs nothing.
        metric_prefix: e.g. ``fold0/`` so that curves land as ``fold0/train/loss``.

    Returns:
        The trained module with the weights of its best validation epoch, in eval mode.
    """
    if datamodule.mode != settings.mode:
        raise ConfigError(
            f"the DataModule holds {datamodule.mode!r} mode inputs but the settings ask for "
            f"{settings.mode!r} mode"
        )
    _check_monitor(task, settings)
    L.seed_everything(datamodule.seed, workers=True, verbose=False)
    module = build_classifier(
        task,
        settings,
        encoder=encoder,
        feature_dim=datamodule.feature_dim,
        n_labels=datamodule.n_labels,
        metric_prefix=metric_prefix,
    )
    monitor = f"{metric_prefix}{settings.monitor}"
    with tempfile.TemporaryDirectory(prefix="regbias-ckpt-") as ckpt_dir:
        checkpoint = _checkpoint(ckpt_dir, monitor, settings)
        callbacks = [checkpoint, *_early_stopping(monitor, settings), _StopCheck()]
        with _fit_scope(quiet=not trainer.enable_progress_bar):
            fit = _lightning_trainer(
                trainer, settings.max_epochs, callbacks, logger, datamodule.n_fit_batches
            )
            _fit(fit, module, datamodule)
        _restore_best(module, checkpoint)
    return module.eval()


def _check_monitor(task: TaskKind, settings: FinetuneSettings) -> None:
    logged = classifier_for(task).logged_metrics()
    if settings.monitor not in logged:
        raise ConfigError(
            f"finetune.monitor={settings.monitor!r} is not logged for a {task} task: "
            f"choose one of {', '.join(logged)}"
        )


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
        mode=settings.monitor_mode,
        save_top_k=1,
        save_weights_only=True,
        auto_insert_metric_name=False,
    )


def _early_stopping(monitor: str, settings: FinetuneSettings) -> list[EarlyStopping]:
    if settings.patience is None:
        return []
    return [EarlyStopping(monitor, patience=settings.patience, mode=settings.monitor_mode)]


@contextmanager
def _fit_scope(quiet: bool) -> Iterator[None]:
    """Silence Lightning's per-fit banners (device, tips) that repeat for every fold, and
    restore torch's global deterministic-algorithms flag, which ``deterministic=True`` sets,
    so later code in the process (embedding, other stages) runs as it would without us.
    """
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
    batch_size: int = PREDICT_BATCH_SIZE,
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
    trainer: TrainerSettings,
) -> dict[str, np.ndarray]:
    device = "cuda" if trainer.device_kind() == "gpu" else "cpu"
    return {
        name: predict_proba(module, inputs, batch_size=PREDICT_BATCH_SIZE, device=device)
        for name, inputs in group_inputs.items()
    }


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

    Model ``j`` is fitted on its train indices less a seeded ``val_fraction`` held out for
    validation; its held-out fold (binary corpora) is its ``baseline`` group, never seen in
    training.

    Args:
        sample: the training sample (texts; ``(n,)`` 0/1 labels or ``(n, C)`` topics).
        groups: evaluation groups by name (regions, ``mixed``; Reuters' ``ca``, ..., ``test``).
        settings: training settings (``k_folds``, ``val_fraction``, optimiser, ...).
        trainer: where and how Lightning runs.
        task: ``binary`` or ``multilabel``.
        seed: the job seed: seeds the fold split, validation splits and training.
        encoder: the pre-trained encoder (``full`` mode).
        features: ``features(texts) -> (n, hidden)`` cached pooled vectors (``head`` mode);
            each text is embedded once, not once per fold.
        logger: a Lightning logger; fold ``j`` of a binary corpus logs under ``fold{j}/``.
        model_sink: called with (fold, trained module) before the module is released.

    Returns:
        One :class:`FoldModel` per plan, in fold order.
    """
    if BASELINE in groups:
        raise ConfigError(f"group name {BASELINE!r} is reserved for each model's held-out fold")
    _check_monitor(task, settings)  # before minutes of embedding, not after
    expected = (2, "(n, C) topic") if task == "multilabel" else (1, "(n,) 0/1")
    if np.asarray(sample.labels).ndim != expected[0]:
        raise ConfigError(
            f"a {task} task trains on {expected[1]} labels, got shape "
            f"{np.asarray(sample.labels).shape}"
        )
    plans = fold_plans(task, len(sample), settings.k_folds, seed)
    run = _Run(task, settings, trainer, seed, encoder, logger)
    sample_inputs = _model_inputs(sample.texts, settings, features)
    inputs = {name: _model_inputs(g.texts, settings, features) for name, g in groups.items()}
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
    log.debug(
        "seed %d fold %d: fit %d, val %d, test %d",
        run.seed,
        plan.fold,
        len(fit_index),
        len(val_index),
        len(plan.test_index),
    )
    tokenizer, max_length = _text_parts(settings, run.encoder)
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
    model = FoldModel(
        seed=run.seed,
        fold=plan.fold,
        train_index=fit_index,
        val_index=val_index,
        test_index=plan.test_index,
        predictions=_predict_groups(module, group_inputs, run.trainer),
        labels=group_labels,
        baseline=baseline,
        best_score=module.best_score,
    )
    return module, model
