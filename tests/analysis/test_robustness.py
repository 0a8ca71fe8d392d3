"""Robustness of correlations: LOGO, without baseline/mixed, bootstrap intervals, partial Mantel."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from regbias.analysis.correlation.result import correlation_frame
from regbias.analysis.correlation.table import correlations
from regbias.analysis.robustness.bootstrap import (
    bootstrap_intervals,
    bootstrap_replicates,
    weighted_dcor,
)
from regbias.analysis.robustness.checks import robustness
from regbias.analysis.robustness.leave_one_out import leave_one_group_out, without_groups
from regbias.analysis.robustness.partial_mantel import partial_mantel, size_covariate
from regbias.analysis.study import AnalysisSettings, StudyResults, analyse
from regbias.distances.matrix import DistanceMatrix
from tests.conftest import packaged

PERMUTATION = {"relabellings": 999, "seed": 0, "exact_limit": 40320}


def quick_settings(**changes: object) -> AnalysisSettings:
    """``analysis`` as packaged, with 99 relabellings and ``changes``."""
    return packaged(AnalysisSettings, "analysis", correlation={"relabellings": 99}, **changes)


def study_on_a_line(
    groups: list[str], seed: int, noise: float = 0.05, repetitions: int = 6, n_models: int = 8
) -> StudyResults:
    """Groups on a line: distance and accuracy gap both follow the position, plus noise."""
    rng = np.random.default_rng(seed)
    position = rng.uniform(0, 1, len(groups))
    base = np.abs(position[:, None] - position[None, :])
    values = base[None] + rng.normal(0, noise, (repetitions, len(groups), len(groups)))
    values = np.abs(values + values.transpose(0, 2, 1)) / 2
    for matrix in values:
        np.fill_diagonal(matrix, 0.0)
    distance = DistanceMatrix.from_repetitions("sinkhorn_long", groups, values)
    rows = [
        (f"s{m}", m, 0, g, r, metric, 0.9 - 0.2 * p + rng.normal(0, noise))
        for m in range(n_models)
        for g, p in zip(groups, position, strict=True)
        for r in range(2)
        for metric in ("accuracy", "roc_auc")
    ]
    columns = ["model", "seed", "fold", "group", "repetition", "metric", "value"]
    per_model = pd.DataFrame(rows, columns=columns)
    sizes = {g: int(n) for g, n in zip(groups, rng.integers(200, 5000, len(groups)), strict=True)}
    return StudyResults(list(groups), {"sinkhorn_long": distance}, per_model, sizes)


def _pair_frame(groups: list[str]) -> pd.DataFrame:
    rows = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    return pd.DataFrame(rows, columns=["group_a", "group_b"])


GROUPS = ["au", "ca", "nz", "uk", "us", "baseline"]


# ----------------------------------------------------------------------- DistanceMatrix


def test_distance_matrix_keeps_its_repetitions_through_pooling_and_json() -> None:
    one = study_on_a_line(GROUPS, 0, repetitions=3).distances["sinkhorn_long"]
    two = study_on_a_line(GROUPS, 1, repetitions=2).distances["sinkhorn_long"]
    assert one.repetitions is not None and one.repetitions.shape == (3, 6, 6)
    np.testing.assert_allclose(one.repetitions.mean(axis=0), one.mean)
    pooled = DistanceMatrix.pooled([one, two])
    assert pooled.repetitions.shape == (5, 6, 6)
    np.testing.assert_allclose(pooled.repetitions.mean(axis=0), pooled.mean)
    np.testing.assert_allclose(pooled.repetitions.std(axis=0, ddof=1), pooled.sd)

    data = one.to_dict()
    assert list(data)[:6] == ["name", "groups", "mean", "sd", "n_repetitions", "config"]
    assert list(data)[-1] == "repetitions"
    back = DistanceMatrix.from_dict(json.loads(json.dumps(data)))
    np.testing.assert_array_equal(back.repetitions, one.repetitions)

    # A repetition left out of one pair's mean (NaN) survives the JSON round trip.
    holes = one.repetitions.copy()
    holes[0, 0, 1] = holes[0, 1, 0] = np.nan
    holed = DistanceMatrix.from_repetitions(one.name, one.groups, holes)
    back = DistanceMatrix.from_dict(json.loads(json.dumps(holed.to_dict())))
    assert np.isnan(back.repetitions[0, 0, 1]) and back.mean[0, 1] == holes[1:, 0, 1].mean()

    bare = DistanceMatrix(one.name, one.groups, one.mean, one.sd, one.n_repetitions)
    assert "repetitions" not in bare.to_dict()
    assert DistanceMatrix.from_dict(bare.to_dict()).repetitions is None
    assert DistanceMatrix.pooled([bare, two]).repetitions is None


# ----------------------------------------------------------------------- bootstrap


def _dcor_by_hand(x: np.ndarray, y: np.ndarray) -> float:
    def centred(v: np.ndarray) -> np.ndarray:
        d = np.abs(v[:, None] - v[None, :])
        return d - d.mean(axis=0) - d.mean(axis=1)[:, None] + d.mean()

    a, b = centred(x), centred(y)
    return float(np.sqrt((a * b).mean() / np.sqrt((a * a).mean() * (b * b).mean())))


def test_weighted_dcor_is_the_dcor_of_the_resampled_models() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(size=(10, 4))
    values[:, 1] += values[:, 0] ** 2
    weights = np.vstack([np.ones(10), rng.multinomial(10, np.full(10, 0.1), 3)])
    found = weighted_dcor(values, weights.astype(float))
    for b, w in enumerate(weights):
        drawn = np.repeat(np.arange(10), w.astype(int))
        for g, h in itertools.combinations(range(4), 2):
            expected = _dcor_by_hand(values[drawn, g], values[drawn, h])
            assert found[b, g, h] == pytest.approx(expected, abs=1e-12)
    constant = np.column_stack([np.ones(10), values[:, 0]])
    assert np.isnan(weighted_dcor(constant, weights[:1].astype(float))[0, 0, 1])


def test_bootstrap_replicates_resample_both_noise_sources() -> None:
    results = study_on_a_line(GROUPS, 4)
    analysis = analyse(results, quick_settings(robustness={"resamples": 0}))
    table = analysis.pairwise
    replicates = bootstrap_replicates(table, results.distances, results.per_model, 200, 0)
    assert set(replicates) == {
        "dist_sinkhorn_long",
        "gap_accuracy",
        "gap_roc_auc",
        "dcor_accuracy",
        "dcor_roc_auc",
    }
    for column, values in replicates.items():
        assert values.shape == (200, len(table))
        assert values.std(axis=0).min() > 0, column  # every pair varies
        if column.startswith("dcor_"):
            # Models drawn twice make dcor larger: the ranks of the pairs are what is kept.
            assert stats.spearmanr(values.mean(axis=0), table[column]).statistic > 0.8
        else:
            np.testing.assert_allclose(values.mean(axis=0), table[column], atol=0.02)

    # A repetition left out of one pair's mean is skipped in that pair's replicates.
    holes = results.distances["sinkhorn_long"].repetitions.copy()
    holes[0, 0, 1] = holes[0, 1, 0] = np.nan
    holed = DistanceMatrix.from_repetitions("sinkhorn_long", GROUPS, holes)
    replicated = bootstrap_replicates(table, {"sinkhorn_long": holed}, None, 200, 0)
    assert np.isfinite(replicated["dist_sinkhorn_long"]).all()
    assert abs(replicated["dist_sinkhorn_long"][:, 0].mean() - holed.mean[0, 1]) < 0.02

    # One repetition and one model: nothing to resample, nothing returned, no interval.
    single = DistanceMatrix.from_repetitions(
        "sinkhorn_long", GROUPS, results.distances["sinkhorn_long"].repetitions[:1]
    )
    one_model = results.per_model[results.per_model["seed"] == 0]
    assert bootstrap_replicates(table, {"sinkhorn_long": single}, one_model, 50, 0) == {}
    intervals = bootstrap_intervals(table, correlation_frame(analysis.correlations), {}, 0.95)
    assert intervals[["spearman_ci_low", "kendall_ci_high"]].isna().all().all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_interval_contains_the_estimate_and_narrows_with_less_noise(seed: int) -> None:
    widths = []
    for noise in (0.02, 0.2):
        results = study_on_a_line(GROUPS, seed, noise=noise)
        analysis = analyse(results, quick_settings(robustness={"resamples": 300}))
        checks = analysis.robustness
        assert (checks["bootstrap_sources"] == "repetitions+models").all()
        for statistic, name in (("spearman_rho", "spearman"), ("kendall_tau", "kendall")):
            assert (checks[f"{name}_ci_low"] <= checks[statistic] + 1e-12).all()
            assert (checks[statistic] <= checks[f"{name}_ci_high"] + 1e-12).all()
        widths.append((checks["spearman_ci_high"] - checks["spearman_ci_low"]).mean())
    assert widths[0] < widths[1]


# ----------------------------------------------------------------------- group removal


def test_leave_one_group_out_runs_one_analysis_per_group() -> None:
    results = study_on_a_line(GROUPS, 5)
    table = analyse(results, quick_settings(robustness={"resamples": 0})).pairwise
    logo = leave_one_group_out(table, ["dist_sinkhorn_long"], ["gap_accuracy"], **PERMUTATION)
    assert list(logo["left_out"]) == GROUPS
    assert (logo["n_pairs"] == 10).all()  # 5 groups left: 10 pairs
    for row in logo.itertuples():
        kept = table[(table.group_a != row.left_out) & (table.group_b != row.left_out)]
        expected = stats.spearmanr(kept["dist_sinkhorn_long"], kept["gap_accuracy"]).statistic
        assert row.spearman_rho == pytest.approx(expected)

    found = correlations(table, ["dist_sinkhorn_long"], ["gap_accuracy"], **PERMUTATION)
    checks = robustness(table, found, n_bootstrap=0, **PERMUTATION)
    assert checks.loc[0, "loo_rho_min"] == pytest.approx(logo["spearman_rho"].min())
    assert checks.loc[0, "loo_rho_max"] == pytest.approx(logo["spearman_rho"].max())
    shift = (logo["spearman_rho"] - found.loc[0, "spearman_rho"]).abs()
    assert checks.loc[0, "loo_most_influential"] == logo.loc[shift.idxmax(), "left_out"]
    assert checks.loc[0, "survives_loo"] == bool(
        (logo["spearman_p_perm"] < 0.05).all()
        and (np.sign(logo["spearman_rho"]) == np.sign(found.loc[0, "spearman_rho"])).all()
    )


def test_without_baseline_drops_exactly_the_baseline_pairs() -> None:
    results = study_on_a_line(GROUPS, 6)
    table = analyse(results, quick_settings(robustness={"resamples": 0})).pairwise
    found = without_groups(table, ["baseline"], ["dist_sinkhorn_long"], ["gap_accuracy"])
    kept = table[(table.group_a != "baseline") & (table.group_b != "baseline")]
    assert len(kept) == 10 and found.loc[0, "n_pairs"] == 10
    expected = stats.spearmanr(kept["dist_sinkhorn_long"], kept["gap_accuracy"]).statistic
    assert found.loc[0, "spearman_rho"] == pytest.approx(expected)

    # The same p-values as correlations() on those pairs, enumerated or randomly relabelled.
    for exact_limit in (40320, 100):
        settings = {**PERMUTATION, "exact_limit": exact_limit}
        columns = (["dist_sinkhorn_long"], ["gap_accuracy", "dcor_accuracy", "gap_roc_auc"])
        fast = without_groups(table, ["baseline"], *columns, **settings)
        slow = correlations(kept, *columns, **settings)
        np.testing.assert_allclose(fast["spearman_rho"], slow["spearman_rho"])
        np.testing.assert_allclose(fast["spearman_p_perm"], slow["spearman_p_perm"])

    everything = correlations(table, ["dist_sinkhorn_long"], ["gap_accuracy"], **PERMUTATION)
    checks = robustness(table, everything, n_bootstrap=0, **PERMUTATION)
    assert checks.loc[0, "rho_without_baseline"] == pytest.approx(expected)
    # No `mixed` group here: the columns exist and say so with NaN.
    assert np.isnan(checks.loc[0, "rho_without_mixed"])
    assert np.isnan(checks.loc[0, "rho_without_baseline_mixed"])


# ----------------------------------------------------------------------- partial Mantel


def _size_table(k: int, seed: int) -> tuple[pd.DataFrame, dict[str, int]]:
    rng = np.random.default_rng(seed)
    groups = [f"g{i}" for i in range(k)]
    sizes = {g: int(n) for g, n in zip(groups, rng.integers(100, 20000, k), strict=True)}
    table = _pair_frame(groups)
    table["size"] = size_covariate(table, sizes)
    position = rng.normal(size=(k, 2))  # independent of size
    a = table.group_a.map({g: i for i, g in enumerate(groups)}).to_numpy()
    b = table.group_b.map({g: i for i, g in enumerate(groups)}).to_numpy()
    table["dist_real"] = np.linalg.norm(position[a] - position[b], axis=1)
    table["gap_real"] = table["dist_real"] + rng.normal(0, 0.1, len(table))
    # A size bias that grows with the covariate, spread out beyond the noise (the 1/n terms
    # themselves are ~1e-3 and skewed); rank statistics see only its order.
    bias = 0.05 * stats.rankdata(table["size"])
    table["dist_size"] = bias + rng.normal(0, 0.1, len(table))
    table["gap_size"] = bias + rng.normal(0, 0.1, len(table))
    return table, sizes


@pytest.mark.parametrize("seed", [0, 1])
def test_partial_mantel_separates_a_real_distance_from_group_size(seed: int) -> None:
    table, sizes = _size_table(8, seed)
    found = partial_mantel(table, ["dist_real", "dist_size"], ["gap_real", "gap_size"], sizes)
    found = found.set_index(["distance", "performance"])
    assert found.loc[("dist_real", "gap_real"), "partial_p"] < 0.01
    # Size drives both: the plain Mantel test is fooled, the partial one is not.
    plain = correlations(table, ["dist_size"], ["gap_size"])
    assert plain.loc[0, "spearman_p_perm"] < 0.01
    assert abs(plain.loc[0, "spearman_rho"]) > 0.9
    assert found.loc[("dist_size", "gap_size"), "partial_p"] > 0.05
    assert abs(found.loc[("dist_size", "gap_size"), "partial_rho"]) < 0.5
    assert abs(found.loc[("dist_size", "gap_size"), "size_rho"]) > 0.9


def test_size_covariate_is_the_sum_of_inverse_sizes_the_shape_of_the_bias() -> None:
    sizes = {"a": 100, "b": 20000, "c": 1000, "d": 1000, "e": 5000}
    table = _pair_frame(list(sizes))
    covariate = size_covariate(table, sizes)
    expected = [
        1 / sizes[a] + 1 / sizes[b] for a, b in zip(table.group_a, table.group_b, strict=True)
    ]
    np.testing.assert_allclose(covariate, expected)
    # A 100-and-20,000 pair is more biased than a 1,000-and-1,000 pair (log n_a + log n_b
    # would rank it lower).
    pair = {(a, b): v for a, b, v in zip(table.group_a, table.group_b, covariate, strict=True)}
    assert pair[("a", "b")] > pair[("c", "d")]
    assert np.isnan(size_covariate(table, {**sizes, "e": 0})[table.group_b == "e"]).all()

    # A distance that is the finite-sample bias alone: the covariate ranks it exactly, and the
    # partial correlation is undefined (the covariate determines the distance).
    table["dist_bias"] = 3.0 + 50 * covariate
    table["gap_y"] = np.random.default_rng(0).normal(size=len(table))
    found = partial_mantel(table, ["dist_bias"], ["gap_y"], sizes)
    assert found.loc[0, "size_rho"] == pytest.approx(1.0)
    assert np.isnan(found.loc[0, "partial_rho"]) and np.isnan(found.loc[0, "partial_p"])


def _residual(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    design = np.column_stack([np.ones_like(v), v])
    return u - design @ np.linalg.lstsq(design, u, rcond=None)[0]


def test_partial_mantel_matches_residual_ranks_and_a_permutation_loop() -> None:
    table, sizes = _size_table(6, 7)
    table["gap_mixed"] = table["gap_real"] + 0.5 * table["dist_size"]
    found = partial_mantel(table, ["dist_real"], ["gap_mixed"], sizes)
    x, y, z = (stats.rankdata(table[c]) for c in ("dist_real", "gap_mixed", "size"))
    expected = np.corrcoef(_residual(x, z), _residual(y, z))[0, 1]
    assert found.loc[0, "partial_rho"] == pytest.approx(expected)

    # Brute force: relabel the performance matrix by every permutation of the 6 groups.
    groups = list(dict.fromkeys(table[["group_a", "group_b"]].to_numpy().ravel()))
    index = {g: i for i, g in enumerate(groups)}
    a, b = table.group_a.map(index).to_numpy(), table.group_b.map(index).to_numpy()
    y_matrix = np.zeros((6, 6))
    y_matrix[a, b] = y_matrix[b, a] = table["gap_mixed"]
    hits = 0
    for perm in itertools.permutations(range(6)):
        perm = np.array(perm)
        moved = stats.rankdata(y_matrix[perm[a], perm[b]])
        value = np.corrcoef(_residual(x, z), _residual(moved, z))[0, 1]
        hits += abs(value) >= abs(expected) - 1e-12
    assert found.loc[0, "partial_p"] == pytest.approx(hits / 720)

    # A missing pair takes the masked path; its statistic is that of the remaining pairs.
    missing = table.copy()
    missing.loc[2, "gap_mixed"] = np.nan
    kept = missing.dropna(subset=["gap_mixed"])
    x, y, z = (stats.rankdata(kept[c]) for c in ("dist_real", "gap_mixed", "size"))
    partial = partial_mantel(missing, ["dist_real"], ["gap_mixed"], sizes)
    expected = np.corrcoef(_residual(x, z), _residual(y, z))[0, 1]
    assert partial.loc[0, "partial_rho"] == pytest.approx(expected)
    assert 0 < partial.loc[0, "partial_p"] <= 1


# ----------------------------------------------------------------------- analyse


def test_analyse_carries_robustness_and_headline_columns() -> None:
    groups = ["au", "ca", "nz", "uk", "us", "mixed", "baseline"]
    results = study_on_a_line(groups, 8)
    analysis = analyse(results, quick_settings(robustness={"resamples": 200}))
    found, checks = correlation_frame(analysis.correlations), analysis.robustness
    assert len(checks) == len(found) == 4  # 1 distance x (2 gaps + 2 dcor)
    for column in ("spearman_ci_low", "spearman_ci_high", "loo_rho_min", "loo_rho_max"):
        np.testing.assert_array_equal(found[column], checks[column])
    assert checks["rho_without_mixed"].notna().all()
    assert checks["rho_without_baseline_mixed"].notna().all()
    assert checks["partial_p"].between(0, 1).all()
    assert (checks["loo_rho_min"] <= checks["loo_rho_max"]).all()
