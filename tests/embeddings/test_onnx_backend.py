"""``encoder.backend: onnxruntime``: exported once, checksummed, the same vectors as torch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.onnx_backend import TOLERANCE
from regbias.errors import ConfigError
from tests.embeddings.test_encoders import MINILM, TEXTS, spec, tiny_spec

pytest.importorskip("onnxruntime")


def _agree(spec_of, tmp_path: Path) -> tuple[float, float]:
    torch_encoder = load_encoder(spec_of(), device="cpu")
    onnx_encoder = load_encoder(spec_of(backend="onnxruntime"), device="cpu", cache_dir=tmp_path)
    tokens = [
        float(np.max(np.abs(a - b)))
        for a, b in zip(
            torch_encoder.token_embeddings(TEXTS), onnx_encoder.token_embeddings(TEXTS), strict=True
        )
    ]
    pooled = np.abs(torch_encoder.pooled(TEXTS) - onnx_encoder.pooled(TEXTS))
    return max(tokens), float(pooled.max())


def test_the_tiny_encoder_agrees_with_torch_and_is_exported_once(tmp_path: Path) -> None:
    tokens, pooled = _agree(tiny_spec, tmp_path)
    assert tokens <= TOLERANCE and pooled <= TOLERANCE
    (folder,) = (tmp_path / "onnx").iterdir()
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    load_encoder(tiny_spec(backend="onnxruntime"), device="cpu", cache_dir=tmp_path)
    assert (folder / "model.onnx").stat().st_mtime_ns == stamp  # loaded, not exported again
    assert json.loads((folder / "model.json").read_text())["sha256"]


def test_a_corrupt_export_is_exported_again(tmp_path: Path) -> None:
    load_encoder(tiny_spec(backend="onnxruntime"), device="cpu", cache_dir=tmp_path)
    (folder,) = (tmp_path / "onnx").iterdir()
    with (folder / "model.onnx").open("ab") as handle:
        handle.write(b"x")
    encoder = load_encoder(tiny_spec(backend="onnxruntime"), device="cpu", cache_dir=tmp_path)
    assert (folder / "model.onnx.corrupt").is_file()
    assert encoder.pooled(["rain again"]).shape == (1, encoder.hidden_size)


def test_minilm_agrees_with_torch_on_real_texts(tmp_path: Path) -> None:
    def minilm(**changes: object):
        return spec(MINILM | changes)

    tokens, pooled = _agree(minilm, tmp_path)
    assert tokens <= TOLERANCE and pooled <= TOLERANCE


def test_the_backend_has_its_own_cache_identity_and_a_clear_error() -> None:
    assert tiny_spec(backend="onnxruntime").identity != tiny_spec().identity
    with pytest.raises(ConfigError, match="unknown backend"):
        tiny_spec(backend="tensorrt")
    with pytest.raises(ConfigError, match=r"paths\.cache_dir"):
        load_encoder(tiny_spec(backend="onnxruntime"), device="cpu")
