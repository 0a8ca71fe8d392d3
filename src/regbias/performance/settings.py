"""Stage I's settings: the ``finetune`` and ``trainer`` config groups, one field per key.

Values live in ``conf/finetune/*.yaml`` and ``conf/trainer/*.yaml``; the settings converter
(:mod:`regbias.settings_reader`) builds these classes from the composed config, and their checks
raise a :class:`~regbias.errors.ConfigError` that names the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from regbias.errors import ConfigError
from regbias.performance.datamodule import Mode
from regbias.performance.targets import CallbackSettings, OptimizerSettings
from regbias.settings_reader import check_choices

MONITORS = ("train/loss", "val/loss", "val/acc", "val/micro_f1")
#: How each model is scored: ``texts`` (every distinct text of every group once) or ``draws``
#: (the first version's repeated equal-size draws).
EvaluationDesign = Literal["texts", "draws"]
#: Lightning's precision names (``trainer.precision``).
Precision = Literal[
    "transformer-engine",
    "transformer-engine-float16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
    "64",
    "32",
    "16",
    "bf16",
]


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)


@dataclass(frozen=True, kw_only=True)
class EvaluationSettings:
    """How each fine-tuned model is scored (the ``finetune.evaluation`` config keys).

    Attributes:
        design: ``texts``: every model scores every distinct text of every group once (the
            test of record's texts; never a text of its own training or validation data);
            ``draws``: the first version's ``repetitions`` draws of ``draw_size`` texts.
        draw_size: ``draws`` design: texts per evaluation draw; ``None`` scores every group
            whole.
        repetitions: draws per group.
        seed: seed of the draws, shared by every job of a sweep so that all its models are
            scored on the same texts (as the paper did); ``None`` = the job's seed.
        matched: under ``sampling.policy=all``, a group smaller than ``draw_size`` shrinks the
            draws of every group to its size (same size and repetitions for all) instead of
            being scored whole once.
    """

    design: EvaluationDesign
    draw_size: int | None
    repetitions: int
    seed: int | None
    matched: bool

    def __post_init__(self) -> None:
        check_choices(self, "finetune.evaluation")
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
            training split, as a multilabel corpus always trains on).
        k_folds: cross-validation folds (binary corpora; a multilabel corpus trains one model).
        val_fraction: share of each train fold held out for validation / as dev set.
        optimizer: the ``torch.optim`` optimiser class (``_target_``, with ``_partial_: true``:
            it is called with the parameter groups and the learning rate).
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
        callbacks: extra Lightning callbacks of every fit, by name (none in the shipped
            configs; the checkpoint, early stopping and stop check are always there).
    """

    mode: Mode
    enabled: bool
    sample_size: int | None
    k_folds: int
    val_fraction: float
    optimizer: OptimizerSettings
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
    callbacks: CallbackSettings

    def __post_init__(self) -> None:
        check_choices(self, "finetune")
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
            self.weight_decay >= 0.0, f"finetune.weight_decay must be >= 0, got {self.weight_decay}"
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
    precision: Precision | None
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

    def resolved_precision(self) -> Precision:
        """The Lightning precision used on this machine."""
        if self.precision is not None:
            return self.precision
        if self.device_kind() == "gpu" and torch.cuda.is_bf16_supported():
            return "bf16-mixed"
        return "32-true"
