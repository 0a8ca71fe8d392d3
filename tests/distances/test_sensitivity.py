"""Epsilon sensitivity of the Sinkhorn pair ranking, down to the exact-OT limit."""

from __future__ import annotations

import numpy as np
import ot
import pytest
from scipy.optimize import linear_sum_assignment

from regbias.distances.sinkhorn.exact import exact_ot
from regbias.distances.sinkhorn.sensitivity import EXACT, epsilon_sensitivity, ranking_stability
from tests.settings import packaged_sinkhorn

SETTINGS = packaged_sinkhorn(epsilon=0.05, pad_multiple=64, threshold=1e-4)


def planted(shifts: dict[str, float], n: int = 24, dim: int = 3, seed: int = 0):
    """Groups whose clouds differ only by a shift along one axis: the pair order is known."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim)) * 0.3
    clouds = {}
    for k, (group, shift) in enumerate(shifts.items()):
        jitter = np.random.default_rng(seed + k + 1).normal(size=(n, dim)) * 0.05
        clouds[group] = (base + jitter + np.eye(dim)[0] * shift).astype(np.float32)
    return clouds


def test_exact_limit_equals_pot_and_an_assignment():
    clouds = planted({"a": 0.0, "b": 0.5, "c": 1.5}, n=16)
    table = epsilon_sensitivity(clouds, SETTINGS, [], exact_max_points=100)
    exact = table[table["epsilon"] == EXACT].set_index(["group_a", "group_b"])
    assert len(exact) == 3 and exact["converged"].all()
    x, y = (clouds[g].astype(np.float64) for g in ("a", "c"))
    uniform = np.full(16, 1 / 16)
    assert exact.loc[("a", "c"), "value"] == pytest.approx(
        ot.emd2(uniform, uniform, ot.dist(x, y)), rel=1e-9
    )
    # Equal-size uniform clouds: exact OT is the optimal assignment's mean |x - y|^2.
    cost = ((x[:, None] - y[None]) ** 2).sum(-1)
    rows, cols = linear_sum_assignment(cost)
    assert exact.loc[("a", "c"), "value"] == pytest.approx(cost[rows, cols].mean(), rel=1e-9)


def test_exact_ot_of_a_cloud_with_itself_is_zero():
    cloud = planted({"a": 0.0})["a"]
    value, converged = exact_ot(cloud, cloud)
    assert converged and value == pytest.approx(0.0, abs=1e-9)


def test_values_approach_the_exact_limit_as_epsilon_decreases():
    clouds = planted({"a": 0.0, "b": 0.7, "c": 1.6})
    epsilons = [0.3, 0.1, 0.03, 0.01]
    table = epsilon_sensitivity(clouds, SETTINGS, epsilons, exact_max_points=100)
    assert table[table["epsilon"] != EXACT]["converged"].all()
    values = table.pivot_table(index=["group_a", "group_b"], columns="epsilon", values="value")
    exact = values[EXACT]
    gaps = np.stack([np.abs(values[e] - exact) for e in epsilons])  # rows: epsilon, decreasing
    assert (np.diff(gaps, axis=0) < 0).all()
    assert (gaps[-1] < 0.05 * exact).all()


def test_a_planted_ordering_is_ranked_the_same_at_every_epsilon():
    clouds = planted({"a": 0.0, "b": 0.4, "c": 1.1, "d": 2.3})
    table = epsilon_sensitivity(clouds, SETTINGS, [0.3, 0.1, 0.03], exact_max_points=100)
    stability = ranking_stability(table)
    assert set(stability["reference"]) == {"smallest_epsilon", EXACT}
    # 2 epsilons against the smallest, 3 against exact; 6 pairs each.
    assert len(stability) == 5 and (stability["n_pairs"] == 6).all()
    assert np.allclose(stability["kendall_tau"], 1.0)


def test_large_clouds_skip_the_exact_limit_with_a_note():
    clouds = planted({"a": 0.0, "b": 1.0, "c": 2.5}, n=24)
    table = epsilon_sensitivity(clouds, SETTINGS, [0.1, 0.05], exact_max_points=10)
    exact = table[table["epsilon"] == EXACT]
    assert exact["value"].isna().all() and not exact["converged"].any()
    assert exact["note"].str.contains("exact_max_points=10").all()
    stability = ranking_stability(table)
    assert list(stability["reference"]) == ["smallest_epsilon"]
    assert stability["epsilon"].tolist() == [0.1]
    assert stability["kendall_tau"].tolist() == [1.0]


@pytest.mark.parametrize("solver", ["sinkhorn", "exact"])
def test_the_runs_resolved_settings_serve_every_epsilon(solver):
    """The suite passes its resolved settings (annealed, or the exact solver of the paper)."""
    from regbias.distances.sinkhorn import resolve_settings

    clouds = planted({"a": 0.0, "b": 0.7})
    resolved = resolve_settings(
        packaged_sinkhorn(epsilon=0.01, pad_multiple=64, solver=solver), list(clouds.values())
    )
    table = epsilon_sensitivity(clouds, resolved, [0.3, 0.1], exact_max_points=100)
    sinkhorn_rows = table[table["epsilon"] != EXACT]
    assert len(sinkhorn_rows) == 2 and sinkhorn_rows["converged"].all()
    assert sinkhorn_rows["value"].nunique() == 2  # solved at each epsilon, not at the limit
