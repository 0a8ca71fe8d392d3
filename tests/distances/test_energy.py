"""Energy distance: dcor's value, block sums, and a calibrated, powered relabelling test."""

from __future__ import annotations

import dcor
import numpy as np
import pytest
from scipy import stats

from regbias.distances.energy import block_sums, energy_distance, energy_from_blocks, energy_matrix
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.relabel import side_masks, unit_keys


def texts(rng: np.random.Generator, n: int, shift: float = 0.0, dim: int = 4) -> list[np.ndarray]:
    """``n`` texts of 2-5 token vectors."""
    return [rng.normal(shift, 1.0, size=(rng.integers(2, 6), dim)) for _ in range(n)]


def test_energy_distance_is_dcors():
    rng = np.random.default_rng(0)
    x, y = texts(rng, 7), texts(rng, 5, shift=0.4)
    expected = dcor.energy_distance(np.concatenate(x), np.concatenate(y))
    assert energy_distance(x, y) == pytest.approx(expected, rel=1e-6)


def test_block_sums_are_the_sums_of_point_distances():
    rng = np.random.default_rng(1)
    pooled = texts(rng, 6)
    points = np.concatenate(pooled)
    owner = np.repeat(np.arange(6), [len(t) for t in pooled])
    full = np.linalg.norm(points[:, None] - points[None, :], axis=-1)
    expected = np.zeros((6, 6))
    np.add.at(expected, (owner[:, None], owner[None, :]), full)
    assert np.allclose(block_sums(pooled), expected, rtol=1e-5)


def test_a_relabelled_energy_from_blocks_is_the_energy_of_the_relabelled_clouds():
    rng = np.random.default_rng(2)
    pooled = texts(rng, 9)
    counts = np.array([len(t) for t in pooled], dtype=float)
    masks = side_masks(
        unit_keys([(f"a{i}",) for i in range(4)], 0, 5),
        unit_keys([(f"b{i}",) for i in range(5)], 0, 5),
    )
    values = energy_from_blocks(block_sums(pooled), counts, masks)
    for value, side in zip(values, masks, strict=True):
        x = np.concatenate([t for t, s in zip(pooled, side, strict=True) if s])
        y = np.concatenate([t for t, s in zip(pooled, side, strict=True) if not s])
        assert value == pytest.approx(dcor.energy_distance(x, y), rel=1e-5)


def test_the_joint_p_of_a_sweep_matches_a_brute_force_relabelling():
    """Two repetitions that share texts: relabelling k moves a text the same way in both."""
    rng = np.random.default_rng(3)
    bank = {f"{g}{i}": t for g in "ab" for i, t in enumerate(texts(rng, 6, 0.3 if g == "b" else 0))}
    draws = [["a0", "a1", "a2", "a3"], ["a2", "a3", "a4", "a5"]]
    others = [["b0", "b1", "b2"], ["b1", "b3", "b4"]]
    reps = [
        {"a": [bank[t] for t in da], "b": [bank[t] for t in db]}
        for da, db in zip(draws, others, strict=True)
    ]
    units = [
        {"a": [(t,) for t in da], "b": [(t,) for t in db]}
        for da, db in zip(draws, others, strict=True)
    ]
    matrix = energy_matrix(reps, units=units, relabellings=30, relabel_seed=5, progress=False)
    observed = np.mean([energy_distance(r["a"], r["b"]) for r in reps])
    relabelled = np.zeros(30)
    for rep, unit in zip(reps, units, strict=True):
        masks = side_masks(unit_keys(unit["a"], 5, 30), unit_keys(unit["b"], 5, 30))
        pooled = rep["a"] + rep["b"]
        for k, side in enumerate(masks):
            x = [t for t, s in zip(pooled, side, strict=True) if s]
            y = [t for t, s in zip(pooled, side, strict=True) if not s]
            relabelled[k] += energy_distance(x, y) / 2
    expected = (1 + np.sum(relabelled >= observed - 1e-9)) / 31
    assert matrix.p_above_noise[0, 1] == pytest.approx(expected)


def study(rng: np.random.Generator, shifted: str | None = None, shift: float = 0.0) -> list[dict]:
    return [{g: texts(rng, 10, shift if g == shifted else 0.0) for g in "abcd"}]


def test_exchangeable_groups_keep_the_false_positive_rate():
    """204 exchangeable pairs with disjoint texts: p <= 0.05 within its binomial bounds."""
    p = []
    for seed in range(34):
        rng = np.random.default_rng(seed)
        matrix = energy_matrix(study(rng), relabellings=199, relabel_seed=seed, progress=False)
        p.extend(matrix.p_above_noise[np.triu_indices(4, 1)])
    p = np.array(p)
    low, high = stats.binom.ppf([0.0005, 0.9995], len(p), 0.05) / len(p)
    assert low <= np.mean(p <= 0.05) <= high
    assert 0.4 < p.mean() < 0.6


def test_a_small_group_reused_in_every_repetition_keeps_the_false_positive_rate():
    """A small group's texts recur in every repetition (its pool is the whole group): the joint
    relabelling keeps the test calibrated where independent relabellings would not."""
    p = []
    for seed in range(200):
        rng = np.random.default_rng(1000 + seed)
        small = texts(rng, 12)
        reps, units = [], []
        for r in range(4):
            pick = rng.permutation(12)[:6]
            large = texts(rng, 6)
            reps.append({"small": [small[i] for i in pick], "large": large})
            units.append(
                {
                    "small": [(f"s{seed}/{i}",) for i in pick],
                    "large": [(f"l{seed}/{r}/{i}",) for i in range(6)],
                }
            )
        matrix = energy_matrix(
            reps, units=units, relabellings=99, relabel_seed=seed, progress=False
        )
        p.append(matrix.p_above_noise[0, 1])
    p = np.array(p)
    low, high = stats.binom.ppf([0.0005, 0.9995], len(p), 0.05) / len(p)
    assert low <= np.mean(p <= 0.05) <= high


def test_a_planted_shift_is_found():
    rng = np.random.default_rng(7)
    matrix = energy_matrix(study(rng, "a", 1.0) * 2, relabellings=199, progress=False)
    p = matrix.p_above_noise
    assert (p[0, 1:] <= 1 / 200 + 1e-12).all()
    assert (p[np.triu_indices(4, 1)][3:] > 0.01).all()


def test_floors_and_pooling():
    rng = np.random.default_rng(8)
    reps = study(rng) + study(rng)
    twins = study(rng) + study(rng)
    units = [{g: [(f"{r}{g}{i}",) for i in range(10)] for g in "abcd"} for r in range(2)]
    jobs = [
        energy_matrix(
            reps[i : i + 1],
            units=units[i : i + 1],
            twins=twins[i : i + 1],
            relabellings=9,
            progress=False,
        )
        for i in range(2)
    ]
    pooled = DistanceMatrix.pooled(jobs)
    whole = energy_matrix(reps, units=units, twins=twins, relabellings=9, progress=False)
    assert np.allclose(pooled.mean, whole.mean) and np.allclose(pooled.null, whole.null)
    assert np.allclose(pooled.p_above_noise, whole.p_above_noise, equal_nan=True)
    assert whole.floor.shape == (4,) and (whole.floor > 0).all()
