"""Energy distance: dcor's value, block sums, and a calibrated, powered relabelling test."""

from __future__ import annotations

import dcor
import numpy as np
import pytest

from regbias.distances.energy import block_sums, energy_distance, energy_matrix
from regbias.distances.matrix import DistanceMatrix


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


def study(rng: np.random.Generator, shifted: str | None = None, shift: float = 0.0) -> list[dict]:
    return [{g: texts(rng, 10, shift if g == shifted else 0.0) for g in "abcd"}]


def test_floors_and_pooling():
    rng = np.random.default_rng(8)
    reps = study(rng) + study(rng)
    twins = study(rng) + study(rng)
    jobs = [
        energy_matrix(reps[i : i + 1], twins=twins[i : i + 1], progress=False) for i in range(2)
    ]
    pooled = DistanceMatrix.pooled(jobs)
    whole = energy_matrix(reps, twins=twins, progress=False)
    assert np.allclose(pooled.mean, whole.mean)
    assert whole.floor.shape == (4,) and (whole.floor > 0).all()
