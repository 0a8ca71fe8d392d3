"""What an encoder is: the settings common to every source, and the contract a source fulfils.

An ``encoder`` config group names its source class with Hydra's ``_target_`` (see
:mod:`regbias.embeddings.sources`); the settings converter builds that class from the group's
other keys. :class:`EncoderSpec` is abstract, so a group without a ``_target_`` is an error that
says what to set.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import torch

from regbias.embeddings.pooling import POOLINGS, Pooling
from regbias.errors import ConfigError

__all__ = ["BACKENDS", "PRECISIONS", "EncoderSpec", "LoadedModel"]

#: The encoder's backends: ``torch`` (the model as transformers builds it) or ``onnxruntime``.
BACKENDS = ("torch", "onnxruntime")
#: The precisions of the encoder's products: ``float32`` (every number of record) or the
#: opt-in ``bfloat16`` (torch autocast: products in bfloat16, norms and softmax in float32).
PRECISIONS = ("float32", "bfloat16")

#: What a source loads: the tokenizer, the model, and whether it has a trained pooler.
LoadedModel = tuple[Any, torch.nn.Module, bool]


@dataclass(frozen=True, kw_only=True)
class EncoderSpec(abc.ABC):
    """Where an encoder's weights come from and how it embeds: one subclass per source.

    Attributes:
        source: the source's short name (``package``, ``path``, ``hub``, ``random``); it
            starts the spec's :attr:`identity`.
        name: label of the encoder in configs and logs (``minilm_l6``, ``bert_small``, ...).
        revision: the weights' revision (a hub branch, tag or commit; the installed version of
            a package; a label for a random encoder); ``None``: the source's default.
        max_length: tokens per text, ``[CLS]`` and ``[SEP]`` included; longer texts are cut.
        pooling: vector of :meth:`regbias.embeddings.encoder.Encoder.pooled`: the model's
            ``pooler`` output (the paper's "pooled output"), the last layer's ``cls`` vector,
            or the attention-masked ``mean``.
    """

    source: ClassVar[str]

    name: str
    revision: str | None
    max_length: int
    pooling: Pooling
    #: On a CPU, passes sized to keep the activations in cache (1.6-1.9x faster, float
    #: rounding of the vectors changes by ~1e-7); false: passes of up to 64 x max_length
    #: tokens, the first version's. Not in the encoder YAMLs: ``+encoder.cache_sized_passes``.
    cache_sized_passes: bool = True
    #: A job's token clouds and pooled vectors of the same texts from one forward pass (a
    #: text's vectors may change by ~1e-7 with the texts that share its pass); false: token
    #: texts, then each pooled kind's texts, in passes of their own, the first version's.
    #: Not in the encoder YAMLs: ``+encoder.one_pass``.
    one_pass: bool = True
    #: A pass holds texts of one padded length (:func:`regbias.embeddings.encoder.padded_length`:
    #: the token length rounded up to 3 significant bits, at most 1/8 padding), so few texts
    #: fill few passes; vectors change by float rounding (~1e-7) and get their own cache
    #: identity. False: a pass per exact token length, the earlier layout. Not in the encoder
    #: YAMLs: ``+encoder.length_buckets=false``.
    length_buckets: bool = True
    #: ``torch`` (the model as transformers builds it) or ``onnxruntime`` (exported once into
    #: the cache, checksummed, run by ONNX Runtime on the CPU; vectors within 1e-4 of torch's:
    #: :mod:`regbias.embeddings.onnx_backend`). Not in the encoder YAMLs:
    #: ``+encoder.backend=onnxruntime``.
    backend: str = "torch"
    #: ``float32`` or the opt-in ``bfloat16``: the dense products under torch's autocast
    #: (1.4-1.8x faster measured on a CPU with AVX512-BF16), MiniLM's vectors about 0.5% off
    #: float32's; its effect on a study's outputs: docs/scale.md. Not in the encoder YAMLs:
    #: ``+encoder.precision=bfloat16``; vectors get their own cache identity.
    precision: str = "float32"

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise ConfigError(
                f"encoder {self.name!r}: unknown pooling {self.pooling!r}; set encoder.pooling "
                f"to one of {', '.join(POOLINGS)}"
            )
        if self.backend not in BACKENDS:
            raise ConfigError(
                f"encoder {self.name!r}: unknown backend {self.backend!r}; set encoder.backend "
                "to torch or onnxruntime"
            )
        if self.precision not in PRECISIONS:
            raise ConfigError(
                f"encoder {self.name!r}: unknown precision {self.precision!r}; set "
                "encoder.precision to float32 or bfloat16"
            )
        if self.precision != "float32" and self.backend != "torch":
            raise ConfigError(
                f"encoder {self.name!r}: precision {self.precision} runs with the torch backend "
                "only; drop encoder.backend or set encoder.precision=float32"
            )
        if not isinstance(self.max_length, int) or self.max_length < 2:
            raise ConfigError(
                f"encoder {self.name!r}: max_length must be an integer >= 2, "
                f"got {self.max_length!r}"
            )

    @property
    def random_weights(self) -> bool:
        """Whether the weights are drawn at random (a toy or a control), not pre-trained."""
        return False

    @cached_property
    def identity(self) -> str:
        """A stable string naming the embeddings this spec produces, for cache keys.

        Random weights start it with ``random:`` (a control: ``random:<source>:...``).
        """
        control = "random:" if self.random_weights and self.source != "random" else ""
        backend = "" if self.backend == "torch" else f"#backend={self.backend}"
        precision = "" if self.precision == "float32" else f"#precision={self.precision}"
        padded = "#padded" if self.length_buckets else ""
        return (
            f"{control}{self.source}:{self.fingerprint()}#max_length={self.max_length}"
            f"{backend}{precision}{padded}"
        )

    @property
    def recorded_revision(self) -> str:
        """The revision a run records (params, tags, the report): the configured one.

        A source whose configured revision cannot say what its weights are records what can
        (a local folder: its content hash).
        """
        return str(self.revision)

    @abc.abstractmethod
    def fingerprint(self) -> str:
        """What decides the weights, as ``location@revision``: the middle of :attr:`identity`."""

    def check_available(self) -> None:
        """Check what loading needs beyond the settings (installed packages), without loading.

        Reading the settings never needs the model; a job calls this before any run so that a
        missing piece stops it in one line. The default: nothing to check.

        Raises:
            ConfigError: a package the model ships in is missing; the message says what to run.
        """
        return  # random, hub, folder: loading says what is missing; a package is checked on reading

    @abc.abstractmethod
    def load_model(self) -> LoadedModel:
        """Load the tokenizer and the model (on the CPU, as the library builds them).

        Raises:
            ConfigError: the weights cannot be found or loaded; the message says what to set.
        """
