"""ONNX Runtime as an encoder backend (``+encoder.backend=onnxruntime``).

The loaded torch model is exported once per encoder identity (source, weights, revision,
``max_length``) into ``<cache_dir>/onnx/<name>-<hash>/model.onnx``, with ``model.json``
beside it holding the file's SHA-256; a later load verifies the checksum (a file that fails
is moved aside and exported again). The session runs with all of ONNX Runtime's graph
optimisations on the CPU, and :class:`OnnxModel` answers the calls the encoder makes of a
torch model: ``model(**batch)`` gives ``last_hidden_state`` (and ``pooler_output`` where the
model has one) as torch tensors.

Measured against torch on real tweets (``benchmarks/embedding_speed.py --backends``): the
vectors agree within the tolerance :data:`TOLERANCE` (largest absolute difference of a
real token's last hidden state; MiniLM and mpnet stay near 1e-5).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

from regbias.data.fingerprint import file_sha256
from regbias.embeddings.spec import EncoderSpec
from regbias.errors import ConfigError

log = logging.getLogger(__name__)

#: Largest absolute difference allowed between the backends' last hidden states (float32).
TOLERANCE = 1e-4
_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: How this checkout installs the backend's packages (README.md's install section); the
#: project is installed from its checkout, not published under a name pip could find.
INSTALL = 'pip install -e ".[onnx]" (in the regbias checkout)'


def _missing(package: str) -> ConfigError:
    """One line: the backend needs ``package``, and how to install it."""
    return ConfigError(
        f"encoder.backend=onnxruntime needs the {package} package, which is not installed: "
        f"{INSTALL}, or set encoder.backend=torch"
    )


class _Traced(torch.nn.Module):
    """The model with positional inputs and tuple outputs, as the exporter traces it."""

    def __init__(self, model: torch.nn.Module, inputs: tuple[str, ...], pooler: bool) -> None:
        super().__init__()
        self.model = model
        self.inputs = inputs
        self.pooler = pooler

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        output = self.model(**dict(zip(self.inputs, tensors, strict=True)))
        if self.pooler:
            return output.last_hidden_state, output.pooler_output
        return (output.last_hidden_state,)


class OnnxModel:
    """An exported encoder in an ONNX Runtime session, called like the torch model.

    Attributes:
        config: the torch model's config (hidden and intermediate sizes).
        path: the ``model.onnx`` it runs.
    """

    def __init__(self, session: Any, config: Any, path: Path, inputs: tuple[str, ...]) -> None:
        self.session = session
        self.config = config
        self.path = path
        self._inputs = inputs
        self._outputs = [o.name for o in session.get_outputs()]

    def to(self, device: torch.device | str) -> OnnxModel:
        """The CPU is the only device of this backend."""
        if torch.device(device).type != "cpu":
            raise ConfigError(
                "encoder.backend=onnxruntime runs on the CPU only; set encoder.backend=torch "
                "for a GPU (or trainer.accelerator=cpu)"
            )
        return self

    def eval(self) -> OnnxModel:
        """Inference only: nothing to switch."""
        return self

    def __call__(self, **batch: torch.Tensor) -> types.SimpleNamespace:
        """``last_hidden_state`` (and ``pooler_output``) of one padded batch."""
        feed = {name: batch[name].cpu().numpy().astype(np.int64) for name in self._inputs}
        values = self.session.run(self._outputs, feed)
        found = {name: torch.from_numpy(v) for name, v in zip(self._outputs, values, strict=True)}
        return types.SimpleNamespace(
            last_hidden_state=found["last_hidden_state"], pooler_output=found.get("pooler_output")
        )


def _export(model: torch.nn.Module, inputs: tuple[str, ...], pooler: bool, target: Path) -> None:
    """Trace ``model`` into ``target`` (written beside it first, then renamed).

    Raises:
        ConfigError: the ``onnx`` package, which torch's exporter needs, is not installed.
    """
    try:
        import onnx  # noqa: F401  (torch's exporter imports it midway and fails in its words)
    except ImportError:
        raise _missing("onnx") from None
    sample = tuple(torch.ones((2, 8), dtype=torch.long) for _ in inputs)
    outputs = ["last_hidden_state", *(["pooler_output"] if pooler else [])]
    axes = {name: {0: "batch", 1: "tokens"} for name in (*inputs, "last_hidden_state")}
    if pooler:
        axes["pooler_output"] = {0: "batch"}
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        with torch.inference_mode(False), torch.no_grad():
            torch.onnx.export(
                _Traced(model, inputs, pooler).eval(),
                sample,
                str(partial),
                input_names=list(inputs),
                output_names=outputs,
                dynamic_axes=axes,
                opset_version=_OPSET,
                dynamo=False,
            )
    except torch.onnx.OnnxExporterError as error:
        if isinstance(error.__cause__, ImportError):  # "Module onnx is not installed!"
            raise _missing("onnx") from error
        raise
    partial.replace(target)


def onnx_model(
    model: torch.nn.Module,
    spec: EncoderSpec,
    cache_dir: Path,
    input_names: set[str],
    has_pooler: bool,
    threads: int | None = None,
) -> OnnxModel:
    """The model exported once into the cache (checksummed) and loaded in ONNX Runtime.

    ``input_names`` are the inputs the tokenizer gives (MPNet takes no ``token_type_ids``); a
    trained pooler is exported as ``pooler_output``; ``threads`` None: torch's.

    Raises:
        ConfigError: onnxruntime (or onnx, to export) is not installed: one line, with the
            checkout's install command.
    """
    try:
        import onnxruntime
    except ImportError:
        raise _missing("onnxruntime") from None
    key = hashlib.sha256(f"{spec.identity}|opset={_OPSET}".encode()).hexdigest()[:16]
    folder = Path(cache_dir) / "onnx" / f"{spec.name}-{key}"
    target, meta = folder / "model.onnx", folder / "model.json"
    inputs = tuple(name for name in _INPUTS if name in input_names)
    if target.is_file() and meta.is_file():
        recorded = json.loads(meta.read_text()).get("sha256")
        if recorded != file_sha256(target):
            log.warning("the ONNX export %s fails its checksum: exported again", target)
            target.replace(target.with_suffix(".onnx.corrupt"))
    if not (target.is_file() and meta.is_file()):
        folder.mkdir(parents=True, exist_ok=True)
        log.info("exporting %s to ONNX (once, into %s)", spec.name, folder)
        _export(model, inputs, has_pooler, target)
        record = {"identity": spec.identity, "opset": _OPSET, "inputs": list(inputs)}
        record.update(sha256=file_sha256(target), torch=torch.__version__)
        meta.write_text(json.dumps(record, indent=1))
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads or torch.get_num_threads()
    session = onnxruntime.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])
    return OnnxModel(session, model.config, target, inputs)
