"""Stage III: LDA centroid distances."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from regbias.distances.lda import lda_distance_matrix, lda_projection
from regbias.errors import ConfigError
from tests.settings import packaged_lda

SHRINKAGE = packaged_lda(n_components=2, solver="eigen", shrinkage="auto")
IN_SAMPLE = packaged_lda(n_components=2, solver="svd", shrinkage=None, cross_fit=False)  # the paper


def passages(
    groups: list[str], n: int, dim: int, spread: float, seed: int
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(groups), dim)) * spread
    return {g: centres[k] + rng.normal(size=(n, dim)) for k, g in enumerate(groups)}


def test_shrinkage_lda_runs_with_fewer_samples_than_dimensions():
    draw = passages(["au", "uk", "us"], n=10, dim=384, spread=1.0, seed=0)
    projection = lda_projection(draw, SHRINKAGE)
    assert projection.points.shape == (30, 2)
    assert projection.centroids.shape == (3, 2)
    assert list(projection.labels[:10]) == ["au"] * 10


def test_well_separated_groups_are_farther_apart():
    near = lda_distance_matrix([passages(["a", "b", "c"], 10, 384, 0.05, 1)], SHRINKAGE)
    far = lda_distance_matrix([passages(["a", "b", "c"], 10, 384, 1.0, 1)], SHRINKAGE)
    assert far.mean[np.triu_indices(3, 1)].min() > near.mean[np.triu_indices(3, 1)].max()


def test_repetitions_give_mean_and_sd_of_the_right_shape():
    groups = ["au", "ca", "nz", "uk"]
    draws = [passages(groups, 40, 16, 1.0, seed) for seed in range(3)]
    matrix = lda_distance_matrix(draws, packaged_lda(n_components=3), name="lda")
    assert matrix.n_repetitions == 3 and matrix.groups == groups
    assert matrix.mean.shape == matrix.sd.shape == (4, 4)
    assert np.allclose(np.diag(matrix.mean), 0) and np.allclose(matrix.mean, matrix.mean.T)
    assert (matrix.sd[np.triu_indices(4, 1)] > 0).all()
    assert matrix.config["n_components"] == 3


def test_centroid_distances_match_a_direct_computation():
    draw = passages(["a", "b", "c"], 30, 8, 1.0, 2)
    projection = lda_projection(draw, IN_SAMPLE)
    matrix = lda_distance_matrix([draw], IN_SAMPLE)
    centre_a = projection.points[projection.labels == "a"].mean(axis=0)
    centre_c = projection.points[projection.labels == "c"].mean(axis=0)
    assert matrix.value("a", "c") == pytest.approx(np.linalg.norm(centre_a - centre_c))


def test_svd_without_enough_samples_says_to_use_shrinkage():
    draw = passages(["au", "uk", "us"], n=10, dim=384, spread=1.0, seed=0)
    with pytest.raises(ConfigError, match="solver=eigen shrinkage=auto"):
        lda_distance_matrix([draw], IN_SAMPLE)


def test_shrinkage_with_svd_is_a_config_error():
    with pytest.raises(ConfigError, match="solver=svd"):
        packaged_lda(solver="svd", shrinkage="auto")


def test_too_many_components_for_the_groups():
    draw = passages(["au", "uk", "us"], n=20, dim=4, spread=1.0, seed=0)
    with pytest.raises(ConfigError, match="n_components=3 exceeds"):
        lda_projection(draw, packaged_lda(n_components=3))


def test_unequal_group_sizes_are_refused():
    draw = passages(["au", "uk", "us"], n=20, dim=4, spread=1.0, seed=0)
    draw["us"] = draw["us"][:15]
    with pytest.raises(ConfigError, match="equal group sizes"):
        lda_projection(draw, packaged_lda(n_components=2))


def exchangeable(groups: list[str], n: int, dim: int, seed: int) -> dict[str, np.ndarray]:
    """Groups drawn from one anisotropic population: no group differs from another."""
    rng = np.random.default_rng(seed)
    scales = np.linspace(0.5, 2.0, dim)
    return {g: rng.normal(size=(n, dim)) * scales for g in groups}


@pytest.mark.parametrize("shrinkage", ["auto", 0.3])
def test_eigen_solver_matches_scikit_learn(shrinkage):
    draw = passages(["a", "b", "c", "d"], 25, 40, 0.5, 3)
    settings = packaged_lda(n_components=3, solver="eigen", shrinkage=shrinkage, cross_fit=False)
    projection = lda_projection(draw, settings)  # scikit-learn's estimator
    distances = np.linalg.norm(projection.centroids[:, None] - projection.centroids[None], axis=-1)
    assert np.allclose(lda_distance_matrix([draw], settings).mean, distances, atol=1e-8)


def test_cross_fitting_removes_the_in_sample_inflation():
    groups = ["a", "b", "c", "d"]
    draws = [exchangeable(groups, 16, 200, seed) for seed in range(6)]
    crossed = lda_distance_matrix(draws, SHRINKAGE)
    in_sample = lda_distance_matrix(draws, replace(SHRINKAGE, cross_fit=False))
    upper = np.triu_indices(4, 1)
    floor = crossed.floor.mean()
    # Exchangeable groups: held-out distances sit at the floor, in-sample ones far above it.
    assert 0.8 < crossed.mean[upper].mean() / floor < 1.25
    assert in_sample.mean[upper].mean() / floor > 1.5
    assert np.abs(crossed.excess()[upper].mean()) < 0.25 * floor
    # The floor is measured on held-out passages whatever the design.
    assert in_sample.floor == pytest.approx(floor, rel=0.25)


def test_floors_have_one_value_per_group_in_group_order():
    groups = ["a", "wide", "c", "d", "e"]
    draws = [exchangeable(groups, 20, 10, seed) for seed in range(3)]
    for draw in draws:
        draw["wide"] = draw["wide"] * 3
    matrix = lda_distance_matrix(
        draws, packaged_lda(n_components=2, solver="eigen", shrinkage="auto")
    )
    assert matrix.floor.shape == matrix.floor_sd.shape == (5,)
    assert int(np.argmax(matrix.floor)) == groups.index("wide")
    assert (matrix.floor > 0).all() and (matrix.floor_sd > 0).all()


def test_the_same_seed_gives_the_same_matrix():
    draws = [exchangeable(["a", "b", "c"], 12, 6, 0)]
    settings = packaged_lda(n_components=2, solver="eigen", shrinkage="auto")
    first, second = (lda_distance_matrix(draws, settings, seed=5) for _ in range(2))
    assert np.array_equal(first.mean, second.mean)
    assert np.array_equal(first.floor, second.floor)


def test_cross_fitting_needs_four_passages_per_group():
    draw = passages(["a", "b", "c"], n=3, dim=4, spread=1.0, seed=0)
    with pytest.raises(ConfigError, match="at least 4 passages"):
        lda_distance_matrix([draw], SHRINKAGE)


def test_lsqr_cannot_project():
    with pytest.raises(ConfigError, match="lsqr"):
        packaged_lda(solver="lsqr")
