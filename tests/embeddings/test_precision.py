"""``encoder.precision: bfloat16``: opt-in, its own cache identity, close to float32's vectors."""

from __future__ import annotations

import numpy as np
import pytest

from regbias.embeddings.encoder import load_encoder
from regbias.errors import ConfigError
from tests.embeddings.test_encoders import MINILM, spec, tiny_spec

#: Real-looking tweets of several lengths (MiniLM's vectors are compared on them).
TWEETS = [
    "just got back from the beach, sunburnt but happy",
    "why is the train late AGAIN",
    "can't believe the footy result last night #gutted",
    "new coffee place on the corner is amazing",
    "rain rain go away, come again another day",
    "exams next week and i have not started revising lol",
]


def test_float32_is_the_default_and_bfloat16_has_its_own_cache_identity() -> None:
    assert tiny_spec().precision == "float32"
    assert "precision" not in tiny_spec().identity  # every cached vector of record kept
    assert tiny_spec(precision="bfloat16").identity.endswith("#precision=bfloat16#padded")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"precision": "float16"}, r"unknown precision 'float16'; set encoder\.precision"),
        ({"precision": "bfloat16", "backend": "onnxruntime"}, "torch backend only"),
    ],
)
def test_a_bad_precision_is_one_config_error(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tiny_spec(**changes)


def test_bfloat16_vectors_are_float32_and_within_a_percent_of_float32s() -> None:
    exact = load_encoder(spec(MINILM), device="cpu")
    fast = load_encoder(spec(MINILM | {"precision": "bfloat16"}), device="cpu")
    a, b = exact.pooled(TWEETS), fast.pooled(TWEETS)
    assert b.dtype == np.float32 and b.shape == a.shape
    relative = np.linalg.norm(a - b, axis=1) / np.linalg.norm(a, axis=1)
    assert 0 < relative.max() < 0.02  # it ran in bfloat16, and stayed close
    cosine = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() > 0.999
    tokens = fast.token_embeddings(TWEETS[:2])
    assert all(t.dtype == np.float32 for t in tokens)
    np.testing.assert_array_equal(fast.pooled(TWEETS), b)  # deterministic
