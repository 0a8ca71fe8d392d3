"""Stage II: properties of the Sinkhorn divergence and agreement with a numpy reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from regbias.distances.sinkhorn import (
    SinkhornSettings,
    mean_pooled_cost,
    sinkhorn_divergence,
    sinkhorn_matrix,
    solve_ot,
)
from regbias.distances.sinkhorn import divergence as sinkhorn
from regbias.distances.sinkhorn import solve as ott_solve
from regbias.errors import ConfigError
from tests.settings import packaged_sinkhorn

SETTINGS = packaged_sinkhorn(epsilon=0.05, pad_multiple=64, solver="sinkhorn")


def cloud(n: int, dim: int = 8, shift: float = 0.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, dim)) / np.sqrt(dim) + shift).astype(np.float32)


def unit_cloud(n: int, dim: int, seed: int) -> np.ndarray:
    points = np.random.default_rng(seed).normal(size=(n, dim))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def reference_ot(x: np.ndarray, y: np.ndarray, eps: float, iterations: int = 5000) -> float:
    """KL-regularised OT by plain log-domain Sinkhorn in float64 (dual objective)."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    log_a, log_b = -np.log(len(x)) * np.ones(len(x)), -np.log(len(y)) * np.ones(len(y))
    f, g = np.zeros(len(x)), np.zeros(len(y))
    for _ in range(iterations):
        f = -eps * logsumexp((g[None, :] - cost) / eps + log_b[None, :], axis=1)
        g = -eps * logsumexp((f[:, None] - cost) / eps + log_a[:, None], axis=0)
    return float(np.exp(log_a) @ f + np.exp(log_b) @ g)


def reference_divergence(x: np.ndarray, y: np.ndarray, eps: float) -> float:
    return reference_ot(x, y, eps) - 0.5 * (reference_ot(x, x, eps) + reference_ot(y, y, eps))


def test_divergence_agrees_with_numpy_reference():
    x, y = cloud(40, shift=0.0, seed=1), cloud(30, shift=0.3, seed=2)
    result = sinkhorn_divergence(x, y, replace_threshold(SETTINGS, 1e-5))
    expected = reference_divergence(x, y, SETTINGS.epsilon)
    assert result.divergence == pytest.approx(expected, rel=2e-3)
    assert result.xy.cost == pytest.approx(reference_ot(x, y, SETTINGS.epsilon), rel=1e-3)


def replace_threshold(settings: SinkhornSettings, threshold: float) -> SinkhornSettings:
    from dataclasses import replace

    return replace(settings, threshold=threshold)


def test_divergence_of_a_cloud_with_itself_is_zero():
    x = cloud(50, seed=3)
    result = sinkhorn_divergence(x, x, SETTINGS)
    assert abs(result.divergence) < 1e-5
    assert result.xx.cost == pytest.approx(result.yy.cost)


def test_divergence_is_symmetric_and_non_negative():
    clouds = [cloud(50, shift=s, seed=i) for i, s in enumerate([0.0, 0.1, 0.5])]
    for i, x in enumerate(clouds):
        for y in clouds[i + 1 :]:
            forward = sinkhorn_divergence(x, y, SETTINGS).divergence
            backward = sinkhorn_divergence(y, x, SETTINGS).divergence
            assert forward == pytest.approx(backward, rel=1e-4, abs=1e-6)
            assert forward > -1e-6


def test_farther_clouds_have_larger_divergence():
    x = cloud(50, seed=0)
    near = sinkhorn_divergence(x, cloud(50, shift=0.1, seed=1), SETTINGS).divergence
    far = sinkhorn_divergence(x, cloud(50, shift=0.5, seed=1), SETTINGS).divergence
    assert far > near > 0


def test_annealing_converges_at_the_papers_small_epsilon():
    x, y = unit_cloud(60, 16, seed=4), unit_cloud(60, 16, seed=5)
    settings = packaged_sinkhorn(epsilon=0.005, anneal=True, pad_multiple=64)
    result = sinkhorn_divergence(x, y, settings)
    assert all(term.converged for term in (result.xy, result.xx, result.yy))
    assert result.xy.error < settings.threshold
    assert result.divergence > 0


def test_zero_weight_padding_leaves_the_value_unchanged():
    x, y = cloud(37, seed=6), cloud(45, shift=0.2, seed=7)
    compact = solve_ot(x, y, SETTINGS, size=64)
    padded = solve_ot(x, y, SETTINGS, size=128)
    assert padded.cost == pytest.approx(compact.cost, rel=1e-5)
    # Explicit zero weights on extra points far away: they must not take part either.
    x_extra = np.concatenate([x, np.full((5, x.shape[1]), 10.0, dtype=np.float32)])
    weights = np.concatenate([np.full(37, 1 / 37), np.zeros(5)])
    weighted = solve_ot(x_extra, y, SETTINGS, (weights, None), size=64)
    assert weighted.cost == pytest.approx(compact.cost, rel=1e-5)


