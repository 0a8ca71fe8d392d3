"""Noise floors and relabelling tests: exchangeable groups stay at the floor, a shift does not."""

from __future__ import annotations

import numpy as np
import pytest

from regbias.data.corpus import TextSet
from regbias.data.draws import DrawSizes, distance_draws, matched_pool_size
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.sinkhorn import sinkhorn_matrix
from regbias.distances.sinkhorn.floors import sinkhorn_floors
from regbias.errors import SampleSizeError
from tests.settings import packaged_sinkhorn

SETTINGS = packaged_sinkhorn(epsilon=0.5, anneal=False, max_iterations=2000, pad_multiple=32)


def texts(rng: np.random.Generator, n: int, shift: float = 0.0) -> list[np.ndarray]:
    """``n`` texts of 3-5 token vectors in 4 dimensions."""
    return [rng.normal(shift, 1.0, size=(rng.integers(3, 6), 4)) for _ in range(n)]


def study(seed: int, shifted: str | None = None) -> list[dict[str, list[np.ndarray]]]:
    rng = np.random.default_rng(seed)
    return [{g: texts(rng, 8, 3.0 if g == shifted else 0.0) for g in ("a", "b", "c", "d")}]


def stacked(rep: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    return {g: np.concatenate(ts) for g, ts in rep.items()}


def test_floor_matches_exchangeable_distance_and_excess_shows_a_shift():
    main, twin = study(1, shifted="a"), study(2, shifted="a")
    clouds, twins = [stacked(main[0])], [stacked(twin[0])]
    matrix, table = sinkhorn_matrix(clouds, SETTINGS, progress=False)
    floor, floor_sd = sinkhorn_floors(clouds, twins, table, SETTINGS, 64, progress=False)
    assert floor.shape == floor_sd.shape == (4,)
    excess = DistanceMatrix(
        "s", matrix.groups, matrix.mean, matrix.sd, 1, floor=floor, floor_sd=floor_sd
    ).excess()
    assert excess[0, 1:].min() > 5 * np.abs(excess[1:, 1:]).max()


def group_sets(**sizes: int) -> dict[str, TextSet]:
    return {
        g: TextSet([f"{g}{i}" for i in range(n)], np.zeros(n, dtype=np.int64))
        for g, n in sizes.items()
    }


def test_matched_pools_give_every_group_the_same_pool_and_disjoint_twins():
    groups = group_sets(us=500, za=40, nz=60)
    sizes = DrawSizes(2, 10, 5, 3, 6, matched_pool=True, floors=True)
    draws = distance_draws(groups, sizes, "tweet", seed=0, policy="error")
    assert draws.pool_size == 40
    for r in range(2):
        for g in groups:
            main, twin = draws.texts["short"][r][g], draws.twins["short"][r][g]
            assert len(main) == len(twin) == 10 and not set(main) & set(twin)
            main_words = {w for p in draws.texts["long"][r][g] for w in p.split()}
            twin_words = {w for p in draws.twins["long"][r][g] for w in p.split()}
            assert not main_words & twin_words
            # Every group's texts come from 20 (half the pool), the same for US as for ZA.
            assert len(main_words) <= 20 and len(twin_words) <= 20
    with pytest.raises(SampleSizeError, match="pool_size"):
        matched_pool_size(groups, 100)


def test_pooling_matrices_of_other_settings_names_the_difference():
    one = DistanceMatrix("s", ["a", "b"], np.eye(2), np.zeros((2, 2)), 1, {"epsilon": 1.0})
    two = DistanceMatrix("s", ["a", "b"], np.eye(2), np.zeros((2, 2)), 1, {"epsilon": 2.0})
    with pytest.raises(ValueError, match=r"epsilon: 1.0 vs 2.0"):
        DistanceMatrix.pooled([one, two])


def test_floor_figure_shows_every_pair_against_its_floor():
    from regbias.report.figures import floor_plot

    groups = ["a", "b", "c", "d"]
    mean = np.array([[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]], dtype=float)
    bare = DistanceMatrix("s", groups, mean, np.zeros((4, 4)), 2)
    with pytest.raises(ValueError, match="no noise floor"):
        floor_plot(bare)
    figure = floor_plot(DistanceMatrix("s", groups, mean, np.zeros((4, 4)), 2, floor=np.ones(4)))
    (axes,) = figure.axes
    labels = [t.get_text() for t in axes.get_yticklabels()]
    assert labels[0] == "A–B" and labels[-1] == "C–D" and len(labels) == 6  # by distance


def test_pooling_ignores_the_padded_size_of_each_jobs_clouds():
    one = DistanceMatrix("s", ["a", "b"], np.eye(2), np.zeros((2, 2)), 1, {"n_points_padded": 1792})
    two = DistanceMatrix("s", ["a", "b"], np.eye(2), np.zeros((2, 2)), 1, {"n_points_padded": 2048})
    assert DistanceMatrix.pooled([one, two]).n_repetitions == 2
