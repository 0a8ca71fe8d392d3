"""Stage I's evaluation draws: seeded by (seed, group name) through the one RNG scheme."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from regbias.data.draws import evaluation_draws
from regbias.errors import SampleSizeError
from tests.conftest import packaged


def test_draws_keep_the_stream_of_the_recorded_results() -> None:
    # Results recorded before the move drew from default_rng([seed, crc32(group)]); rng_for
    # must give the same stream or every recorded per-model table changes.
    draws = evaluation_draws("nz", 50, 10, 3, seed=3, policy="error")
    legacy = np.random.default_rng([3, zlib.crc32(b"nz")])
    for draw in draws:
        assert np.array_equal(draw, np.sort(legacy.choice(50, size=10, replace=False)))


def test_draws_depend_on_the_group_name_and_seed_only() -> None:
    au = evaluation_draws("au", 40, 5, 4, seed=1, policy="error")
    assert [len(d) for d in au] == [5, 5, 5, 5]
    assert all(
        np.array_equal(a, b)
        for a, b in zip(au, evaluation_draws("au", 40, 5, 4, 1, "error"), strict=True)
    )
    assert not np.array_equal(au[0], evaluation_draws("ca", 40, 5, 4, 1, "error")[0])
    assert not np.array_equal(au[0], evaluation_draws("au", 40, 5, 4, 2, "error")[0])
    assert all(len(np.unique(d)) == 5 and np.all(np.diff(d) > 0) for d in au)


def test_whole_group_when_no_size_or_undersized_under_all() -> None:
    assert [d.tolist() for d in evaluation_draws("uk", 4, None, 3, 0, "error")] == [[0, 1, 2, 3]]
    with pytest.warns(RuntimeWarning, match="evaluated whole"):
        (whole,) = evaluation_draws("nz", 4, 10, 3, 0, "all")
    assert whole.tolist() == [0, 1, 2, 3]
    with pytest.raises(SampleSizeError, match="'nz' holds 4 texts"):
        evaluation_draws("nz", 4, 10, 3, 0, "error")


def test_matched_evaluation_draws_give_every_group_the_smallest_size():
    from regbias.data.corpus import TextSet
    from regbias.performance.settings import EvaluationSettings
    from regbias.performance.stage import evaluation_size

    groups = {
        g: TextSet([f"{g}{i}" for i in range(n)], np.zeros(n, dtype=np.int64))
        for g, n in {"us": 1000, "za": 250}.items()
    }
    matched = EvaluationSettings(
        design="draws", draw_size=1000, repetitions=30, seed=0, matched=True
    )
    assert evaluation_size(matched, groups, "all") == 250
    assert evaluation_size(matched, groups, "error") == 1000  # the draw then refuses ZA
    unmatched = EvaluationSettings(
        design="draws", draw_size=1000, repetitions=30, seed=0, matched=False
    )
    assert evaluation_size(unmatched, groups, "all") == 1000  # ZA scored whole once
    assert evaluation_size(matched, groups, "all") == evaluation_size(
        packaged(EvaluationSettings, "finetune.evaluation", draw_size=250, repetitions=30),
        groups,
        "all",
    )
