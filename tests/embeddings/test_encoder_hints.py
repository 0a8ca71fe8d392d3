"""Encoder errors: an unreachable hub fails in seconds, and the hint it gives works as written."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.hub import path_hint
from regbias.embeddings.spec import EncoderSpec
from regbias.errors import ConfigError
from regbias.settings_reader import build
from tests.conftest import compose_config, packaged


@pytest.fixture
def no_hub(monkeypatch, tmp_path):
    """A hub endpoint where nothing listens, and an empty local hub cache."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def _hub_error() -> str:
    cfg = compose_config("encoder=bert_small")
    start = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        load_encoder(
            build(EncoderSpec, OmegaConf.to_container(cfg.encoder), "encoder"), device="cpu"
        )
    assert time.perf_counter() - start < 10  # not a minute of retries
    return str(caught.value)


def test_unreachable_hub_fails_fast_in_one_line(no_hub):
    message = _hub_error()
    assert "\n" not in message
    assert "not reachable" in message and "google/bert_uncased_L-4_H-512_A-8" in message
    assert f"`{path_hint('bert_small')}`" in message


def test_the_hint_works_as_written(no_hub, tmp_path: Path):
    hint = re.search(r"run with `([^`]+)`", _hub_error()).group(1)
    folder = tmp_path / "bert_small"
    tokenizer, model, _ = packaged(EncoderSpec, "encoder", "encoder=tiny").load_model()
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    overrides = shlex.split(hint.replace("DIR", str(folder)))  # as the shell passes them
    cfg = compose_config(*overrides)
    encoder = load_encoder(
        build(EncoderSpec, OmegaConf.to_container(cfg.encoder), "encoder"), device="cpu"
    )
    assert encoder.spec.source == "path"
    # The preset's other settings stay.
    assert (encoder.spec.name, encoder.spec.max_length, encoder.spec.pooling) == (
        "bert_small",
        128,
        "pooler",
    )
    assert encoder.pooled(["hello there"]).shape == (1, encoder.hidden_size)


def test_config_comment_hint_is_an_override():
    encoders = Path(__file__).parents[2] / "conf/encoder"
    comment = (encoders / "bert_small.yaml").read_text()
    assert "'encoder=[bert_small,local]' encoder.location=" in comment
    assert "'encoder=[bert_small,local]' encoder.location=" in (encoders / "local.yaml").read_text()
