"""Stage III: LDA centroid distances."""

from __future__ import annotations

import numpy as np
import pytest

from regbias.distances.lda import LdaSettings, lda_distance_matrix, lda_projection
from regbias.errors import ConfigError

SHRINKAGE = LdaSettings(n_components=2, solver="eigen", shrinkage="auto")


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
    matrix = lda_distance_matrix(draws, LdaSettings(n_components=3), name="lda")
    assert matrix.n_repetitions == 3 and matrix.groups == groups
    assert matrix.mean.shape == matrix.sd.shape == (4, 4)
    assert np.allclose(np.diag(matrix.mean), 0) and np.allclose(matrix.mean, matrix.mean.T)
    assert (matrix.sd[np.triu_indices(4, 1)] > 0).all()
    assert matrix.config["n_components"] == 3


def test_centroid_distances_match_a_direct_computation():
    draw = passages(["a", "b", "c"], 30, 8, 1.0, 2)
    projection = lda_projection(draw, LdaSettings(n_components=2))
    matrix = lda_distance_matrix([draw], LdaSettings(n_components=2))
    centre_a = projection.points[projection.labels == "a"].mean(axis=0)
    centre_c = projection.points[projection.labels == "c"].mean(axis=0)
    assert matrix.value("a", "c") == pytest.approx(np.linalg.norm(centre_a - centre_c))


def test_svd_without_enough_samples_says_to_use_shrinkage():
    draw = passages(["au", "uk", "us"], n=10, dim=384, spread=1.0, seed=0)
    with pytest.raises(ConfigError, match="solver=eigen shrinkage=auto"):
        lda_distance_matrix([draw], LdaSettings(n_components=2))


def test_shrinkage_with_svd_is_a_config_error():
    with pytest.raises(ConfigError, match="solver=svd"):
        LdaSettings(solver="svd", shrinkage="auto")


def test_too_many_components_for_the_groups():
    draw = passages(["au", "uk", "us"], n=20, dim=4, spread=1.0, seed=0)
    with pytest.raises(ConfigError, match="n_components=3 exceeds"):
        lda_projection(draw, LdaSettings(n_components=3))


def test_unequal_group_sizes_are_refused():
    draw = passages(["au", "uk", "us"], n=20, dim=4, spread=1.0, seed=0)
    draw["us"] = draw["us"][:15]
    with pytest.raises(ConfigError, match="equal group sizes"):
        lda_projection(draw, LdaSettings(n_components=2))
