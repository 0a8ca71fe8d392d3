"""Issue 56, items 13 and 14: a missing ONNX package is one line with the checkout's install.

``pip install 'regbias[onnx]'`` named a distribution the project does not publish; with ``onnx``
missing (ONNX Runtime installed) torch's exporter raised a raw ``OnnxExporterError``. Both say
in one ``ConfigError`` which package is missing and README.md's install line,
``pip install -e ".[onnx]"`` from the checkout.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from regbias.embeddings.encoder import load_encoder
from regbias.errors import ConfigError
from tests.embeddings.test_encoders import tiny_spec

CHECKOUT_INSTALL = r'pip install -e "\.\[onnx\]"'


def _load(cache: Path) -> None:
    load_encoder(tiny_spec(backend="onnxruntime"), device="cpu", cache_dir=cache)


def test_without_onnxruntime_the_message_gives_the_checkouts_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` fails
    with pytest.raises(ConfigError, match=f"onnxruntime package.*{CHECKOUT_INSTALL}") as error:
        _load(tmp_path)
    assert "regbias[onnx]" not in str(error.value)
    assert "\n" not in str(error.value)


def test_without_onnx_the_export_is_one_line_not_an_exporter_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime")
    monkeypatch.setitem(sys.modules, "onnx", None)  # ONNX Runtime present, onnx missing
    with pytest.raises(ConfigError, match=f"the onnx package.*{CHECKOUT_INSTALL}") as error:
        _load(tmp_path)
    assert "\n" not in str(error.value)
    assert not list(tmp_path.glob("onnx/*/*.onnx*"))  # no partial export left behind


def test_the_exporters_own_missing_onnx_error_is_one_line_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where torch's exporter finds onnx missing itself (``Module onnx is not installed!``)."""
    pytest.importorskip("onnxruntime")

    def export(*args: object, **kwargs: object) -> None:
        try:
            raise ModuleNotFoundError("No module named 'onnx'")
        except ImportError as missing:
            raise torch.onnx.OnnxExporterError("Module onnx is not installed!") from missing

    monkeypatch.setattr(torch.onnx, "export", export)
    with pytest.raises(ConfigError, match=f"the onnx package.*{CHECKOUT_INSTALL}"):
        _load(tmp_path)
