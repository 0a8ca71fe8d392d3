"""Seeded draws: determinism, no overlap, and the size policy."""

from __future__ import annotations

import numpy as np
import pytest

from regbias.data.corpus import TextSet
from regbias.data.sampling import (
    common_size,
    draw_indices,
    long_text_passages,
    rng_for,
)
from regbias.errors import ConfigError, SampleSizeError


def textset(n: int, prefix: str = "t") -> TextSet:
    return TextSet([f"{prefix}{i}" for i in range(n)], np.zeros(n, dtype=np.int64))


def test_same_seed_same_draw_other_seed_other_draw():
    a = draw_indices("g", 1000, 50, rng_for(0, "x")).indices
    b = draw_indices("g", 1000, 50, rng_for(0, "x")).indices
    c = draw_indices("g", 1000, 50, rng_for(1, "x")).indices
    d = draw_indices("g", 1000, 50, rng_for(0, "y")).indices
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(a, d)


def test_draw_is_without_replacement():
    draw = draw_indices("g", 60, 60, rng_for(3, "x"))
    assert sorted(draw.indices.tolist()) == list(range(60))


def test_policy_error_names_group_and_sizes():
    with pytest.raises(SampleSizeError, match=r"group 'nz' has 10 texts but a draw asks for 20"):
        draw_indices("nz", 10, 20, rng_for(0), "error")


def test_policy_all_takes_whole_group_and_says_so():
    draw = draw_indices("nz", 10, 20, rng_for(0), "all")
    assert draw.whole_group and draw.size == 10 and draw.requested == 20


def test_unknown_policy():
    with pytest.raises(ConfigError, match=r"sampling\.policy"):
        draw_indices("g", 10, 5, rng_for(0), "some")


def test_long_text_passages_partition_distinct_texts_of_one_group():
    texts = [f"w{i}" for i in range(130)]
    passages, members = long_text_passages(texts, 12, 10, rng_for(0, "long"))
    assert len(passages) == 12
    for passage, m in zip(passages, members, strict=False):
        assert len(set(m.tolist())) == 10
        assert passage == " ".join(texts[i] for i in m)
    used = np.concatenate(members)
    assert len(set(used.tolist())) == 120  # no text in two passages of one draw


def test_long_text_needs_enough_distinct_texts_and_names_the_setting():
    with pytest.raises(SampleSizeError, match="only 3"):
        long_text_passages(["a", "b", "c"], 5, 10, rng_for(0))
    texts = [f"w{i}" for i in range(30)]
    with pytest.raises(SampleSizeError, match=r"need 50 texts.*distance.lda.passages_per_group"):
        long_text_passages(texts, 5, 10, rng_for(0), "za", "distance.lda.passages_per_group")


def test_common_size():
    groups = {"a": textset(100), "b": textset(35)}
    assert common_size(groups, 30, "error") == 30
    assert common_size(groups, 50, "all") == 35
    with pytest.raises(SampleSizeError, match="'b' has 35"):
        common_size(groups, 50, "error")
