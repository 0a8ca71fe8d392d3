"""Fold splits, validation splits and data loaders for fine-tuning (stage I)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, Dataset

from regbias.errors import ConfigError

__all__ = [
    "FeatureDataset",
    "TextCollator",
    "TextDataset",
    "feature_loader",
    "fold_splits",
    "text_loader",
    "validation_split",
]


def fold_splits(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split ``n`` items into ``k`` shuffled cross-validation folds.

    Args:
        n: number of items in the training sample.
        k: number of folds (at least 2, at most ``n``).
        seed: random state of the shuffle.

    Returns:
        ``k`` pairs ``(train_index, test_index)``; the test indices partition ``range(n)``.

    Raises:
        ConfigError: when ``k`` is below 2 or larger than the sample.
    """
    if k < 2:
        raise ConfigError(f"cross-validation needs at least 2 folds, got k={k}")
    if k > n:
        raise ConfigError(
            f"cannot split a training sample of {n} texts into k={k} folds: "
            "use fewer folds or a larger training sample"
        )
    kfold = KFold(n_splits=k, shuffle=True, random_state=seed)
    return [(train, test) for train, test in kfold.split(np.arange(n))]


def validation_split(
    train_index: np.ndarray, fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Hold out a seeded ``fraction`` of a train fold for validation.

    Args:
        train_index: indices of the train fold.
        fraction: share of the fold used for validation, in ``(0, 1)``.
        seed: random state of the draw.

    Returns:
        ``(fit_index, val_index)``, each sorted, disjoint, together ``train_index``.

    Raises:
        ConfigError: when ``fraction`` is outside ``(0, 1)`` or leaves a side empty.
    """
    train_index = np.asarray(train_index, dtype=np.int64)
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"val_fraction must lie strictly between 0 and 1, got {fraction}")
    n_val = round(fraction * len(train_index))
    if n_val < 1 or n_val >= len(train_index):
        raise ConfigError(
            f"val_fraction={fraction} of {len(train_index)} training texts leaves an empty "
            "train or validation set: use a larger training sample"
        )
    order = np.random.default_rng(seed).permutation(len(train_index))
    val_index = np.sort(train_index[order[:n_val]])
    fit_index = np.sort(train_index[order[n_val:]])
    return fit_index, val_index


def _float_labels(labels: np.ndarray) -> torch.Tensor:
    # BCE-with-logits wants float targets of the logits' shape: (n,) binary, (n, C) multilabel.
    return torch.as_tensor(np.asarray(labels), dtype=torch.float32)


class TextDataset(Dataset):
    """Texts with float labels; tokenised per batch by :class:`TextCollator`."""

    def __init__(self, texts: list[str], labels: np.ndarray | None = None) -> None:
        self.texts = list(texts)
        self.labels = None if labels is None else _float_labels(labels)

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index: int) -> dict[str, Any]:
        item: dict[str, Any] = {"text": self.texts[index]}
        if self.labels is not None:
            item["labels"] = self.labels[index]
        return item


class FeatureDataset(Dataset):
    """Cached pooled vectors with float labels, for ``head`` mode."""

    def __init__(self, features: np.ndarray, labels: np.ndarray | None = None) -> None:
        self.features = torch.as_tensor(np.asarray(features), dtype=torch.float32)
        self.labels = None if labels is None else _float_labels(labels)

    def __len__(self) -> int:
        return len(self.features)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        item = {"features": self.features[index]}
        if self.labels is not None:
            item["labels"] = self.labels[index]
        return item


class TextCollator:
    """Tokenise a batch with truncation and pad it to its longest text.

    A top-level class (not a closure) so that spawned loader workers can unpickle it.
    """

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = dict(
            self.tokenizer(
                [item["text"] for item in items],
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
        )
        if "labels" in items[0]:
            batch["labels"] = torch.stack([item["labels"] for item in items])
        return batch


def _loader(
    dataset: Dataset,
    batch_size: int,
    shuffle: bool,
    seed: int,
    num_workers: int,
    collate_fn: Any = None,
) -> DataLoader:
    generator = torch.Generator().manual_seed(seed)
    workers: dict[str, Any] = {}
    if num_workers > 0:
        # Spawned, persistent workers: forking a process that holds JAX state is unsafe.
        workers = {"persistent_workers": True, "multiprocessing_context": "spawn"}
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        generator=generator,
        num_workers=num_workers,
        collate_fn=collate_fn,
        **workers,
    )


def text_loader(
    texts: list[str],
    labels: np.ndarray | None,
    tokenizer: Any,
    max_length: int,
    batch_size: int,
    *,
    shuffle: bool = False,
    seed: int = 0,
    num_workers: int = 0,
) -> DataLoader:
    """A loader of tokenised, dynamically padded batches of texts.

    Args:
        texts: the texts.
        labels: 0/1 labels (``(n,)`` or ``(n, C)``), or ``None`` for prediction.
        tokenizer: a Hugging Face (fast) tokenizer.
        max_length: truncation length in tokens.
        batch_size: texts per batch.
        shuffle: reshuffle every epoch (seeded by ``seed``).
        seed: seed of the shuffle.
        num_workers: loader worker processes (0: load in the main process).

    Returns:
        A ``DataLoader`` yielding dicts of ``input_ids``, ``attention_mask``, ... and ``labels``.
    """
    collate = TextCollator(tokenizer, max_length)
    dataset = TextDataset(texts, labels)
    return _loader(dataset, batch_size, shuffle, seed, num_workers, collate)


def feature_loader(
    features: np.ndarray,
    labels: np.ndarray | None,
    batch_size: int,
    *,
    shuffle: bool = False,
    seed: int = 0,
    num_workers: int = 0,
) -> DataLoader:
    """A loader of batches of cached pooled vectors (``head`` mode).

    Args:
        features: ``(n, hidden)`` pooled embeddings.
        labels: 0/1 labels (``(n,)`` or ``(n, C)``), or ``None`` for prediction.
        batch_size: vectors per batch.
        shuffle: reshuffle every epoch (seeded by ``seed``).
        seed: seed of the shuffle.
        num_workers: loader worker processes (0: load in the main process).

    Returns:
        A ``DataLoader`` yielding dicts of ``features`` and ``labels``.
    """
    dataset = FeatureDataset(features, labels)
    return _loader(dataset, batch_size, shuffle, seed, num_workers)
