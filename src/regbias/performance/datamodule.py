"""Fold splits, validation splits, the one loader builder and the per-fold DataModule (stage I)."""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import lightning as L
import numpy as np
import torch
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, Dataset

from regbias.errors import ConfigError

# Texts (``full`` mode) or an ``(n, hidden)`` array of cached pooled vectors (``head`` mode).
ModelInputs = list[str] | np.ndarray
Mode = Literal["full", "head"]
#: Inputs per forward pass when predicting (no gradients: larger than training batches).
PREDICT_BATCH_SIZE = 128


def fold_splits(n: int, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split ``n`` items into ``k`` shuffled cross-validation folds.

    Returns:
        ``k`` pairs ``(train_index, test_index)``; the test indices partition ``range(n)``.

    Raises:
        ConfigError: when ``k`` is below 2 or larger than the sample.
    """
    if k < 2:
        raise ConfigError(
            f"cross-validation needs at least 2 folds, got k={k}: set finetune.k_folds >= 2"
        )
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


class InputDataset(Dataset):
    """Model inputs under ``key`` (``text`` or ``features``) with optional float labels."""

    def __init__(
        self, key: str, inputs: list[str] | torch.Tensor, labels: np.ndarray | None = None
    ) -> None:
        self.key, self.inputs = key, inputs
        # BCE-with-logits wants float targets of the logits' shape: (n,) binary, (n, C) multilabel.
        self.labels = None if labels is None else _floats(labels)

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, Any]:
        item = {self.key: self.inputs[index]}
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
        """Tokenize a batch of items, padded to its longest text (with ``labels`` if any)."""
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


def take_inputs(inputs: ModelInputs, index: np.ndarray) -> ModelInputs:
    """The rows ``index`` of texts or of an array of vectors, in that order."""
    if isinstance(inputs, np.ndarray):
        return inputs[index]
    return [inputs[i] for i in index]


def check_mode(mode: str) -> None:
    """Raise :class:`ConfigError` unless ``mode`` is a fine-tuning mode (:data:`Mode`)."""
    if mode not in get_args(Mode):
        raise ConfigError(f"unknown fine-tuning mode {mode!r}: choose 'full' or 'head'")


def check_inputs(inputs: ModelInputs, mode: str, tokenizer: Any) -> None:
    """Raise :class:`ConfigError` when ``inputs`` cannot be read in fine-tuning ``mode``.

    ``full`` mode reads texts (``tokenizer`` required), ``head`` mode cached pooled vectors.
    """
    check_mode(mode)
    if mode == "head" and (not isinstance(inputs, np.ndarray) or inputs.ndim != 2):
        raise ConfigError(
            "a 'head' mode model reads cached pooled vectors (an (n, hidden) array), "
            "not texts: embed the texts first"
        )
    if mode == "full" and tokenizer is None:
        raise ConfigError("a 'full' mode model needs its tokenizer to read texts")


def make_dataset(inputs: ModelInputs, labels: np.ndarray | None, mode: str) -> Dataset:
    """Texts (``full`` mode) or cached pooled vectors (``head`` mode) with optional labels."""
    if mode == "head":  # an array already (check_inputs)
        return InputDataset("features", _floats(inputs), labels)
    return InputDataset("text", list(inputs), labels)


def _floats(values: Any) -> torch.Tensor:
    return torch.as_tensor(np.asarray(values), dtype=torch.float32)


def make_loader(
    inputs: ModelInputs,
    labels: np.ndarray | None,
    batch_size: int,
    *,
    mode: str,
    tokenizer: Any = None,
    max_length: int = 128,
    shuffle: bool = False,
    seed: int = 0,
    num_workers: int = 0,
) -> DataLoader:
    """The one way stage I builds a loader: for training, validation and prediction.

    ``inputs`` are texts (``full`` mode: tokenised per batch with ``tokenizer``, padded to the
    batch's longest, cut at ``max_length``) or ``(n, hidden)`` cached pooled vectors (``head``);
    ``labels`` None for prediction. ``shuffle`` reshuffles every epoch from a generator seeded by
    ``seed`` (never global state).

    Returns:
        A ``DataLoader`` of dicts: ``input_ids``, ``attention_mask``, ... (``full``) or
        ``features`` (``head``), plus ``labels`` when given.
    """
    check_inputs(inputs, mode, tokenizer)
    collate = TextCollator(tokenizer, max_length) if mode == "full" else None
    workers: dict[str, Any] = {}
    if num_workers > 0:
        # Spawned, persistent workers: forking a process that holds JAX state is unsafe.
        workers = {"persistent_workers": True, "multiprocessing_context": "spawn"}
    return DataLoader(
        make_dataset(inputs, labels, mode),
        batch_size=batch_size,
        shuffle=shuffle,
        generator=torch.Generator().manual_seed(seed),
        num_workers=num_workers,
        collate_fn=collate,
        **workers,
    )


class FoldDataModule(L.LightningDataModule):
    """One fold's fit and validation sets (and optional prediction set) as Lightning loaders.

    In ``full`` mode the inputs are texts, tokenised per batch with the encoder's tokenizer and
    padded to the batch's longest text; in ``head`` mode they are cached pooled vectors. The fit
    loader reshuffles every epoch from its own generator seeded by ``seed``, so a fold's order
    never depends on global random state or on other folds and seeds. Every loader comes from
    :func:`make_loader`.

    Args:
        fit_inputs: texts or ``(n, hidden)`` vectors the model is fitted on.
        fit_labels: their 0/1 labels, ``(n,)`` binary or ``(n, C)`` multilabel.
        val_inputs: validation texts or vectors (checkpoint choice, early stopping).
        val_labels: their labels.
        mode: ``full`` or ``head``.
        tokenizer: the encoder's (fast) tokenizer (``full`` mode).
        max_length: truncation length in tokens.
        batch_size: fit and validation batch size.
        seed: seed of the fit loader's shuffle.
        num_workers: loader worker processes; 0 (the default) loads in the main process, which
            is safe when JAX shares it; more use spawned, persistent workers.
        predict_inputs: inputs for :meth:`predict_dataloader` (e.g. the held-out fold).
        predict_batch_size: prediction batch size.
    """

    def __init__(
        self,
        fit_inputs: ModelInputs,
        fit_labels: np.ndarray,
        val_inputs: ModelInputs,
        val_labels: np.ndarray,
        *,
        mode: Mode = "full",
        tokenizer: Any = None,
        max_length: int = 128,
        batch_size: int = 32,
        seed: int = 0,
        num_workers: int = 0,
        predict_inputs: ModelInputs | None = None,
        predict_batch_size: int = PREDICT_BATCH_SIZE,
    ) -> None:
        super().__init__()
        for inputs in (fit_inputs, val_inputs, predict_inputs):
            if inputs is not None:
                check_inputs(inputs, mode, tokenizer)
        self.inputs: dict[str, ModelInputs | None] = {
            "fit": fit_inputs,
            "val": val_inputs,
            "predict": predict_inputs,
        }
        self.labels = {"fit": np.asarray(fit_labels), "val": np.asarray(val_labels)}
        self.mode, self.tokenizer, self.max_length = mode, tokenizer, max_length
        self.batch_size, self.predict_batch_size = batch_size, predict_batch_size
        self.seed, self.num_workers = seed, num_workers

    @classmethod
    def for_fold(
        cls,
        sample_inputs: ModelInputs,
        labels: np.ndarray,
        fit_index: np.ndarray,
        val_index: np.ndarray,
        *,
        mode: Mode,
        batch_size: int,
        tokenizer: Any = None,
        max_length: int = 128,
        seed: int = 0,
        num_workers: int = 0,
        predict_index: np.ndarray | None = None,
        predict_batch_size: int = PREDICT_BATCH_SIZE,
    ) -> FoldDataModule:
        """The DataModule of one fold of a training sample (binary or multilabel corpus).

        The indices are positions in ``sample_inputs`` (``val_index`` inside the train fold);
        ``seed`` seeds the fit loader's shuffle; ``predict_index`` (e.g. the test fold) feeds
        :meth:`predict_dataloader`.
        """
        labels = np.asarray(labels)
        predict = None if predict_index is None else take_inputs(sample_inputs, predict_index)
        return cls(
            take_inputs(sample_inputs, fit_index),
            labels[fit_index],
            take_inputs(sample_inputs, val_index),
            labels[val_index],
            mode=mode,
            tokenizer=tokenizer,
            max_length=max_length,
            batch_size=batch_size,
            seed=seed,
            num_workers=num_workers,
            predict_inputs=predict,
            predict_batch_size=predict_batch_size,
        )

    @property
    def n_labels(self) -> int:
        """Outputs the classifier needs: 1 (binary) or the number of topics."""
        labels = self.labels["fit"]
        return labels.shape[1] if labels.ndim == 2 else 1

    @property
    def feature_dim(self) -> int | None:
        """Size of the cached vectors (``head`` mode), else ``None``."""
        fit = self._split("fit")
        return fit.shape[1] if self.mode == "head" and isinstance(fit, np.ndarray) else None

    @property
    def n_fit_batches(self) -> int:
        """Batches per training epoch."""
        return math.ceil(len(self._split("fit")) / self.batch_size)

    def train_dataloader(self) -> DataLoader:
        """Fit batches, reshuffled every epoch (seeded)."""
        return self._loader("fit", self.batch_size, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        """Validation batches, in order."""
        return self._loader("val", self.batch_size)

    def predict_dataloader(self) -> DataLoader:
        """Unlabelled prediction batches, in order.

        Raises:
            ConfigError: when the DataModule was built without prediction inputs.
        """
        return self._loader("predict", self.predict_batch_size)

    def _split(self, name: str) -> ModelInputs:
        """The inputs of split ``name`` (``fit``, ``val`` or ``predict``)."""
        inputs = self.inputs[name]
        if inputs is None:
            raise ConfigError("this FoldDataModule has no prediction inputs: pass predict_inputs")
        return inputs

    def _loader(self, name: str, batch_size: int, shuffle: bool = False) -> DataLoader:
        return make_loader(
            self._split(name),
            self.labels.get(name),
            batch_size,
            mode=self.mode,
            tokenizer=self.tokenizer,
            max_length=self.max_length,
            shuffle=shuffle,
            seed=self.seed,
            num_workers=self.num_workers,
        )
