"""LightningModules for stage I: binary sentiment and multilabel topic classifiers."""

from __future__ import annotations

from typing import Any

import lightning as L
import torch
from torch import nn
from torchmetrics.classification import BinaryAccuracy, MultilabelF1Score
from transformers import get_linear_schedule_with_warmup

from regbias.embeddings.pooling import check_pooling, pool
from regbias.errors import ConfigError
from regbias.performance.datamodule import Mode, check_mode
from regbias.performance.targets import OptimizerSettings

#: The authors' sentiment optimiser and DocBERT's, the classifiers' defaults.
ADAGRAD = OptimizerSettings("torch.optim.Adagrad", torch.optim.Adagrad)
ADAMW = OptimizerSettings("torch.optim.AdamW", torch.optim.AdamW)


def _decay_groups(module: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    # Transformer convention (BERT, DocBERT): biases and LayerNorm weights are not decayed.
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, param in module.named_parameters():
        if not param.requires_grad:
            continue
        skip = name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name
        (no_decay if skip else decay).append(param)
    groups = [{"params": decay, "weight_decay": weight_decay}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return groups


class EncoderClassifier(L.LightningModule):
    """Encoder -> pooled vector -> dropout -> linear logits, trained with BCE-with-logits.

    In ``full`` mode the encoder is part of the module and is fine-tuned; batches hold token
    ids. In ``head`` mode the encoder is frozen and left out: the module is dropout + linear on
    cached pooled vectors (batches hold ``features``).

    Args:
        n_outputs: number of logits (1 for binary sentiment, one per topic for multilabel).
        mode: ``full`` or ``head``.
        encoder_model: the Hugging Face ``AutoModel`` (required in ``full`` mode).
        tokenizer: its tokenizer (kept so :func:`predict_proba` can read raw texts).
        pooling: ``pooler``, ``cls`` or ``mean``.
        max_length: truncation length in tokens.
        feature_dim: size of the cached vectors (``head`` mode; defaults to the encoder's).
        has_pooler: whether the encoder has a pooler (``None``: read it from ``encoder_model``).
        optimizer: the ``torch.optim`` optimiser class (``finetune.optimizer``).
        lr: learning rate.
        weight_decay: weight decay (not applied to biases and LayerNorm weights).
        warmup_fraction: share of the training steps with linear warm-up, then linear decay;
            0 keeps the learning rate constant.
        dropout: dropout before the linear layer.
        metric_prefix: prepended to logged names, e.g. ``fold0/`` -> ``fold0/val/loss``.
    """

    def __init__(
        self,
        n_outputs: int,
        *,
        mode: Mode = "full",
        encoder_model: nn.Module | None = None,
        tokenizer: Any = None,
        pooling: str = "cls",
        max_length: int = 128,
        feature_dim: int | None = None,
        has_pooler: bool | None = None,
        optimizer: OptimizerSettings = ADAGRAD,
        lr: float = 1e-3,
        weight_decay: float = 0.0,
        warmup_fraction: float = 0.0,
        dropout: float = 0.1,
        metric_prefix: str = "",
    ) -> None:
        super().__init__()
        check_mode(mode)
        if has_pooler is None and encoder_model is not None:
            has_pooler = getattr(encoder_model, "pooler", None) is not None
        check_pooling(pooling, has_pooler)
        # Not sent to the logger: every fold of a job shares one MLflow run, and MLflow refuses
        # a parameter whose value changes (the metric prefix does); the pipeline logs config.
        # The optimizer settings stay out of the checkpoint, which loads with weights_only.
        self.save_hyperparameters(ignore=["encoder_model", "tokenizer", "optimizer"], logger=False)
        self.optimizer_settings = optimizer
        self.mode, self.pooling, self.max_length = mode, pooling, max_length
        self.tokenizer = tokenizer
        self.metric_prefix = metric_prefix
        hidden = feature_dim or _hidden_size(encoder_model)
        self.encoder: nn.Module | None
        if mode == "full":
            if encoder_model is None:
                raise ConfigError("fine-tuning mode 'full' needs an encoder model")
            self.encoder = encoder_model
        else:
            self.encoder = None
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, n_outputs)
        self.loss_fn = nn.BCEWithLogitsLoss()

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits ``(batch, n_outputs)`` for a batch of token ids or cached vectors."""
        if self.mode == "head":
            pooled = batch["features"]
        else:
            if self.encoder is None:
                raise ConfigError("a 'full' mode classifier has no encoder")
            inputs = {k: v for k, v in batch.items() if k != "labels"}
            outputs = self.encoder(**inputs)
            pooled = pool(outputs, batch["attention_mask"], self.pooling)
        return self.classifier(self.dropout(pooled))

    def _logits_targets(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self(batch)
        return logits.reshape(batch["labels"].shape), batch["labels"]

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        """The batch's BCE-with-logits loss, logged per epoch as ``{prefix}train/loss``."""
        logits, targets = self._logits_targets(batch)
        loss = self.loss_fn(logits, targets)
        self.log(f"{self.metric_prefix}train/loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        """Log the batch's validation loss and the task's validation metric."""
        logits, targets = self._logits_targets(batch)
        self.log(f"{self.metric_prefix}val/loss", self.loss_fn(logits, targets), on_epoch=True)
        self._log_val_metric(torch.sigmoid(logits.float()), targets.long())

    #: The task's validation metric (without prefix), logged by :meth:`_log_val_metric`.
    VAL_METRIC: str | None = None
    #: The best value of the monitored metric, set when the best checkpoint is restored.
    best_score: float | None = None

    @classmethod
    def logged_metrics(cls) -> tuple[str, ...]:
        """Epoch metrics this classifier logs (without prefix): what a checkpoint may monitor."""
        return ("train/loss", "val/loss", *([cls.VAL_METRIC] if cls.VAL_METRIC else []))

    def _log_val_metric(self, probs: torch.Tensor, targets: torch.Tensor) -> None:
        """The task's validation metric: accuracy or micro-F1 in the subclasses, none here."""

    def predict_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        """Probabilities (sigmoid of the logits) of a batch."""
        return torch.sigmoid(self(batch).float())

    def configure_optimizers(self) -> Any:
        """The optimiser (no decay on biases and LayerNorm), with warm-up and linear decay.

        Without ``warmup_fraction`` the learning rate stays constant.
        """
        hp = self.hparams
        groups = _decay_groups(self, hp["weight_decay"])
        optimizer = self.optimizer_settings.make(groups, lr=hp["lr"])
        if hp["warmup_fraction"] <= 0:
            return optimizer
        total = int(self.trainer.estimated_stepping_batches)
        schedule = get_linear_schedule_with_warmup(
            optimizer, int(hp["warmup_fraction"] * total), total
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def _hidden_size(encoder_model: nn.Module | None) -> int:
    if encoder_model is None:
        raise ConfigError("'head' mode needs feature_dim (the size of the cached vectors)")
    config: Any = encoder_model.config  # a transformers PretrainedConfig
    return int(config.hidden_size)


class SentimentClassifier(EncoderClassifier):
    """Binary sentiment: one logit; logs ``{prefix}val/acc`` (threshold 0.5).

    Defaults follow the authors' training: Adagrad, learning rate 1e-3. See
    :class:`EncoderClassifier` for the arguments.

    Args:
        n_labels: must be 1 (the same signature as :class:`MultilabelClassifier`).
        **kwargs: as :class:`EncoderClassifier`.
    """

    VAL_METRIC = "val/acc"

    def __init__(self, n_labels: int = 1, **kwargs: Any) -> None:
        if n_labels != 1:
            raise ConfigError(f"binary sentiment has one label, not {n_labels}: use multilabel")
        kwargs.setdefault("optimizer", ADAGRAD)
        kwargs.setdefault("lr", 1e-3)
        super().__init__(1, **kwargs)
        self.val_acc = BinaryAccuracy(threshold=0.5)

    def _log_val_metric(self, probs: torch.Tensor, targets: torch.Tensor) -> None:
        self.val_acc(probs, targets)
        self.log(f"{self.metric_prefix}{self.VAL_METRIC}", self.val_acc, on_epoch=True)


class MultilabelClassifier(EncoderClassifier):
    """Multilabel topics: one logit per topic; logs ``{prefix}val/micro_f1`` (threshold 0.5).

    Defaults follow DocBERT: AdamW, learning rate 2e-5, weight decay 0.01 (not on bias or
    LayerNorm), linear warm-up over 10% of the steps. See :class:`EncoderClassifier`.

    Args:
        n_labels: number of topics.
        **kwargs: as :class:`EncoderClassifier`.
    """

    VAL_METRIC = "val/micro_f1"

    def __init__(self, n_labels: int, **kwargs: Any) -> None:
        kwargs.setdefault("optimizer", ADAMW)
        kwargs.setdefault("lr", 2e-5)
        kwargs.setdefault("weight_decay", 0.01)
        kwargs.setdefault("warmup_fraction", 0.1)
        super().__init__(n_labels, **kwargs)
        self.val_micro_f1 = MultilabelF1Score(num_labels=n_labels, average="micro", threshold=0.5)

    def _log_val_metric(self, probs: torch.Tensor, targets: torch.Tensor) -> None:
        self.val_micro_f1(probs, targets)
        self.log(f"{self.metric_prefix}{self.VAL_METRIC}", self.val_micro_f1, on_epoch=True)


def classifier_for(task: str) -> type[EncoderClassifier]:
    """The classifier class of a task: what (with its metric) sets binary and multilabel apart.

    Raises:
        ConfigError: an unknown task.
    """
    classes: dict[str, type[EncoderClassifier]] = {
        "binary": SentimentClassifier,
        "multilabel": MultilabelClassifier,
    }
    if task not in classes:
        raise ConfigError(f"unknown task {task!r}: choose 'binary' or 'multilabel'")
    return classes[task]
