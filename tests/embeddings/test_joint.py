"""One forward pass gives a text's token cloud and its pooled vector, cached together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from regbias.data.draws import DistanceDraws
from regbias.distances.suite import run_distance_suite
from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import Encoder, load_encoder
from regbias.embeddings.joint import embed_jointly
from regbias.embeddings.spec import EncoderSpec
from tests.conftest import packaged

TOKEN_TEXTS = ["g'day mate", "eh", "cheers love", "howzit", "sweet as bro"]
POOLED_TEXTS = ["eh", "cheers love", "a passage of its own", "g'day mate"]


@pytest.fixture
def counted() -> tuple[Encoder, list[int]]:
    """The tiny encoder, counting the texts its model forwards."""
    encoder = load_encoder(
        packaged(EncoderSpec, "encoder", "encoder=tiny", max_length=16, pooling="mean"), "cpu"
    )
    rows: list[int] = []
    encoder.model.register_forward_hook(
        # Distinct rows: a pass is filled to a fixed row count with copies of its texts.
        lambda module, args, kwargs, output: rows.append(
            len(torch.unique(kwargs["input_ids"], dim=0))
        ),
        with_kwargs=True,
    )
    return encoder, rows


@pytest.mark.parametrize("padding", ["real", "max_length"])
def test_every_text_is_forwarded_once_for_both_outputs(counted, tmp_path: Path, padding):
    encoder, rows = counted
    cache = EmbeddingCache(tmp_path)
    joint = embed_jointly(encoder, cache, TOKEN_TEXTS, POOLED_TEXTS, padding=padding)
    assert sum(rows) == len(set(TOKEN_TEXTS) | set(POOLED_TEXTS))
    tokens = encoder.token_embeddings(TOKEN_TEXTS, padding=padding)
    pooled = encoder.pooled(POOLED_TEXTS)
    for text, expected in zip(TOKEN_TEXTS, tokens, strict=True):
        np.testing.assert_allclose(joint.tokens[text], expected, atol=1e-5)
    for text, expected in zip(POOLED_TEXTS, pooled, strict=True):
        np.testing.assert_allclose(joint.pooled[text], expected, atol=1e-5)
    rows.clear()
    again = EmbeddingCache(tmp_path)  # both kinds on disk: the token texts' pooled vectors too
    embed_pooled(encoder, again, TOKEN_TEXTS)
    embed_tokens(encoder, again, TOKEN_TEXTS, padding=padding)
    assert rows == [] and again.misses == 0


def test_without_a_cache_it_is_one_pass_too(counted):
    encoder, rows = counted
    joint = embed_jointly(encoder, None, TOKEN_TEXTS, POOLED_TEXTS)
    assert sum(rows) == len(set(TOKEN_TEXTS) | set(POOLED_TEXTS))
    assert set(joint.tokens) == set(TOKEN_TEXTS) and set(joint.pooled) == set(POOLED_TEXTS)


def test_the_distance_suite_forwards_each_drawn_text_once(counted, tmp_path: Path):
    from regbias.app.settings import read_settings
    from tests.conftest import compose_config

    settings = read_settings(compose_config("experiment=smoke"))
    encoder, rows = counted
    tweets = {g: [f"{g} tweet {i}" for i in range(6)] for g in ("au", "uk", "us")}
    draws = DistanceDraws(
        texts={"short": [tweets], "sentence": [tweets]},
        twins={},
        units={},
    )
    run_distance_suite(draws, encoder, EmbeddingCache(tmp_path), settings.distance)
    assert sum(rows) == 18


def test_the_first_versions_switch_forwards_token_and_pooled_texts_apart(counted, tmp_path: Path):
    """``encoder.one_pass=false`` (the regression test's): tokens, then each pooled kind."""
    from dataclasses import replace

    from regbias.app.settings import read_settings
    from tests.conftest import compose_config

    settings = read_settings(compose_config("experiment=smoke"))
    encoder, rows = counted
    tweets = {g: [f"{g} tweet {i}" for i in range(6)] for g in ("au", "uk", "us")}
    draws = DistanceDraws(texts={"short": [tweets], "sentence": [tweets]}, twins={}, units={})
    joint = run_distance_suite(draws, encoder, EmbeddingCache(tmp_path / "one"), settings.distance)
    rows.clear()
    encoder.spec = replace(encoder.spec, one_pass=False)
    apart = run_distance_suite(draws, encoder, EmbeddingCache(tmp_path / "two"), settings.distance)
    assert sum(rows) == 2 * 18  # every text forwarded for its tokens, and again pooled
    assert apart.matrices.keys() == joint.matrices.keys()
    for name, matrix in apart.matrices.items():
        np.testing.assert_allclose(matrix.mean, joint.matrices[name].mean, rtol=1e-4, atol=1e-6)
