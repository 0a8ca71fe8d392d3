"""Found beside the probes of issue 36: a number does not depend on what the cache held.

After a corrupt shard was quarantined and its texts re-embedded, the same config and seed
gave ``sinkhorn_short`` values 4.0e-7 relative apart: the re-embedded texts were batched with
other companions (a pass of other rows gives other float32 roundings). A batch now holds texts
of one length at a fixed number of rows, so a text's vector is the same bits however it is
embedded.
"""

from __future__ import annotations

import numpy as np
import pytest

from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.spec import EncoderSpec
from tests.conftest import packaged
from tests.faults.conftest import WORDS


@pytest.fixture(scope="module")
def encoder():
    return load_encoder(packaged(EncoderSpec, "encoder", "encoder=minilm_l6"), device="cpu")


def texts() -> list[str]:
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(WORDS, int(rng.integers(3, 12)))) + f" {i}" for i in range(120)]


def test_a_text_is_the_same_bits_alone_in_a_study_or_after_quarantine(encoder, tmp_path):
    study = texts()
    whole = embed_pooled(encoder, None, study)
    for part in (study[:1], study[7:9], study[::5]):
        np.testing.assert_array_equal(
            embed_pooled(encoder, None, part), whole[[study.index(t) for t in part]]
        )
    cache = EmbeddingCache(tmp_path)
    first = embed_pooled(encoder, cache, study[:60])  # the cache holds half of the study
    np.testing.assert_array_equal(first, whole[:60])
    np.testing.assert_array_equal(embed_pooled(encoder, cache, study), whole)
    (shard, *_) = sorted(tmp_path.glob("*/shard-*.data.npy"))
    rows = np.load(shard, mmap_mode="r+")
    rows[3:5] = 0.5  # a corrupt shard: quarantined, its texts embedded again
    rows.flush()
    del rows
    again = embed_pooled(encoder, EmbeddingCache(tmp_path), study)
    assert (shard.parent / "quarantine" / shard.name).exists()
    np.testing.assert_array_equal(again, whole)


def test_token_vectors_do_not_depend_on_their_companions(encoder):
    study = texts()
    whole = embed_tokens(encoder, None, study)
    alone = embed_tokens(encoder, None, study[10:13])
    for got, want in zip(alone, whole[10:13], strict=True):
        np.testing.assert_array_equal(got, want)
