"""Stage II solver options: agreement with POT, the exact backend, batched solves, failures."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import ot
import pytest

from regbias.distances.sinkhorn import divergence as sinkhorn
from regbias.distances.sinkhorn import (
    resolve_settings,
    sinkhorn_divergence,
    sinkhorn_matrix,
    solve_ot,
)
from regbias.distances.sinkhorn import settings as sinkhorn_settings
from regbias.distances.sinkhorn import solve as ott_solve
from regbias.distances.sinkhorn.exact import exact_ot
from regbias.errors import ConfigError
from tests.settings import packaged_sinkhorn

EPSILON = 0.05
BASE = packaged_sinkhorn(epsilon=EPSILON, pad_multiple=64, threshold=1e-5, solver="sinkhorn")

# Every way of solving a term the settings offer, at one epsilon.
OPTIONS = {
    "default": BASE,
    "annealed from 20x": replace(BASE, anneal_init=20.0, anneal_decay=0.9),
    "no annealing": replace(BASE, anneal=False),
    "momentum": replace(BASE, anneal=False, momentum=1.5, inner_iterations=5),
    "check every iteration": replace(BASE, inner_iterations=1),
    "online cost": replace(BASE, batch_size=16),
    "per pair": replace(BASE, batch_pairs=False),
}


def cloud(n: int, dim: int = 8, shift: float = 0.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, dim)) / np.sqrt(dim) + shift).astype(np.float32)


def pot_reg_ot(x: np.ndarray, y: np.ndarray, eps: float) -> float:
    """OTT's ``reg_ot_cost``, <P, C> + eps KL(P | a b^T), from POT's log-domain plan (float64)."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    a, b = np.full(len(x), 1 / len(x)), np.full(len(y), 1 / len(y))
    cost = ot.dist(x64, y64)
    plan = ot.sinkhorn(a, b, cost, eps, method="sinkhorn_log", stopThr=1e-8, numItermax=20_000)
    positive = plan > 0
    kl = np.sum(plan[positive] * np.log(plan[positive] / np.outer(a, b)[positive]))
    return float(np.sum(plan * cost) + eps * kl)


@pytest.fixture(scope="module")
def pair() -> tuple[np.ndarray, np.ndarray]:
    return cloud(48, seed=1), cloud(40, shift=0.4, seed=2)


@pytest.fixture(scope="module")
def pot_terms(pair) -> dict[str, float]:
    x, y = pair
    return {
        "xy": pot_reg_ot(x, y, EPSILON),
        "xx": pot_reg_ot(x, x, EPSILON),
        "yy": pot_reg_ot(y, y, EPSILON),
    }


@pytest.mark.parametrize("option", list(OPTIONS))
def test_every_option_converges_to_pots_divergence(option, pair, pot_terms):
    x, y = pair
    result = sinkhorn_divergence(x, y, OPTIONS[option])
    assert all(term.converged for term in (result.xy, result.xx, result.yy))
    assert result.xy.cost == pytest.approx(pot_terms["xy"], rel=1e-4)
    expected = pot_terms["xy"] - 0.5 * (pot_terms["xx"] + pot_terms["yy"])
    assert result.divergence == pytest.approx(expected, rel=2e-3)


def test_exact_solver_equals_pots_emd2(pair):
    x, y = pair
    expected = ot.emd2([], [], ot.dist(x.astype(np.float64), y.astype(np.float64)))
    term = solve_ot(x, y, replace(BASE, solver="exact"))
    assert term.converged and term.cost == pytest.approx(expected, rel=1e-9)
    own = solve_ot(x, x, replace(BASE, solver="exact"), symmetric=True)
    assert own.cost == 0.0 and own.converged
    weights = np.linspace(1.0, 2.0, len(x))
    weighted, _ = exact_ot(x, y, (weights, None))
    cost = ot.dist(x.astype(np.float64), y.astype(np.float64))
    assert weighted == pytest.approx(
        ot.emd2(weights / weights.sum(), np.full(len(y), 1 / len(y)), cost), rel=1e-9
    )


def test_exact_solver_is_the_small_epsilon_limit_of_sinkhorn(pair):
    x, y = pair
    exact = sinkhorn_divergence(x, y, replace(BASE, solver="exact")).divergence
    small = sinkhorn_divergence(x, y, replace(BASE, epsilon=0.002, threshold=1e-4)).divergence
    assert small == pytest.approx(exact, rel=0.02)


