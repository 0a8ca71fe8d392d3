"""Fine-tune one classifier with Lightning and restore its best checkpoint.

Binary sentiment and multilabel topics share this loop; they differ only in the classifier
class (:func:`regbias.performance.modules.classifier_for`), its validation metric and the
monitored metric (``finetune.monitor``). Every fit keeps its best checkpoint by that metric,
stops early when ``finetune.patience`` is set, stops at a pending SIGTERM after any batch, and
runs the extra callbacks of ``finetune.callbacks``.
"""

from __future__ import annotations

import copy
import logging
import signal
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import Logger

from regbias.console import progress_mode
from regbias.data.corpus import TaskKind
from regbias.errors import ConfigError
from regbias.interrupt import StopRequested, check_stop
from regbias.performance.datamodule import FoldDataModule, ModelInputs
from regbias.performance.modules import EncoderClassifier, classifier_for
from regbias.performance.settings import FinetuneSettings, TrainerSettings

LIGHTNING_CHATTER = ("lightning.pytorch.utilities.rank_zero", "lightning.pytorch.accelerators.cuda")


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

    ``encoder`` is required in ``full`` mode (in ``head`` mode it only checks the pooling),
    ``feature_dim`` is the cached vectors' size (``head``), ``n_labels`` the topics
    (``multilabel``).

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


def text_parts(settings: FinetuneSettings, encoder: EncoderParts | None) -> tuple[Any, int]:
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

    ``train_inputs`` and ``val_inputs`` are texts (``full`` mode) or cached pooled vectors
    (``head``); ``seed`` seeds weights, dropout and shuffling (``seed_everything(seed,
    workers=True)``); with ``metric_prefix`` ``fold0/`` the curves land as ``fold0/train/loss``.

    Returns:
        The trained module with the weights of its best validation epoch, in eval mode.
    """
    tokenizer, max_length = text_parts(settings, encoder)
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

    The ``datamodule``'s ``seed`` seeds weights, dropout and shuffling; its mode must be the
    settings'; ``metric_prefix`` as in :func:`train_model`.

    Returns:
        The trained module with the weights of its best validation epoch, in eval mode.
    """
    if datamodule.mode != settings.mode:
        raise ConfigError(
            f"the DataModule holds {datamodule.mode!r} mode inputs but the settings ask for "
            f"{settings.mode!r} mode"
        )
    check_monitor(task, settings)
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
        callbacks = [
            checkpoint,
            *_early_stopping(monitor, settings),
            _StopCheck(),
            *settings.callbacks.instantiate(),
        ]
        with _fit_scope(quiet=not trainer.enable_progress_bar):
            fit = _lightning_trainer(
                trainer, settings.max_epochs, callbacks, logger, datamodule.n_fit_batches
            )
            _fit(fit, module, datamodule)
        _restore_best(module, checkpoint)
    return module.eval()


def check_monitor(task: TaskKind, settings: FinetuneSettings) -> None:
    """Check that ``finetune.monitor`` is a metric the task's classifier logs.

    Raises:
        ConfigError: it is not; the message lists the metrics that are.
    """
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
    """Silence Lightning's per-fit banners and restore torch's deterministic-algorithms flag.

    The banners (device, tips) repeat for every fold. ``deterministic=True`` sets the global
    flag; restoring it lets later code in the process (embedding, other stages) run as it
    would without us.
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