def test_equal_shapes_compile_once(monkeypatch):
    traces = []
    monkeypatch.setattr(ott_solve, "_note_trace", lambda solver, shape: traces.append(shape))
    settings = packaged_sinkhorn(epsilon=0.05, pad_multiple=96)  # a size no other test uses
    for seed in range(3):
        solve_ot(cloud(50 + seed, seed=seed), cloud(70 - seed, seed=seed + 9), settings)
    assert len(traces) == 1


def test_matrix_solves_each_self_term_once_per_repetition(monkeypatch):
    calls = []
    original = sinkhorn.solve_ot

    def counting(*args, **kwargs):
        calls.append(kwargs.get("symmetric", False))
        return original(*args, **kwargs)

    monkeypatch.setattr(sinkhorn, "solve_ot", counting)
    groups = ["au", "uk", "us", "za"]
    draws = [
        {g: cloud(20 + 3 * k, shift=0.1 * k, seed=10 * r + k) for k, g in enumerate(groups)}
        for r in range(2)
    ]
    per_pair = packaged_sinkhorn(epsilon=0.05, pad_multiple=64, batch_pairs=False)
    matrix, table = sinkhorn_matrix(draws, per_pair, name="sinkhorn_short", progress=False)
    k = len(groups)
    assert len(calls) == 2 * (k + k * (k - 1) // 2)
    assert sum(calls) == 2 * k
    assert matrix.groups == groups and matrix.n_repetitions == 2
    assert np.allclose(np.diag(matrix.mean), 0) and np.allclose(matrix.mean, matrix.mean.T)
    assert matrix.sd.shape == (k, k)
    assert len(table) == 2 * k * (k - 1) // 2
    assert {"xy_converged", "xx_iterations", "yy_error", "epsilon"} <= set(table.columns)
    row = table.iloc[0]
    assert row.divergence == pytest.approx(row.xy_cost - 0.5 * (row.xx_cost + row.yy_cost))
    assert matrix.value("au", "za") > matrix.value("au", "uk")


def test_matrix_warns_and_records_non_convergence():
    draws = [{"a": unit_cloud(30, 8, 1), "b": unit_cloud(30, 8, 2)}]
    settings = packaged_sinkhorn(
        epsilon=1e-4,
        anneal=False,
        max_iterations=10,
        threshold=1e-9,
        pad_multiple=64,
        solver="sinkhorn",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, table = sinkhorn_matrix(draws, settings, progress=False)
    assert any("'a'-'b'" in str(w.message) for w in caught)
    assert (~table["xy_converged"]).sum() == 1


def test_derived_epsilon_is_relative_to_the_mean_pooled_cost():
    draws = [{"a": cloud(20, seed=1), "b": cloud(15, shift=1.0, seed=2)}]
    pooled = np.concatenate(list(draws[0].values())).astype(np.float64)
    brute = ((pooled[:, None] - pooled[None]) ** 2).sum(-1).mean()
    assert mean_pooled_cost(list(draws[0].values())) == pytest.approx(brute, rel=1e-6)
    matrix, table = sinkhorn_matrix(draws, packaged_sinkhorn(epsilon=None), progress=False)
    assert table["epsilon"].iloc[0] == pytest.approx(0.05 * brute, rel=1e-6)
    assert matrix.config["epsilon"] == pytest.approx(0.05 * brute, rel=1e-6)


@pytest.mark.parametrize("epsilon", [0.0, -0.005, float("inf"), float("nan")])
def test_non_positive_or_infinite_epsilon_is_a_config_error(epsilon):
    with pytest.raises(ConfigError, match="epsilon must be a finite number > 0"):
        packaged_sinkhorn(epsilon=epsilon)


def test_an_infinite_relative_epsilon_is_a_config_error():
    with pytest.raises(ConfigError, match="epsilon_relative"):
        packaged_sinkhorn(epsilon=None, epsilon_relative=float("inf"))


def test_online_cost_matches_the_dense_cost_matrix():
    x, y = cloud(40, seed=11), cloud(50, shift=0.2, seed=12)
    dense = solve_ot(x, y, SETTINGS)
    online = solve_ot(x, y, packaged_sinkhorn(epsilon=0.05, pad_multiple=64, batch_size=16))
    assert online.cost == pytest.approx(dense.cost, rel=1e-5)


def test_momentum_reaches_the_same_divergence_in_fewer_iterations():
    x, y = cloud(200, dim=16, seed=3), cloud(200, dim=16, shift=0.5, seed=4)
    plain = replace_threshold(packaged_sinkhorn(epsilon=0.01, anneal=False, pad_multiple=64), 1e-4)
    from dataclasses import replace

    faster = replace(plain, momentum=1.5, inner_iterations=5)
    one, two = sinkhorn_divergence(x, y, plain), sinkhorn_divergence(x, y, faster)
    assert two.xy.converged and two.divergence == pytest.approx(one.divergence, rel=1e-3)
    assert two.xy.iterations < one.xy.iterations


@pytest.mark.parametrize("momentum", [0.5, 2.0])
def test_momentum_out_of_range_is_a_config_error(momentum):
    with pytest.raises(ConfigError, match="momentum"):
        packaged_sinkhorn(momentum=momentum)