def test_exact_matrix_says_which_solver_and_reports_converged_rows():
    draws = [
        {g: cloud(30, shift=0.2 * k, seed=k + 5 * r) for k, g in enumerate("abc")} for r in (0, 1)
    ]
    matrix, table = sinkhorn_matrix(draws, replace(BASE, solver="exact"), progress=False)
    assert matrix.config["solver"] == "exact"
    assert table[["xy_converged", "xx_converged", "yy_converged"]].to_numpy().all()
    assert (table["epsilon"] == 0.0).all() and (table["xx_cost"] == 0.0).all()
    row = table.iloc[0]
    x, y = draws[0][row.group_a], draws[0][row.group_b]
    expected = ot.emd2([], [], ot.dist(x.astype(np.float64), y.astype(np.float64)))
    assert row.divergence == pytest.approx(expected, rel=1e-9)


def test_auto_solver_takes_the_exact_limit_only_at_small_relative_epsilon():
    x, y = spiky_pair()  # mean pooled cost ~128
    auto = packaged_sinkhorn(epsilon=0.005)
    assert resolve_settings(auto, [x, y]).solver == "exact"
    assert resolve_settings(replace(auto, epsilon=None), [x, y]).solver == "sinkhorn"
    assert resolve_settings(replace(auto, exact_max_points=50), [x, y]).solver == "sinkhorn"
    matrix, table = sinkhorn_matrix([{"a": x, "b": y}], auto, progress=False)
    assert matrix.config["solver"] == "exact" and table["xy_converged"].all()
    matrix, _ = sinkhorn_matrix([{"a": x, "b": y}], replace(auto, epsilon=None), progress=False)
    assert matrix.config["solver"] == "sinkhorn"


def test_unknown_solver_is_a_config_error():
    with pytest.raises(ConfigError, match="solver"):
        packaged_sinkhorn(solver="emd")


def record_call_widths(monkeypatch) -> list[int]:
    """How many problems each compiled Sinkhorn call solves, in call order."""
    widths: list[int] = []
    original = ott_solve.run_padded

    def recording(problems, *args, **kwargs):
        widths.append(len(problems))
        return original(problems, *args, **kwargs)

    monkeypatch.setattr(ott_solve, "run_padded", recording)
    return widths


@pytest.mark.parametrize("backend", ["cpu", "gpu"])  # one lane at a time, or all vmapped
def test_batched_pairs_give_the_per_pair_values(backend, monkeypatch):
    monkeypatch.setattr(ott_solve.jax, "default_backend", lambda: backend)
    groups = ["au", "ca", "uk", "us", "za"]
    draws = [
        {g: cloud(25 + 4 * k, shift=0.15 * k, seed=10 * r + k) for k, g in enumerate(groups)}
        for r in range(2)
    ]
    settings = packaged_sinkhorn(epsilon=0.05, pad_multiple=64)
    calls = record_call_widths(monkeypatch)
    _, batched = sinkhorn_matrix(draws, settings, progress=False)
    assert calls == [5, 10] * 2  # per repetition: the self terms, then the cross terms
    _, per_pair = sinkhorn_matrix(draws, replace(settings, batch_pairs=False), progress=False)
    for column in ("divergence", "xy_cost", "xx_cost", "yy_cost"):
        assert np.allclose(batched[column], per_pair[column], rtol=1e-5, atol=1e-7), column
    for column in ("xy_converged", "xy_iterations", "xx_iterations"):
        assert (batched[column] == per_pair[column]).all(), column


def test_batches_are_split_into_equal_chunks_under_the_memory_bound(monkeypatch):
    monkeypatch.setattr(ott_solve, "BATCH_BYTES", 3 * 4 * 64 * 64 * 4)  # four problems at most
    widths = record_call_widths(monkeypatch)
    draw = {g: cloud(30, shift=0.1 * k, seed=k) for k, g in enumerate("abcdef")}
    _, table = sinkhorn_matrix(
        [draw], packaged_sinkhorn(epsilon=0.05, pad_multiple=64), progress=False
    )
    assert widths == [3, 3, 4, 4, 4, 4]  # 6 self terms in 2 x 3; 15 pairs in 4 x 4 (one filler)
    assert len(table) == 15 and table["xy_converged"].all()


