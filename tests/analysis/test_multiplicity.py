"""Holm and Benjamini-Hochberg adjustment of the correlation table's permutation p-values."""

from __future__ import annotations

from typing import get_args

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.correlation.result import p_name
from regbias.analysis.correlation.table import correlations
from regbias.analysis.multiplicity import ADJUSTMENTS, Adjustment, adjust_p
from regbias.errors import ConfigError


def _holm_by_hand(p: list[float]) -> list[float]:
    """Textbook step-down: walk the sorted p-values, never letting the adjusted one decrease."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh_by_hand(p: list[float]) -> list[float]:
    """Step-up: the adjusted p of rank r is the smallest m p(j) / j over ranks j >= r."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(min(1.0, m * p[order[j]] / (j + 1)) for j in range(rank, m))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_holm_and_bh_agree_with_a_loop_and_are_monotone(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Ties and tiny values, as exact permutation p-values have.
    p = np.concatenate([rng.uniform(0, 0.05, 5), rng.uniform(size=20), [0.01, 0.01, 1.0]])
    rng.shuffle(p)
    for method, by_hand in (("holm", _holm_by_hand), ("bh", _bh_by_hand)):
        adjusted = adjust_p(p, method)
        np.testing.assert_allclose(adjusted, by_hand(p.tolist()), rtol=1e-12)
        assert (adjusted >= p - 1e-15).all() and (adjusted <= 1).all()
        order = np.argsort(p, kind="stable")
        assert (np.diff(adjusted[order]) >= -1e-15).all()
    assert (adjust_p(p, "holm") >= adjust_p(p, "bh") - 1e-15).all()


def test_known_values_and_nan_left_out_of_the_family() -> None:
    p = np.array([0.01, np.nan, 0.04, 0.03, 0.2])
    # Four tests: Holm multiplies the sorted p by 4, 3, 2, 1 and keeps it non-decreasing.
    np.testing.assert_allclose(adjust_p(p, "holm"), [0.04, np.nan, 0.09, 0.09, 0.2])
    np.testing.assert_allclose(adjust_p(p, "bh"), [0.04, np.nan, 0.0533333333, 0.0533333333, 0.2])
    np.testing.assert_array_equal(adjust_p(p, "none"), p)
    assert np.isnan(adjust_p(np.array([np.nan, np.nan]), "holm")).all()
    with pytest.raises(ConfigError, match="holm"):
        adjust_p(p, "bonferroni")
    assert p_name("spearman", "holm") == "spearman_p_holm"
    assert p_name("kendall", "none") == "kendall_p_perm"


def _table(k: int, rng: np.random.Generator, n_distance: int, n_performance: int) -> pd.DataFrame:
    rows = [(f"g{i}", f"g{j}") for i in range(k) for j in range(i + 1, k)]
    table = pd.DataFrame(rows, columns=["group_a", "group_b"])
    for i in range(n_distance):
        table[f"dist_{i}"] = rng.uniform(size=len(table))
    for i in range(n_performance):
        table[f"gap_{i}"] = rng.normal(size=len(table))
    return table


def test_correlations_carry_adjusted_columns_over_the_whole_table() -> None:
    table = _table(6, np.random.default_rng(5), 2, 3)
    table["gap_const"] = 1.0  # no test: NaN p, outside the family
    found = correlations(table)
    tested = found["spearman_p_perm"].notna()
    assert tested.sum() == 6 and (~tested).sum() == 2
    for statistic in ("spearman", "kendall"):
        raw = found[f"{statistic}_p_perm"]
        np.testing.assert_allclose(
            found.loc[tested, f"{statistic}_p_holm"], _holm_by_hand(raw[tested].tolist())
        )
        np.testing.assert_allclose(
            found.loc[tested, f"{statistic}_p_bh"], _bh_by_hand(raw[tested].tolist())
        )
        assert found.loc[~tested, [f"{statistic}_p_holm", f"{statistic}_p_bh"]].isna().all().all()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exchangeable_null_gives_no_holm_significant_correlation(seed: int) -> None:
    """Random matrices of 7 exchangeable groups: unadjusted 0.05 may flag some, Holm none."""
    rng = np.random.default_rng(seed)
    found = correlations(_table(7, rng, 3, 8))
    assert len(found) == 24
    assert (found["spearman_p_holm"] >= 0.05).all()
    assert (found["kendall_p_holm"] >= 0.05).all()
    assert (found["spearman_p_holm"] >= found["spearman_p_perm"]).all()
    # maxT over the shared relabellings: no finding either, and never below the raw p.
    assert (found["spearman_p_maxt"] >= 0.05).all() and (found["kendall_p_maxt"] >= 0.05).all()
    assert (found["spearman_p_maxt"] >= found["spearman_p_perm"]).all()
    assert (found["maxt_method"] == "maxt").all()


def test_every_adjust_choice_has_its_column():
    assert set(ADJUSTMENTS) == set(get_args(Adjustment))
