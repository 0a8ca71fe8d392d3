"""What the benchmarks take from the package's shipped configs (not a benchmark itself)."""

from __future__ import annotations

from typing import Any, TypeVar

from omegaconf import OmegaConf

from regbias.config_files import CONFIG_DIR
from regbias.embeddings.spec import EncoderSpec
from regbias.settings_reader import build, handed_down

T = TypeVar("T")


def shipped_encoder(name: str = "minilm_l6") -> EncoderSpec:
    """The encoder ``conf/encoder/<name>.yaml`` describes, as ``encoder=<name>`` would load it."""
    config = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "encoder" / f"{name}.yaml"))
    return build(EncoderSpec, config, "encoder")


def shipped_analysis(kind: type[T], group: str, **changes: Any) -> T:
    """``kind`` built from ``analysis.<group>`` of ``conf/analysis/default.yaml``, with ``changes``.

    For the groups that interpolate nothing (``tests.embedding``, ``power``); what the
    analysis group hands down (``analysis.seed``) is the file's too.
    """
    analysis = OmegaConf.load(CONFIG_DIR / "analysis" / "default.yaml")
    values = OmegaConf.to_container(OmegaConf.select(analysis, group), resolve=True)
    assert isinstance(values, dict)
    key = f"analysis.{group}"
    handed = handed_down({"analysis": OmegaConf.to_container(analysis, resolve=False)}, key)
    return build(kind, {**values, **changes}, key, handed)
