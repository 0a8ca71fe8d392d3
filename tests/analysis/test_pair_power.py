"""Power of the test of record: planted mixtures, Clopper-Pearson claims, resolution."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.pairs.embedding import (
    EmbeddingPairTests,
    EmbeddingTestSettings,
    embedding_pair_tests,
)
from regbias.analysis.power.embedding import PowerResult, PowerSettings, plant_power
from regbias.errors import ConfigError, SampleSizeError
from tests.conftest import packaged


@pytest.fixture(scope="module")
def banks() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(400, 4)), rng.normal(size=(200, 4)) + 1.0


def _power(banks, seed: int = 0, **settings) -> PowerResult:
    source, donor = banks
    values = {"plants": 20, "relabellings": 199, "shares": [0.2, 1.0], **settings}
    power = replace(packaged(PowerSettings, "analysis.power", **values), seed=seed)
    return plant_power(
        source,
        donor,
        [(30, 40, 3)],
        power,
        statistic="energy",
        alpha=0.05,
        progress=False,
    )


@pytest.fixture(scope="module")
def refined(banks) -> PowerResult:
    """The default plants (shares refined where the boundary falls), shared by the tests."""
    return _power(banks)


@pytest.fixture(scope="module")
def coarse(banks) -> PowerResult:
    """The plants at the two configured shares only (no refinement)."""
    return _power(banks, refine_step=None)


def test_no_mixture_is_rarely_detected_and_a_full_one_always(refined):
    rates = refined.rates().set_index("share")
    assert rates.loc[0.0, "power"] <= 0.1  # the false-positive rate at alpha / 3
    assert rates.loc[1.0, "power"] == 1.0
    assert rates.loc[0.2, "power"] <= rates.loc[1.0, "power"]
    assert set(rates["plants"]) == {20}


def test_80_percent_is_claimed_only_by_the_clopper_pearson_bound(coarse):
    result = coarse
    rates = result.rates().set_index("share")
    # 20 of 20 detected: the 95% lower bound is 0.83, so 100% may be claimed; a share whose
    # point estimate is 0.8 or 0.85 over 20 plants may not (its bound is below 0.8).
    assert rates.loc[1.0, "power_low"] >= 0.8
    share = result.detectable()[(30, 40)]
    assert share in (0.2, 1.0)
    if share == 1.0:
        assert rates.loc[0.2, "power_low"] < 0.8
    assert "would detect" in result.sentence(30, 40) and "donor-like" in result.sentence(30, 40)


def test_too_few_relabellings_give_no_power_statement(banks):
    # The #27 item 5 fault: 19 relabellings cannot reach alpha / 3; "detects nothing" would be
    # a wrong claim, so the sentence says no statement is possible.
    result = _power(banks, relabellings=19, plants=3)
    assert not result.resolvable
    assert math.isnan(result.detectable()[(30, 40)])
    assert "no power statement possible" in result.sentence(30, 40)
    assert "analysis.power.relabellings" in result.sentence(30, 40)


def test_plants_draw_fresh_texts_and_the_same_seed_the_same_numbers(banks, coarse):
    again = _power(banks, refine_step=None)
    assert again.plants.equals(coarse.plants)
    other = _power(banks, seed=1, refine_step=None)
    assert len(other.plants) == len(coarse.plants)
    assert not coarse.plants["p"].equals(other.plants["p"])


def test_a_class_larger_than_the_source_is_planted_at_the_sizes_that_fit(banks):
    # 30 + 40 from 50 source texts: planted at 21 + 28 (the same ratio), said in the rows.
    source, donor = banks
    result = plant_power(
        source[:50],
        donor,
        [(30, 40, 3)],
        packaged(PowerSettings, "analysis.power", plants=2, relabellings=99),
        statistic="mean",
        alpha=0.05,
        progress=False,
    )
    assert set(zip(result.plants["planted_a"], result.plants["planted_b"], strict=True)) == {
        (21, 28)
    }
    assert set(zip(result.plants["n_a"], result.plants["n_b"], strict=True)) == {(30, 40)}


def test_a_source_too_small_for_the_sizes_says_which_setting(banks):
    source, donor = banks
    with pytest.raises(SampleSizeError, match=r"analysis\.power\.source"):
        plant_power(
            source[:3],
            donor,
            [(30, 40, 3)],
            packaged(PowerSettings, "analysis.power", plants=1),
            statistic="energy",
            alpha=0.05,
            progress=False,
        )
    with pytest.raises(ConfigError, match="shares"):
        packaged(PowerSettings, "analysis.power", shares=[0.0])


def test_each_pair_gets_its_size_class_detectable_share():
    groups = {"a": [f"a{i}" for i in range(184)], "b": [f"b{i}" for i in range(200)]}
    tests = embedding_pair_tests(
        groups,
        lambda ts: np.random.default_rng(len(ts)).normal(size=(len(ts), 3)),
        packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=99),
    )
    with_power = tests.with_power({(180, 200): 0.4})
    assert isinstance(with_power, EmbeddingPairTests)
    assert with_power.table["detectable_share"].tolist() == [0.4]
    assert math.isnan(tests.table["detectable_share"].iloc[0])


def test_a_share_that_passes_while_a_larger_one_fails_is_not_detectable():
    # 20% passes (50 of 50), 40% fails (30 of 50), 80% passes: main reported 20%; the smallest
    # share from which on every larger share passes is 80%.
    hits = {0.0: 0, 0.2: 50, 0.4: 30, 0.8: 50}
    plants = pd.DataFrame(
        [
            {"n_a": 30, "n_b": 40, "family_pairs": 1, "share": s, "plant": k, "p": p}
            for s, h in hits.items()
            for k in range(50)
            for p in [0.001 if k < h else 0.5]
        ]
    )
    result = PowerResult(plants, 0.05, "mean", 999, "us", "uk")
    assert result.detectable()[(30, 40)] == 0.8
    assert "mixture of >= 80% of uk-like texts" in result.sentence(30, 40)
    hits[0.8] = 30
    failing = pd.DataFrame(
        [
            {"n_a": 30, "n_b": 40, "family_pairs": 1, "share": s, "plant": k, "p": p}
            for s, h in hits.items()
            for k in range(50)
            for p in [0.001 if k < h else 0.5]
        ]
    )
    assert math.isnan(PowerResult(failing, 0.05, "mean", 999, "us", "uk").detectable()[(30, 40)])


def test_shares_are_refined_on_a_10_percent_grid_where_the_boundary_falls(coarse, refined):
    assert coarse.detectable()[(30, 40)] == 1.0  # 20% fails, 100% passes
    assert sorted(set(coarse.plants["share"])) == [0.0, 0.2, 1.0]
    shares = sorted(set(refined.plants["share"]))
    assert np.allclose(shares, [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    found = refined.detectable()[(30, 40)]
    assert 0.2 < found < 1.0  # the boundary, now known to 10%
    rates = refined.rates().set_index("share")
    assert (rates.loc[rates.index >= found - 1e-9, "power_low"] >= 0.8).all()
