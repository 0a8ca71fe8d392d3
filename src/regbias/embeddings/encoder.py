"""Pre-trained encoders: embed texts as token vectors or pooled vectors.

Stages II and III embed texts with the *pre-trained* encoder (never a fine-tuned one). An
:class:`~regbias.embeddings.spec.EncoderSpec` (one class per source, in
:mod:`regbias.embeddings.sources`) says where the weights come from; :func:`load_encoder` turns
it into an :class:`Encoder` whose :meth:`Encoder.token_embeddings` gives the last hidden layer
per text and :meth:`Encoder.pooled` one vector per text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import torch

from regbias.embeddings.pooling import pool
from regbias.embeddings.spec import EncoderSpec
from regbias.errors import ConfigError, RegbiasError
from regbias.interrupt import check_stop

Padding = Literal["real", "max_length"]

_PADDINGS = get_args(Padding)
#: The most rows of one forward pass (texts of one length; :func:`batch_rows`).
BATCH_ROWS = 32
_PROGRESS_MIN_BATCHES = 8
#: On a CPU, the feed-forward activations one pass may hold (floats): a pass of
#: ``CPU_PASS_FLOATS / intermediate_size`` tokens (1,024 for MiniLM, 512 for mpnet) keeps them
#: in cache. Measured on 2 cores for 1,000 tweets: MiniLM 338 texts/s at 8,192 tokens a pass,
#: 636 at 1,024; mpnet 41 at 8,192, 95 at 512 (``benchmarks/embedding_speed.py``).
CPU_PASS_FLOATS = 1024 * 1536
_INPUTS = ("input_ids", "token_type_ids", "attention_mask")


class Encoder:
    """A loaded pre-trained encoder in evaluation mode.

    Attributes:
        spec: the spec it was loaded from.
        tokenizer: its (fast) tokenizer.
        model: the transformers model, in ``eval()`` mode on ``device`` (or its ONNX Runtime
            session: :class:`regbias.embeddings.onnx_backend.OnnxModel`).
        device: the torch device the model runs on.
        hidden_size: dimension of its token and pooled vectors.
        has_pooler: whether the model has a pooler whose weights were loaded (not initialised
            at random because the checkpoint lacked them).
    """

    def __init__(
        self, spec: EncoderSpec, tokenizer: Any, model: Any, device: torch.device, has_pooler: bool
    ) -> None:
        self.spec = spec
        self.tokenizer = tokenizer
        self.model = model.to(device).eval()
        self.device = device
        config: Any = model.config  # a transformers PretrainedConfig
        self.hidden_size = int(config.hidden_size)
        self.has_pooler = has_pooler
        self._inputs = set(getattr(tokenizer, "model_input_names", _INPUTS)) | {"input_ids"}

    def __repr__(self) -> str:
        return f"Encoder({self.spec.identity!r}, device={self.device})"

    def token_embeddings(
        self, texts: Sequence[str], *, padding: Padding = "real", batch_size: int = 64
    ) -> list[np.ndarray]:
        """Last-hidden-layer token vectors of each text.

        Args:
            texts: texts to embed.
            padding: ``real`` keeps the real tokens of each text (attention mask 1, ``[CLS]``
                and ``[SEP]`` included); ``max_length`` pads every text to ``max_length`` and
                keeps all positions, ``[PAD]`` outputs included, as the paper's code did.
            batch_size: texts per forward pass at ``max_length`` tokens; shorter texts share
                a pass within the same token budget (see :func:`plan_batches`), which on a
                CPU is capped to stay in cache (:data:`CPU_PASS_FLOATS`).

        Returns:
            Per text, in input order, a float32 array ``(n_tokens, hidden_size)``.

        Raises:
            RegbiasError: the model produced NaN or infinite values.
        """
        tokens, _ = self._forward(texts, padding, batch_size, pooled=False)
        return tokens

    def pooled(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """One vector per text, by the spec's ``pooling``.

        ``batch_size`` as in :meth:`token_embeddings`.

        Returns:
            Float32 array ``(len(texts), hidden_size)`` in input order.

        Raises:
            ConfigError: ``pooling="pooler"`` but the model has no (loaded) pooler.
            RegbiasError: the model produced NaN or infinite values.
        """
        self._check_pooling()
        _, vectors = self._forward(texts, "real", batch_size, tokens=False)
        return vectors

    def embed(
        self, texts: Sequence[str], *, padding: Padding = "real", batch_size: int = 64
    ) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Token vectors and pooled vectors of each text from one forward pass.

        ``padding`` and ``batch_size`` as in :meth:`token_embeddings`; the pooled vectors use the
        real tokens either way.

        Returns:
            What :meth:`token_embeddings` and :meth:`pooled` return, the latter None when the
            spec's pooling is ``pooler`` and the model has none.

        Raises:
            RegbiasError: the model produced NaN or infinite values.
        """
        can_pool = not (self.spec.pooling == "pooler" and not self.has_pooler)
        return self._forward(texts, padding, batch_size, pooled=can_pool)

    def _check_pooling(self) -> None:
        if self.spec.pooling == "pooler" and not self.has_pooler:
            raise ConfigError(
                f"encoder {self.spec.name!r} has no trained pooler layer; "
                "set encoder.pooling=mean (or encoder.pooling=cls)"
            )

    def _forward(
        self,
        texts: Sequence[str],
        padding: Padding,
        batch_size: int,
        *,
        tokens: bool = True,
        pooled: bool = True,
    ) -> tuple[list[np.ndarray], Any]:
        """Token vectors (``tokens``) and pooled vectors (``pooled``) of one pass per batch."""
        if padding not in _PADDINGS:
            raise ConfigError(f"unknown padding {padding!r}; use one of {_PADDINGS}")
        results: list[np.ndarray] = [np.empty(0)] * (len(texts) if tokens else 0)
        vectors = np.empty((len(texts), self.hidden_size), np.float32) if pooled else None
        pad_to = self.spec.max_length if padding == "max_length" else None
        for index, batch in self._batches(texts, batch_size, pad_to):
            with self._precision():
                output = self.model(**batch)
            chosen = [texts[i] for i in index]
            if vectors is not None:
                real = batch["attention_mask"]
                pooled_batch = pool(output, real, self.spec.pooling)[: len(index)]
                _check_finite(pooled_batch, None, chosen)
                vectors[index] = pooled_batch.float().cpu().numpy()
            if tokens:
                n = len(index)  # the rows past it fill the pass (_batches)
                real = batch["attention_mask"][:n]
                _keep_tokens(output.last_hidden_state[:n], real, padding, chosen, index, results)
        return results, vectors

    def _precision(self) -> contextlib.AbstractContextManager[object]:
        """The spec's precision around a forward pass: nothing for float32, else autocast."""
        if self.spec.precision == "float32":
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=getattr(torch, self.spec.precision))

    def _token_budget(self, batch_size: int) -> int:
        """Padded tokens a pass may take.

        On a GPU (or without the spec's ``cache_sized_passes``), ``batch_size`` texts at
        ``max_length``; on a CPU no more than keeps the feed-forward activations in cache
        (:data:`CPU_PASS_FLOATS`).
        """
        budget = batch_size * self.spec.max_length
        if self.device.type != "cpu" or not self.spec.cache_sized_passes:
            return budget
        config: Any = self.model.config
        intermediate = int(getattr(config, "intermediate_size", 4 * self.hidden_size))
        return max(1, min(budget, CPU_PASS_FLOATS // intermediate))

    def _width(self, length: int) -> int:
        """The padded length of a pass of texts of ``length`` tokens (the spec's layout)."""
        if not self.spec.length_buckets:
            return length
        return min(padded_length(length), max(length, self.spec.max_length))

    def _batches(
        self, texts: Sequence[str], batch_size: int, pad_to: int | None
    ) -> Iterator[tuple[list[int], dict[str, torch.Tensor]]]:
        """Batches of one padded length (:func:`plan_batches`), each at its length's rows.

        A batch with fewer texts is filled with copies of its first (their outputs unused):
        a text's pass has the same shape whichever texts it is embedded with.
        """
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if not texts:
            return
        encoded = self.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.spec.max_length,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]
        widths = [pad_to or self._width(len(ids)) for ids in encoded]
        budget = self._token_budget(batch_size)
        plan = plan_batches(widths, budget)
        with torch.inference_mode():
            for index in _progress(plan, f"embedding {len(texts)} texts"):
                check_stop()  # a safe point between forward passes
                rows = [encoded[i] for i in index]
                width = widths[index[0]]
                rows += [rows[0]] * (batch_rows(width, budget) - len(rows))
                batch = _pad(rows, self.tokenizer.pad_token_id, width)
                yield (
                    index,
                    {
                        name: tensor.to(self.device)
                        for name, tensor in batch.items()
                        if name in self._inputs  # MPNet takes no token_type_ids
                    },
                )


def _keep_tokens(
    hidden: torch.Tensor,
    real: torch.Tensor,
    padding: Padding,
    texts: list[str],
    index: list[int],
    results: list[np.ndarray],
) -> None:
    """Put each text's token vectors of one batch (its ``real`` tokens, or all) into ``results``."""
    mask = real if padding == "real" else torch.ones_like(real)
    _check_finite(hidden, mask, texts)
    values = hidden.float().cpu().numpy()
    lengths = mask.sum(dim=1).cpu().numpy()
    for row, text_index in enumerate(index):
        results[text_index] = values[row, : lengths[row]].copy()


def plan_batches(lengths: Sequence[int], token_budget: int) -> list[list[int]]:
    """Group texts into batches of one length each, that each fit a padded-token budget.

    A text longer than ``token_budget`` (padded tokens per batch) still gets its own batch.

    A batch holds texts of one token length only and at most :func:`batch_rows` of them, and
    is run at exactly that many rows (:meth:`Encoder._batches` fills the rest with copies), so
    every pass of a text has the same shape whatever other texts are embedded with it: its
    vector is the same bits whether it is embedded with the whole study or re-embedded alone
    (a corrupt cache shard's texts). Longest texts come first (a batch too big for memory
    fails at once, not at the end); with the budget ``batch_size * max_length`` no batch
    needs more memory than ``batch_size`` texts padded to ``max_length``, and short texts
    (tweets) share one forward pass in large numbers, which keeps the products efficient.

    Returns:
        Batches of text indices, longest texts first, each of one length.
    """
    by_length: dict[int, list[int]] = {}
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        by_length.setdefault(lengths[i], []).append(i)
    batches: list[list[int]] = []
    for length, members in by_length.items():
        rows = batch_rows(length, token_budget)
        batches += [members[k : k + rows] for k in range(0, len(members), rows)]
    return batches


def padded_length(length: int) -> int:
    """``length`` rounded up to 3 significant bits: a pass's width, a function of the text alone.

    Up to 15 tokens exact, then 8 widths a doubling (16, 18, ..., 30, 32, 36, ...), so a text
    is padded by less than an eighth of its length. Texts of nearby lengths share passes: a few
    texts fill few passes with filler copies (:meth:`Encoder._batches`), while a text's pass
    still depends on nothing but the text.
    """
    step = 1 << max(0, length.bit_length() - 4)
    return -(-length // step) * step


def batch_rows(length: int, token_budget: int) -> int:
    """The rows every batch of texts of ``length`` tokens runs at: a function of both alone.

    At most :data:`BATCH_ROWS` rows, so a call with few texts of a length (the test of
    record's misses, a quarantined shard's texts) pays for few filler rows.
    """
    return max(1, min(BATCH_ROWS, token_budget // max(1, length)))


def _pad(sequences: list[list[int]], pad_id: int, pad_to: int | None) -> dict[str, torch.Tensor]:
    """Right-pad token id lists into ``input_ids``, ``attention_mask``, ``token_type_ids``."""
    width = pad_to or max(len(sequence) for sequence in sequences)
    input_ids = np.full((len(sequences), width), pad_id, dtype=np.int64)
    attention_mask = np.zeros((len(sequences), width), dtype=np.int64)
    for row, sequence in enumerate(sequences):
        input_ids[row, : len(sequence)] = sequence
        attention_mask[row, : len(sequence)] = 1
    return {
        "input_ids": torch.from_numpy(input_ids),
        "attention_mask": torch.from_numpy(attention_mask),
        "token_type_ids": torch.zeros((len(sequences), width), dtype=torch.long),
    }


def _check_finite(values: torch.Tensor, mask: torch.Tensor | None, texts: list[str]) -> None:
    """Raise if any (masked-in) output of a batch is NaN or infinite, naming the texts."""
    finite = torch.isfinite(values)
    while finite.dim() > (2 if mask is not None else 1):
        finite = finite.all(dim=-1)
    if mask is not None:
        finite = (finite | (mask == 0)).all(dim=1)
    bad = (~finite).nonzero().flatten().tolist()
    if bad:
        shown = "; ".join(repr(texts[i][:60]) for i in bad[:3])
        raise RegbiasError(
            f"the encoder produced NaN or infinite values for {len(bad)} text(s), e.g. {shown}; "
            "check the model weights and dtype (half precision overflows on long texts)"
        )


def _progress(items: list[list[int]], description: str) -> Iterator[list[int]]:
    """``items`` with progress (a bar on a terminal, plain lines elsewhere) when they are many."""
    if len(items) < _PROGRESS_MIN_BATCHES:
        return iter(items)
    from regbias.console import progress_bar

    return iter(progress_bar(items, desc=description, unit="batch", leave=False))


def load_encoder(
    spec: EncoderSpec, device: str = "auto", cache_dir: str | Path | None = None
) -> Encoder:
    """Load the tokenizer and model a spec names (see its source's ``load_model``).

    ``device`` ``auto`` is CUDA when available; ``backend: onnxruntime`` keeps its export in
    ``cache_dir``.

    Returns:
        The encoder, in evaluation mode on ``device``.

    Raises:
        ConfigError: the folder lacks weights, tokenizer or config, the package is not
            installed, or a hub model is not reachable.
    """
    torch_device = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    )
    tokenizer, torch_model, has_pooler = spec.load_model()
    model: Any = torch_model
    if spec.backend == "onnxruntime":
        from regbias.embeddings.onnx_backend import onnx_model

        if cache_dir is None:
            raise ConfigError("encoder.backend=onnxruntime needs paths.cache_dir for its export")
        names = set(getattr(tokenizer, "model_input_names", _INPUTS)) | {"input_ids"}
        model = onnx_model(model.eval(), spec, Path(cache_dir), names, has_pooler)
    return Encoder(spec, tokenizer, model, torch_device, has_pooler)
