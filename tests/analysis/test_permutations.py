"""The shared Mantel machinery: p-values (NaN rule, one-sided), maxT against brute force."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from regbias.analysis.correlation.result import p_name
from regbias.analysis.correlation.table import correlations
from regbias.analysis.multiplicity import adjust_p, maxt_family
from regbias.analysis.permutations import (
    group_permutations,
    maxt_adjusted_p,
    permutation_p,
    permutation_p_values,
)
from regbias.errors import ConfigError


def _pairs(k: int) -> pd.DataFrame:
    groups = [f"g{i}" for i in range(k)]
    rows = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    return pd.DataFrame(rows, columns=["group_a", "group_b"])


def _relabelled(table: pd.DataFrame, column: str) -> list[np.ndarray]:
    """``column`` under every relabelling of the groups (itertools order, identity first)."""
    groups = list(dict.fromkeys(table[["group_a", "group_b"]].to_numpy().ravel()))
    index = {g: i for i, g in enumerate(groups)}
    a, b = table.group_a.map(index).to_numpy(), table.group_b.map(index).to_numpy()
    matrix = np.full((len(groups), len(groups)), np.nan)
    matrix[a, b] = matrix[b, a] = table[column].to_numpy()
    perms = [np.array(p) for p in itertools.permutations(range(len(groups)))]
    return [matrix[p[a], p[b]] for p in perms]


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    kept = np.isfinite(x) & np.isfinite(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: NaN, which is the point
        return float(stats.spearmanr(x[kept], y[kept]).statistic)


# ----------------------------------------------------------------------- p-values


def test_a_nan_permuted_statistic_counts_as_at_least_as_extreme() -> None:
    # Observed 0.5; permuted: NaN, 0.1, 0.7. Before the fix NaN stayed in the denominator only
    # (p = 2/4); counted as extreme it gives 3/4.
    null = np.array([0.5, np.nan, 0.1, 0.7])
    assert permutation_p(null) == pytest.approx(3 / 4)
    assert permutation_p(null, "greater") == pytest.approx(3 / 4)
    assert permutation_p(null, "less") == pytest.approx(3 / 4)  # 0.1 and NaN
    assert np.isnan(permutation_p(np.array([np.nan, 0.1, 0.2])))


def test_relabellings_that_leave_a_constant_column_count_as_extreme_in_correlations() -> None:
    """Missing pairs: some relabellings keep only tied distances, so their rho is undefined."""
    table = _pairs(5)
    keys = list(zip(table.group_a, table.group_b, strict=True))
    triangle = {("g0", "g1"), ("g0", "g2"), ("g1", "g2")}
    table["dist_x"] = [2.0 if key in triangle else 1.0 for key in keys]
    table["gap_y"] = np.random.default_rng(0).normal(size=len(table)).round(2)
    table.loc[table.group_a.isin(["g2", "g3"]) & table.group_b.isin(["g3", "g4"]), "gap_y"] = np.nan
    data = table.dropna()
    x = data["dist_x"].to_numpy()
    moved = [_spearman(x, y) for y in _relabelled(data, "gap_y")]
    observed = moved[0]
    undefined = int(np.isnan(moved).sum())
    hits = sum(abs(v) >= abs(observed) - 1e-12 for v in moved if np.isfinite(v))
    assert undefined > 0  # the case exercises the rule
    row = correlations(table).iloc[0]
    assert row.spearman_rho == pytest.approx(observed)
    assert row.spearman_p_perm == pytest.approx((hits + undefined) / 120)
    assert row.spearman_p_perm > hits / 120  # the old rule's p: anti-conservative


def test_one_sided_p_counts_one_tail() -> None:
    null = np.array([0.4, 0.5, -0.6, 0.4, 0.1, -0.2])
    assert permutation_p(null, "greater") == pytest.approx(3 / 6)  # itself, 0.5, 0.4
    assert permutation_p(null, "less") == pytest.approx(5 / 6)  # all but 0.5
    assert permutation_p(null) == pytest.approx(4 / 6)  # |s| >= 0.4: 0.5, -0.6, 0.4
    columns = permutation_p_values(np.column_stack([null, -null]), "greater")
    np.testing.assert_allclose(columns, [3 / 6, 5 / 6])


def test_random_relabellings_start_with_the_identity_and_are_seeded() -> None:
    first = group_permutations(9, 50, 3, 40320)
    assert first.shape == (51, 9) and (first[0] == np.arange(9)).all()
    np.testing.assert_array_equal(first, group_permutations(9, 50, 3, 40320))
    assert group_permutations(5, 50, 3, 40320).shape == (120, 5)


# ----------------------------------------------------------------------- maxT


def _maxt_by_hand(statistics: np.ndarray, step_down: bool) -> np.ndarray:
    """Westfall-Young maxT as a loop over tests and relabellings (two-sided)."""
    n, m = statistics.shape
    observed = np.abs(statistics[0])
    order = sorted(range(m), key=lambda j: -observed[j])
    out = np.zeros(m)
    running = 0.0
    for rank, j in enumerate(order):
        pool = order[rank:] if step_down else order
        hits = sum(
            max(abs(statistics[b, i]) for i in pool) >= observed[j] - 1e-12 for b in range(n)
        )
        running = max(running, hits / n) if step_down else hits / n
        out[j] = running
    return out


def _correlated_table(k: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    table = _pairs(k)
    base = rng.normal(size=len(table))
    table["dist_a"] = base + rng.normal(0, 0.5, len(table))
    table["dist_b"] = rng.normal(size=len(table))
    for i in range(3):
        table[f"gap_{i}"] = base + rng.normal(0, 1.0 + i, len(table))
    return table


@pytest.mark.parametrize("seed", [0, 1])
def test_maxt_equals_brute_force_over_the_shared_relabellings(seed: int) -> None:
    table = _correlated_table(5, seed)
    rows = [(d, p) for d in ("dist_a", "dist_b") for p in ("gap_0", "gap_1", "gap_2")]
    statistics = np.array(
        [
            [_spearman(x, y) for x, y in zip(xs, ys, strict=True)]
            for xs, ys in ((_relabelled(table, d), [table[p].to_numpy()] * 120) for d, p in rows)
        ]
    ).T  # (120 relabellings, 6 tests): relabelling the distance, as correlations() does
    found = correlations(table)
    assert list(zip(found.distance, found.performance, strict=True)) == rows
    np.testing.assert_allclose(found.spearman_rho, statistics[0])
    np.testing.assert_allclose(found.spearman_p_maxt, _maxt_by_hand(statistics, True))
    assert (found.maxt_method == "maxt").all()
    single = maxt_adjusted_p(statistics, step_down=False)
    np.testing.assert_allclose(single, _maxt_by_hand(statistics, False))

    raw = found.spearman_p_perm.to_numpy()
    adjusted = found.spearman_p_maxt.to_numpy()
    assert (adjusted >= raw - 1e-12).all() and (adjusted <= single + 1e-12).all()
    # The union bound: no more relabellings reach test j than the sum over tests.
    extreme = np.abs(statistics)
    union = [(extreme >= extreme[0, j] - 1e-12).sum() / 120 for j in range(len(rows))]
    assert (single <= np.minimum(1, union) + 1e-12).all()
    assert (found.kendall_p_maxt >= found.kendall_p_perm - 1e-12).all()


def test_maxt_undefined_permuted_values_are_extreme_and_nan_tests_left_out() -> None:
    nulls = np.array([[0.9, np.nan, 0.5], [0.2, 0.1, np.nan], [0.95, 0.3, 0.1], [0.1, 0.2, 0.3]])
    adjusted = maxt_adjusted_p(nulls)
    # Test 0 (|0.9|): relabellings 0 (itself), 1 (NaN: extreme) and 2 (0.95) reach it.
    assert adjusted[0] == pytest.approx(3 / 4)
    assert np.isnan(adjusted[1])
    assert adjusted[2] >= adjusted[0]


def test_rows_with_other_pairs_fall_back_to_holm_on_a_split_level() -> None:
    table = _correlated_table(6, 3)
    table.loc[4, "gap_2"] = np.nan  # gap_2 has other pairs than gap_0 and gap_1
    found = correlations(table).set_index(["distance", "performance"])
    fallback = found.maxt_method == "holm_fallback"
    assert list(found.index[fallback]) == [("dist_a", "gap_2"), ("dist_b", "gap_2")]
    assert (found.loc[~fallback, "maxt_method"] == "maxt_split").all()
    raw = found.loc[fallback, "spearman_p_perm"].to_numpy()
    np.testing.assert_allclose(
        found.loc[fallback, "spearman_p_maxt"], np.minimum(1, adjust_p(raw, "holm") * 6 / 2)
    )
    assert (found.spearman_p_maxt >= found.spearman_p_perm - 1e-12).all()
    p, methods = maxt_family(np.array([np.nan, 0.2]), [None, np.array([0.1, 0.3])], [0, 0])
    assert np.isnan(p[0]) and methods == ["", "maxt"]


def test_maxt_is_an_adjustment_choice_but_not_one_from_p_values() -> None:
    assert p_name("spearman", "maxt") == "spearman_p_maxt"
    with pytest.raises(ConfigError, match="nulls"):
        adjust_p(np.array([0.1, 0.2]), "maxt")
