"""Pair tables, rank correlations and Mantel permutation p-values."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from regbias.analysis.correlation.table import correlations
from regbias.analysis.pair_table import PairTable, pairwise_table, read_pairwise_csv
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, DataError, RegbiasError


def _pairs(groups: list[str]) -> pd.DataFrame:
    rows = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    return pd.DataFrame(rows, columns=["group_a", "group_b"])


def _random_table(k: int, seed: int, n_distance: int = 1, n_performance: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    table = _pairs([f"g{i}" for i in range(k)])
    for i in range(n_distance):
        # Integer values force ties, which tau-b and average ranks must handle.
        table[f"dist_{i}"] = rng.integers(0, 5, len(table)).astype(float)
    for i in range(n_performance):
        table[f"gap_{i}"] = rng.normal(size=len(table)).round(1)
    return table


def _brute_force_p(table: pd.DataFrame, distance: str, performance: str) -> tuple[float, float]:
    """Exact Mantel p by looping over all relabellings of the performance matrix with scipy."""
    data = table[["group_a", "group_b", distance, performance]].dropna()
    groups = list(dict.fromkeys(data[["group_a", "group_b"]].to_numpy().ravel()))
    index = {g: i for i, g in enumerate(groups)}
    y_matrix = np.full((len(groups), len(groups)), np.nan)
    a = data.group_a.map(index).to_numpy()
    b = data.group_b.map(index).to_numpy()
    y_matrix[a, b] = y_matrix[b, a] = data[performance].to_numpy()
    x = data[distance].to_numpy()
    rho = stats.spearmanr(x, data[performance]).statistic
    tau = stats.kendalltau(x, data[performance]).statistic
    hits_rho = hits_tau = total = 0
    for perm in itertools.permutations(range(len(groups))):
        perm = np.array(perm)
        y = y_matrix[perm[a], perm[b]]
        kept = np.isfinite(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant relabelling: NaN
            moved_rho = stats.spearmanr(x[kept], y[kept]).statistic
            moved_tau = stats.kendalltau(x[kept], y[kept]).statistic
        # An undefined permuted statistic counts as at least as extreme (conservative).
        hits_rho += bool(np.isnan(moved_rho) or abs(moved_rho) >= abs(rho) - 1e-12)
        hits_tau += bool(np.isnan(moved_tau) or abs(moved_tau) >= abs(tau) - 1e-12)
        total += 1
    return hits_rho / total, hits_tau / total


# ----------------------------------------------------------------------- pairwise_table


def _matrix(name: str, groups: list[str], seed: int) -> DistanceMatrix:
    rng = np.random.default_rng(seed)
    values = rng.uniform(size=(3, len(groups), len(groups)))
    values = (values + values.transpose(0, 2, 1)) / 2
    for v in values:
        np.fill_diagonal(v, 0.0)
    return DistanceMatrix.from_repetitions(name, groups, values)


def test_pairwise_table_matches_pairs_in_either_order_and_keeps_the_union() -> None:
    short = _matrix("sinkhorn_short", ["au", "ca", "uk"], 0)
    lda = _matrix("lda", ["au", "ca", "uk", "us"], 1)
    gaps = pd.DataFrame(
        {
            "group_a": ["ca", "uk", "au"],
            "group_b": ["au", "au", "us"],
            "metric": ["accuracy", "accuracy", "accuracy"],
            "gap": [0.1, 0.2, 0.3],
        }
    )
    dcor = pd.DataFrame({"group_a": ["uk"], "group_b": ["ca"], "metric": ["auc"], "dcor": [0.9]})
    table = pairwise_table({"sinkhorn_short": short, "lda": lda}, gaps, dcor)

    assert list(table.columns) == [
        "group_a",
        "group_b",
        "dist_sinkhorn_short",
        "dist_lda",
        "gap_accuracy",
        "dcor_auc",
    ]
    assert len(table) == 6  # all pairs of au ca uk us
    row = table.set_index(["group_a", "group_b"])
    assert row.loc[("au", "ca"), "gap_accuracy"] == 0.1
    assert row.loc[("au", "uk"), "gap_accuracy"] == 0.2
    assert row.loc[("au", "us"), "gap_accuracy"] == 0.3
    assert row.loc[("ca", "uk"), "dcor_auc"] == 0.9
    assert row.loc[("ca", "uk"), "dist_sinkhorn_short"] == pytest.approx(short.value("ca", "uk"))
    assert row.loc[("ca", "us"), "dist_lda"] == pytest.approx(lda.value("us", "ca"))
    assert np.isnan(row.loc[("au", "us"), "dist_sinkhorn_short"])
    assert table["dcor_auc"].notna().sum() == 1


def test_pairwise_table_rejects_a_pair_given_twice() -> None:
    gaps = pd.DataFrame(
        {"group_a": ["au", "ca"], "group_b": ["ca", "au"], "metric": ["acc"] * 2, "gap": [1, 2]}
    )
    with pytest.raises(DataError, match="twice"):
        pairwise_table({}, gaps, None)
    with pytest.raises(DataError, match="lacks"):
        pairwise_table({}, gaps.drop(columns="gap"), None)


# ----------------------------------------------------------------------- correlations


def test_statistics_and_asymptotic_p_equal_scipy() -> None:
    table = _pairs(["au", "ca", "nz", "uk", "us"])
    table["dist_sinkhorn_long"] = [0.3, 0.1, 0.2, 0.9, 0.4, 0.5, 0.8, 0.3, 0.7, 1.0]
    table["gap_accuracy"] = [0.02, 0.01, 0.01, 0.05, 0.03, 0.02, 0.04, 0.00, 0.06, 0.08]
    table["dcor_auc"] = [0.9, 0.95, 0.9, 0.5, 0.6, 0.7, 0.4, 0.8, 0.3, 0.2]
    result = correlations(table)

    assert list(result.distance) == ["dist_sinkhorn_long"] * 2
    assert list(result.performance) == ["gap_accuracy", "dcor_auc"]
    for _, row in result.iterrows():
        x, y = table[row.distance], table[row.performance]
        assert row.n_pairs == 10
        assert row.n_groups == 5
        assert row.exact
        assert row.spearman_rho == pytest.approx(stats.spearmanr(x, y).statistic)
        assert row.spearman_p == pytest.approx(stats.spearmanr(x, y).pvalue)
        assert row.kendall_tau == pytest.approx(stats.kendalltau(x, y).statistic)
        assert row.kendall_p == pytest.approx(stats.kendalltau(x, y).pvalue)
    assert result.loc[0, "spearman_rho"] > 0.8
    assert result.loc[1, "spearman_rho"] < -0.8


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_permutation_p_equals_brute_force_on_five_groups(seed: int) -> None:
    table = _random_table(5, seed)
    row = correlations(table).iloc[0]
    rho_p, tau_p = _brute_force_p(table, "dist_0", "gap_0")

    assert row.exact
    assert row.spearman_p_perm == pytest.approx(rho_p, abs=1e-12)
    assert row.kendall_p_perm == pytest.approx(tau_p, abs=1e-12)
    assert row.spearman_p_perm * 120 == pytest.approx(round(row.spearman_p_perm * 120))


def test_exact_permutation_p_with_missing_pairs_equals_brute_force() -> None:
    table = _random_table(5, 3)
    table.loc[2, "gap_0"] = np.nan
    table.loc[7, "dist_0"] = np.nan
    row = correlations(table).iloc[0]
    rho_p, tau_p = _brute_force_p(table, "dist_0", "gap_0")

    assert row.n_pairs == 8
    assert row.spearman_p_perm == pytest.approx(rho_p, abs=1e-12)
    assert row.kendall_p_perm == pytest.approx(tau_p, abs=1e-12)


def test_a_group_missing_from_one_column_is_left_out_of_its_permutations() -> None:
    table = _random_table(6, 4, n_performance=2)
    absent = (table.group_a == "g5") | (table.group_b == "g5")
    table.loc[absent, "gap_1"] = np.nan
    result = correlations(table).set_index("performance")
    rho_p, tau_p = _brute_force_p(table, "dist_0", "gap_1")

    assert result.loc["gap_0", "n_groups"] == 6
    assert result.loc["gap_1", "n_groups"] == 5
    assert result.loc["gap_1", "n_pairs"] == 10
    assert result.loc["gap_1", "spearman_p_perm"] == pytest.approx(rho_p, abs=1e-12)
    assert result.loc["gap_1", "kendall_p_perm"] == pytest.approx(tau_p, abs=1e-12)


def test_random_permutations_are_seeded_and_approximate_the_exact_p() -> None:
    table = _random_table(6, 5)
    table["gap_0"] = table["dist_0"] + np.random.default_rng(9).normal(0, 1.5, len(table))
    exact = correlations(table).iloc[0]
    first = correlations(table, relabellings=3000, seed=7, exact_limit=0).iloc[0]
    again = correlations(table, relabellings=3000, seed=7, exact_limit=0).iloc[0]
    other = correlations(table, relabellings=3000, seed=8, exact_limit=0).iloc[0]

    assert exact.exact and not first.exact
    assert first.spearman_p_perm == again.spearman_p_perm
    assert first.kendall_p_perm == again.kendall_p_perm
    assert (first.spearman_p_perm, first.kendall_p_perm) != (
        other.spearman_p_perm,
        other.kendall_p_perm,
    )
    # The standard error of a p near 0.5 from 3000 draws is about 0.009.
    assert first.spearman_p_perm == pytest.approx(exact.spearman_p_perm, abs=0.04)
    assert first.kendall_p_perm == pytest.approx(exact.kendall_p_perm, abs=0.04)
    assert 0.0 < exact.spearman_p_perm < 1.0
    assert first.spearman_p_perm * 3001 == pytest.approx(round(first.spearman_p_perm * 3001))


def test_eight_groups_are_enumerated_exactly_for_many_columns() -> None:
    table = _random_table(8, 6, n_distance=3, n_performance=4)
    result = correlations(table)

    assert len(result) == 12
    assert result.exact.all()
    # Exact p-values are multiples of 1/8!.
    counts = result.spearman_p_perm * 40320
    assert np.allclose(counts, counts.round())
    assert result.spearman_p_perm.between(1 / 40320, 1).all()
    assert result.kendall_p_perm.between(1 / 40320, 1).all()


def test_a_perfect_correlation_is_the_most_extreme_permutation() -> None:
    table = _pairs([f"g{i}" for i in range(5)])
    # The distance is a sum of group positions: the relabellings that keep its ranking are
    # the identity and the reversal g_i -> g_{4-i} (which maps i+j to 8-(i+j)).
    table["dist_x"] = [i + j for i in range(5) for j in range(i + 1, 5)]
    table["gap_y"] = table["dist_x"] ** 2
    row = correlations(table).iloc[0]

    assert row.spearman_rho == pytest.approx(1.0)
    assert row.spearman_p_perm == pytest.approx(2 / 120)


def test_a_constant_column_gives_nan_not_an_error() -> None:
    table = _random_table(5, 0)
    table["gap_0"] = 1.0
    row = correlations(table).iloc[0]
    assert np.isnan(row.spearman_rho) and np.isnan(row.spearman_p_perm)
    assert np.isnan(row.kendall_tau) and np.isnan(row.kendall_p_perm)


def test_correlations_name_missing_columns() -> None:
    table = _random_table(5, 0)
    with pytest.raises(DataError, match="gap_auc"):
        correlations(table, ["dist_0"], ["gap_auc"])
    with pytest.raises(ConfigError, match="relabellings"):
        correlations(table, relabellings=0)


# ----------------------------------------------------------------------- read_pairwise_csv


def _write(tmp_path: Path, table: pd.DataFrame) -> Path:
    path = tmp_path / "pairs.csv"
    table.to_csv(path, index=False)
    return path


def test_read_pairwise_csv_reads_defaults_and_excludes(tmp_path: Path) -> None:
    table = _random_table(6, 0, n_distance=2, n_performance=1)
    table["dcor_auc"] = np.linspace(0, 1, len(table))
    table["note"] = "x"
    path = _write(tmp_path, table)

    pair_table = read_pairwise_csv(path, exclude_pairs=["g1-g0", ("g2", "g3")])
    assert isinstance(pair_table, PairTable)
    assert pair_table.distance_columns == ["dist_0", "dist_1"]
    assert pair_table.performance_columns == ["gap_0", "dcor_auc"]
    assert len(pair_table.frame) == 13
    assert "note" not in pair_table.frame.columns

    fewer = read_pairwise_csv(path, ["dist_1"], ["dcor_auc"], exclude_groups=["g5"])
    assert fewer.groups == ["g0", "g1", "g2", "g3", "g4"]
    assert len(fewer.frame) == 10
    result = correlations(fewer)
    assert list(result.distance) == ["dist_1"] and result.n_groups.iloc[0] == 5


def test_read_pairwise_csv_names_missing_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, _random_table(5, 0))
    with pytest.raises(DataError, match=r"missing column\(s\) \['gap_auc'\].*dist_0"):
        read_pairwise_csv(path, ["dist_0"], ["gap_auc"])
    no_pairs = _write(tmp_path, _random_table(5, 0).drop(columns="group_b"))
    with pytest.raises(DataError, match="group_b"):
        read_pairwise_csv(no_pairs)
    with pytest.raises(DataError, match="not found"):
        read_pairwise_csv(tmp_path / "absent.csv")


def test_read_pairwise_csv_names_a_non_numeric_cell(tmp_path: Path) -> None:
    table = _random_table(5, 0).astype({"gap_0": object})
    table.loc[3, "gap_0"] = "n/a?"
    with pytest.raises(DataError, match=r"'gap_0' is not numeric: row 4 .*'n/a\?'"):
        read_pairwise_csv(_write(tmp_path, table))


def test_read_pairwise_csv_needs_four_groups(tmp_path: Path) -> None:
    path = _write(tmp_path, _random_table(5, 0))
    with pytest.raises(RegbiasError, match="fewer than 4 groups: no meaningful rank test"):
        read_pairwise_csv(path, exclude_groups=["g0", "g1"])
    with pytest.raises(RegbiasError, match="fewer than 4 groups"):
        read_pairwise_csv(_write(tmp_path, _random_table(3, 0)))


def test_read_pairwise_csv_rejects_bad_pairs_and_exclusions(tmp_path: Path) -> None:
    path = _write(tmp_path, _random_table(5, 0))
    with pytest.raises(ConfigError, match="zz"):
        read_pairwise_csv(path, exclude_groups=["zz"])
    with pytest.raises(ConfigError, match="g0-zz"):
        read_pairwise_csv(path, exclude_pairs=["g0-zz"])
    duplicate = _random_table(5, 0)
    duplicate.loc[len(duplicate)] = ["g1", "g0", 1.0, 1.0]
    with pytest.raises(DataError, match="twice"):
        read_pairwise_csv(_write(tmp_path, duplicate))
    self_pair = _random_table(5, 0)
    self_pair.loc[0, "group_b"] = "g0"
    with pytest.raises(DataError, match="itself"):
        read_pairwise_csv(_write(tmp_path, self_pair))