def spiky_pair() -> tuple[np.ndarray, np.ndarray]:
    """Points on a sphere of radius 8 in 16 dimensions: costs ~128, like MiniLM tokens."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(100, 16)), rng.normal(size=(100, 16))
    x = 8 * x / np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), (8 * y / np.linalg.norm(y, axis=1, keepdims=True)).astype(
        np.float32
    )


def test_a_non_finite_solve_is_never_converged_and_falls_back_to_plain_updates():
    x, y = spiky_pair()
    # The case: no annealing, momentum 1.5, epsilon 0.005 on costs ~128 ends at -inf.
    fast = packaged_sinkhorn(
        epsilon=0.005,
        anneal=False,
        momentum=1.5,
        inner_iterations=5,
        solver="sinkhorn",
        updates="log",
    )
    size = 128
    problem = (*ott_solve.pad(x, None, size), *ott_solve.pad(y, None, size))
    raw = ott_solve.run_padded([problem], fast, size, symmetric=False)[0]
    assert not np.isfinite(raw.cost) and not raw.converged
    with pytest.warns(RuntimeWarning, match="non-finite"):
        term = solve_ot(x, y, replace(fast, max_iterations=200))
    assert np.isfinite(term.cost)


@pytest.mark.parametrize("fallback", [True, False])
def test_a_non_finite_divergence_is_never_averaged(fallback, monkeypatch):
    x, y = spiky_pair()
    settings = packaged_sinkhorn(
        epsilon=0.005,
        anneal=False,
        momentum=1.5,
        inner_iterations=5,
        max_iterations=50,
        solver="sinkhorn",
        updates="log",
    )
    if not fallback:  # the plain re-solve fails too: the row stays non-finite
        monkeypatch.setattr(sinkhorn, "retry", lambda *args, **kwargs: args[3])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        matrix, table = sinkhorn_matrix([{"a": x, "b": y}], settings, progress=False)
    assert any("non-finite" in str(w.message) for w in caught)
    assert not table["xy_converged"].any()
    assert np.isfinite(table["divergence"].iloc[0]) == fallback
    if not fallback:  # left out even though unconverged rows are kept (exclude off)
        assert np.isnan(matrix.mean[0, 1]) and matrix.excluded[0, 1] == 1


def test_online_mode_holds_no_dense_cost_matrix():
    """Paper-scale memory, checked at a reduced size: compiled temporaries stay O(n x batch)."""
    import jax.numpy as jnp

    n, batch = 2048, 128
    online = ott_solve.solver_for(
        packaged_sinkhorn(batch_size=batch, max_iterations=20), n, symmetric=False
    )
    dense = replace(online, batch_size=None)
    x = jnp.zeros((n, 32), jnp.float32)
    w = jnp.full((n,), 1.0 / n, jnp.float32)
    args = (x, x, w, w, jnp.float32(0.1), jnp.float32(1.0))

    def temp_bytes(solver):
        compiled = ott_solve._solve_arrays.lower(*args, solver=solver).compile()
        return compiled.memory_analysis().temp_size_in_bytes

    assert temp_bytes(dense) >= 4 * n * n  # the dense path holds the n x n cost
    assert temp_bytes(online) < 4 * n * n // 4


def test_batched_pairs_in_online_mode_give_the_dense_values():
    draw = {g: cloud(30 + 5 * k, shift=0.2 * k, seed=k) for k, g in enumerate("abc")}
    settings = packaged_sinkhorn(epsilon=0.05, pad_multiple=64)
    _, dense = sinkhorn_matrix([draw], settings, progress=False)
    _, online = sinkhorn_matrix([draw], replace(settings, batch_size=16), progress=False)
    assert np.allclose(online["divergence"], dense["divergence"], rtol=1e-5, atol=1e-7)
    assert online["xy_converged"].all()


KERNEL_EPSILON = 0.2  # 8% of the mean pooled cost of `pair`: kernel updates


@pytest.mark.parametrize("momentum", [None, 1.5])
def test_kernel_updates_converge_to_pots_divergence_and_the_log_updates_value(pair, momentum):
    x, y = pair
    kernel = replace(BASE, epsilon=KERNEL_EPSILON, anneal=False, momentum=momentum)
    assert resolve_settings(kernel, [x, y]).updates == "auto"  # not resolved to log
    assert ott_solve.solver_for(kernel, 64, symmetric=False).kernel  # auto: dense, not annealed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to log updates
        result = sinkhorn_divergence(x, y, kernel)
    assert all(term.converged for term in (result.xy, result.xx, result.yy))
    terms = {
        t: pot_reg_ot(p, q, KERNEL_EPSILON) for t, (p, q) in {"xy": (x, y), "xx": (x, x)}.items()
    }
    assert result.xy.cost == pytest.approx(terms["xy"], rel=1e-4)
    assert result.xx.cost == pytest.approx(terms["xx"], rel=1e-4)
    logged = sinkhorn_divergence(x, y, replace(kernel, updates="log"))
    assert result.divergence == pytest.approx(logged.divergence, rel=1e-4)


def test_auto_updates_are_kernel_only_for_dense_solves_at_one_epsilon():
    fixed = packaged_sinkhorn(epsilon=1.0, anneal=False)
    assert ott_solve.solver_for(fixed, 64, symmetric=False).kernel
    annealed = packaged_sinkhorn(epsilon=1.0, anneal_init=10.0)
    assert not ott_solve.solver_for(annealed, 64, symmetric=False).kernel
    assert ott_solve.solver_for(annealed, 64, symmetric=True).kernel  # self terms never anneal
    assert not ott_solve.solver_for(replace(fixed, batch_size=16), 64, symmetric=False).kernel
    assert not ott_solve.solver_for(replace(fixed, updates="log"), 64, symmetric=False).kernel
    with pytest.raises(ConfigError, match="updates=kernel needs one fixed epsilon"):
        ott_solve.solver_for(replace(annealed, updates="kernel"), 64, symmetric=False)
    with pytest.raises(ConfigError, match="updates"):
        packaged_sinkhorn(updates="scaling")
    with pytest.raises(ConfigError, match="updates=kernel needs one fixed epsilon"):
        packaged_sinkhorn(updates="kernel", batch_size=16)  # caught when the settings are read


def test_kernel_updates_survive_a_point_far_from_the_other_cloud(pair):
    x, y = pair  # at epsilon 0.05 a point lies ~64 epsilons from the other cloud
    settings = replace(BASE, anneal=False, threshold=1e-3, updates="kernel")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the reduced cost keeps its kernel row: no fallback
        term = solve_ot(x, y, settings)
    assert term.converged
    expected = solve_ot(x, y, replace(settings, updates="log"))
    assert term.cost == pytest.approx(expected.cost, rel=1e-5)


def test_auto_updates_are_log_where_most_of_the_kernel_would_underflow(pair):
    x, y = pair
    cost = sinkhorn_settings.mean_pooled_cost([x, y])
    fixed = replace(BASE, anneal=False, epsilon=sinkhorn_settings.KERNEL_ABOVE * cost * 1.01)
    assert resolve_settings(fixed, [x, y]).updates == "auto"  # kernel
    below = replace(fixed, epsilon=sinkhorn_settings.KERNEL_ABOVE * cost * 0.99)
    assert resolve_settings(below, [x, y]).updates == "log"
    assert resolve_settings(replace(below, updates="kernel"), [x, y]).updates == "kernel"


def test_a_failed_kernel_solve_is_redone_in_the_log_domain(pair):
    x, y = pair
    forced = replace(BASE, epsilon=0.002, anneal=False, updates="kernel", max_iterations=200)
    size = 64
    problem = (*ott_solve.pad(x, None, size), *ott_solve.pad(y, None, size))
    raw = ott_solve.run_padded([problem], forced, size, symmetric=False)[0]
    assert not raw.converged
    with pytest.warns(RuntimeWarning, match="kernel updates .* did not converge"):
        term = solve_ot(x, y, forced)
    expected = solve_ot(x, y, replace(forced, updates="log"))
    assert term.cost == expected.cost and term.converged == expected.converged


def test_a_kernel_state_with_an_empty_kernel_row_is_never_trusted():
    """OTT divides by a zero kernel sum as if it were 1: such a final state is not converged."""
    from types import SimpleNamespace

    import jax.numpy as jnp

    kernel = jnp.array([[1.0, 0.5], [0.0, 0.0]])  # point 1 of x reaches no point of y
    geom = ott_solve._FixedKernel(
        cost_matrix=-jnp.log(kernel + 1e-30), kernel_matrix=kernel, epsilon=1.0
    )
    out = SimpleNamespace(f=jnp.zeros(2), g=jnp.zeros(2))
    half = jnp.array([0.5, 0.5])
    assert not ott_solve._no_underflow(geom, out, half, half)
    assert ott_solve._no_underflow(geom, out, jnp.array([1.0, 0.0]), half)  # a weightless point
    full = ott_solve._FixedKernel(
        cost_matrix=jnp.zeros((2, 2)), kernel_matrix=jnp.ones((2, 2)), epsilon=1.0
    )
    assert ott_solve._no_underflow(full, out, half, half)


def test_exact_problems_solved_at_once_equal_one_at_a_time_and_stop_between_results():
    from regbias.distances.sinkhorn.exact import exact_ot_many

    problems = [(cloud(30, seed=k), cloud(25, shift=0.2 * k, seed=k + 10)) for k in range(5)]
    seen = []
    results = exact_ot_many(problems, lambda: seen.append(1), workers=2)
    assert results == [exact_ot(x, y) for x, y in problems] and len(seen) == 5

    def stop() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        exact_ot_many(problems, stop, workers=2)


def test_exact_solves_at_once_are_bounded_by_memory(monkeypatch):
    from regbias.distances.sinkhorn import exact

    problems = [(cloud(100), cloud(100, seed=1))] * 6
    per_problem = exact.BYTES_PER_ENTRY * 100 * 100
    monkeypatch.setattr(exact, "_available_memory", lambda: int(3 * per_problem / 0.8) + 1)
    assert exact.exact_workers(problems, workers=8) == 3
    assert exact.exact_workers(problems, workers=2) == 2  # the CPUs bound it first
    monkeypatch.setattr(exact, "_available_memory", lambda: 10)
    assert exact.exact_workers(problems, workers=8) == 1  # larger than memory: still runs, alone


def test_cpu_calls_hold_a_bounded_number_of_cost_entries(monkeypatch):
    """On a CPU a stop waits for the batched call to end: big problems go a few at a time."""
    monkeypatch.setattr(ott_solve.jax, "default_backend", lambda: "cpu")
    monkeypatch.setattr(ott_solve, "CPU_CALL_ENTRIES", 2 * 64 * 64)  # two 64-point problems
    widths = record_call_widths(monkeypatch)
    draw = {g: cloud(30, shift=0.1 * k, seed=k) for k, g in enumerate("abcdef")}
    settings = packaged_sinkhorn(epsilon=0.05, pad_multiple=64)
    _, table = sinkhorn_matrix([draw], settings, progress=False)
    assert widths == [2] * 3 + [2] * 8  # 6 self terms; 15 pairs in 8 x 2 (one filler)
    monkeypatch.setattr(ott_solve, "CPU_CALL_ENTRIES", 1 << 27)
    _, whole = sinkhorn_matrix([draw], settings, progress=False)
    assert np.allclose(table["divergence"], whole["divergence"], rtol=1e-5)


def test_exact_noise_floors_are_one_exact_solve_each():
    from regbias.distances.sinkhorn.floors import sinkhorn_floors

    groups = ["a", "b", "c"]
    main = [
        {g: cloud(20 + k, shift=0.1 * k, seed=r * 10 + k) for k, g in enumerate(groups)}
        for r in range(2)
    ]
    twins = [
        {g: cloud(20 + k, shift=0.1 * k, seed=50 + r * 10 + k) for k, g in enumerate(groups)}
        for r in range(2)
    ]
    exact_settings = resolve_settings(packaged_sinkhorn(epsilon=0.005, solver="exact"), None)
    _, table = sinkhorn_matrix(main, exact_settings, progress=False)
    floor, floor_sd = sinkhorn_floors(main, twins, table, exact_settings, 64, progress=False)
    values = np.array(
        [[exact_ot(m[g], t[g])[0] for g in groups] for m, t in zip(main, twins, strict=True)]
    )
    assert np.allclose(floor, values.mean(axis=0)) and np.allclose(floor_sd, values.std(0, ddof=1))


def test_resolved_settings_are_resolved_once_and_kept():
    x, y = cloud(40), cloud(40, shift=0.3, seed=2)
    resolved = resolve_settings(packaged_sinkhorn(epsilon=None), [x, y])
    assert isinstance(resolved, sinkhorn_settings.ResolvedSinkhorn)
    assert resolve_settings(resolved, [x * 10, y]) is resolved  # the run's epsilon stays
    assert not sinkhorn_settings.needs_calibration(resolved)
    assert sinkhorn_settings.needs_calibration(packaged_sinkhorn(epsilon=0.05))  # solver auto
    with pytest.raises(ValueError, match="needs the run's clouds"):
        resolve_settings(packaged_sinkhorn(epsilon=None), None)
