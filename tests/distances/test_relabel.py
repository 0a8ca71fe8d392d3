"""Joint relabellings: text keys, splits, and the one permutation p of a whole sweep."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from regbias.distances.relabel import NullSums, joint_p_values, side_masks, text_keys, unit_keys


def test_a_text_has_the_same_key_wherever_it_is_drawn():
    one = text_keys(["x", "y", "z"], seed=3, n_relabellings=5)
    two = text_keys(["z", "x"], seed=3, n_relabellings=5)
    assert one.shape == (5, 3) and ((one >= 0) & (one < 1)).all()
    assert np.array_equal(one[:, 0], two[:, 1]) and np.array_equal(one[:, 2], two[:, 0])
    assert not np.array_equal(one, text_keys(["x", "y", "z"], seed=4, n_relabellings=5))
    assert len(set(one[:, 0].tolist())) == 5  # each relabelling gives a new key


def test_keys_are_uniform():
    keys = text_keys([f"t{i}" for i in range(2000)], seed=0, n_relabellings=5).ravel()
    counts = np.histogram(keys, bins=10, range=(0, 1))[0]
    assert counts.min() > 0.85 * len(keys) / 10 and counts.max() < 1.15 * len(keys) / 10


def test_a_passage_takes_the_mean_key_of_its_texts():
    keys = text_keys(["a", "b", "c"], 1, 4)
    units = unit_keys([("a", "b"), ("c",)], 1, 4)
    assert np.allclose(units[:, 0], keys[:, :2].mean(axis=1)) and np.allclose(
        units[:, 1], keys[:, 2]
    )


def test_splits_are_uniform_over_all_splits_of_the_pooled_items():
    a = unit_keys([("a1",), ("a2",)], 0, 6000)
    b = unit_keys([("b1",), ("b2",)], 0, 6000)
    masks = side_masks(a, b)
    assert (masks.sum(axis=1) == 2).all()
    counts = Counter(tuple(row) for row in masks.tolist())
    assert len(counts) == 6  # C(4, 2) splits
    assert all(900 < c < 1100 for c in counts.values())


def test_a_repeated_draw_is_relabelled_the_same_way_in_every_repetition():
    units = [(f"t{i}",) for i in range(10)]
    first = side_masks(unit_keys(units[:5], 2, 50), unit_keys(units[5:], 2, 50))
    again = side_masks(unit_keys(units[:5], 2, 50), unit_keys(units[5:], 2, 50))
    assert np.array_equal(first, again)


def test_the_joint_p_matches_a_brute_force_count():
    rng = np.random.default_rng(0)
    reps = rng.normal(size=(3, 3, 3))
    reps = (reps + reps.transpose(0, 2, 1)) / 2
    reps[1, 0, 2] = reps[1, 2, 0] = np.nan  # a repetition left out of one pair
    null = NullSums.zeros(7, 3)
    per_k = rng.normal(size=(3, 7, 3, 3))
    for r in range(3):
        for i, j in itertools.combinations(range(3), 2):
            if np.isfinite(reps[r, i, j]):
                null.add(i, j, per_k[r, :, i, j])
    p = joint_p_values(reps, null.sums)
    for i, j in itertools.combinations(range(3), 2):
        kept = [r for r in range(3) if np.isfinite(reps[r, i, j])]
        observed = np.mean([reps[r, i, j] for r in kept])
        relabelled = [np.mean([per_k[r, k, i, j] for r in kept]) for k in range(7)]
        expected = (1 + sum(t >= observed for t in relabelled)) / 8
        assert p[i, j] == pytest.approx(expected) and p[j, i] == pytest.approx(expected)
    assert np.isnan(np.diag(p)).all()


def test_a_failed_relabelling_counts_as_extreme():
    reps = np.array([[[0.0, 5.0], [5.0, 0.0]]])
    null = NullSums.zeros(4, 2)
    null.add(0, 1, np.array([1.0, np.inf, np.nan, 1.0]))
    assert joint_p_values(reps, null.sums)[0, 1] == pytest.approx(3 / 5)


def _tested(values: np.ndarray, null: np.ndarray):
    from regbias.distances.matrix import DistanceMatrix

    matrix = DistanceMatrix.from_repetitions("d", ["a", "b", "c"], values)
    return DistanceMatrix(
        matrix.name,
        matrix.groups,
        matrix.mean,
        matrix.sd,
        matrix.n_repetitions,
        null=null,
        repetitions=matrix.repetitions,
    )


def test_pooling_an_already_pooled_matrix_is_pooling_all_jobs_at_once():
    """The first version kept the first job's relabelling total when pooling a pooled matrix."""
    from regbias.distances.matrix import DistanceMatrix

    rng = np.random.default_rng(4)
    jobs = []
    for _ in range(3):
        values = rng.uniform(size=(2, 3, 3))
        values = (values + values.transpose(0, 2, 1)) / 2
        null = rng.uniform(size=(9, 3, 3)) * 2
        jobs.append(_tested(values, (null + null.transpose(0, 2, 1)) / 2))
    staged = DistanceMatrix.pooled([DistanceMatrix.pooled(jobs[:2]), jobs[2]])
    at_once = DistanceMatrix.pooled(jobs)
    assert np.allclose(staged.p_above_noise, at_once.p_above_noise, equal_nan=True)
    assert np.allclose(staged.null, at_once.null) and staged.n_repetitions == 6


def test_the_paper_preset_leaves_pair_verdicts_to_the_test_of_record():
    """No preset claims a per-job pair test: the verdicts are the test of record's."""
    from tests.conftest import compose_config

    cfg = compose_config("experiment=paper")
    assert int(cfg.distance.energy.relabellings) == 0
    assert int(cfg.distance.lda.relabellings) == 0
    assert int(cfg.distance.sinkhorn.relabellings) == 0
    assert cfg.analysis.pair_test.enabled and int(cfg.analysis.pair_test.relabellings) == 9999
