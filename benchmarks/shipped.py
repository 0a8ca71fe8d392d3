"""What the benchmarks take from the package's shipped configs (not a benchmark itself)."""

from __future__ import annotations

from omegaconf import OmegaConf

from regbias.app.cli import CONFIG_DIR
from regbias.embeddings.spec import EncoderSpec
from regbias.settings_reader import build


def shipped_encoder(name: str = "minilm_l6") -> EncoderSpec:
    """The encoder ``conf/encoder/<name>.yaml`` describes, as ``encoder=<name>`` would load it."""
    config = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "encoder" / f"{name}.yaml"))
    return build(EncoderSpec, config, "encoder")
