"""Predicted probabilities of a trained classifier, for texts or cached vectors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from regbias.errors import ConfigError
from regbias.performance.datamodule import PREDICT_BATCH_SIZE, ModelInputs, make_loader
from regbias.performance.modules import EncoderClassifier
from regbias.performance.settings import FinetuneSettings

#: ``features(texts) -> (n, hidden)`` cached pooled vectors (``head`` mode).
FeatureFn = Callable[[list[str]], np.ndarray]


def predict_proba(
    module: EncoderClassifier,
    inputs: ModelInputs,
    *,
    batch_size: int = PREDICT_BATCH_SIZE,
    device: str | torch.device | None = None,
) -> np.ndarray:
    """Predicted probabilities of a trained classifier.

    ``inputs`` are texts (``full`` mode) or cached pooled vectors (``head``); ``device`` defaults to
    the module's.

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


def model_inputs(
    texts: list[str], settings: FinetuneSettings, features: FeatureFn | None
) -> ModelInputs:
    """What a model of ``settings.mode`` reads: the texts, or their cached pooled vectors.

    Raises:
        ConfigError: ``head`` mode without ``features``, or vectors of the wrong shape.
    """
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
