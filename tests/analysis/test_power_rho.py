"""Power of the primary test in a group model: its size, its reach, growth with the coupling."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.permutations import Alternative
from regbias.analysis.power.primary import PrimaryPower, primary_power


def test_at_coupling_zero_the_rejection_rate_is_the_level() -> None:
    """At c = 0 the exact test rejects with probability 35/720 (p < 0.05 on 720 values)."""
    n = 3000
    found = primary_power(6, couplings=(0.0,), n_simulations=n, seed=11)
    size = found.table.loc[0, "power"]
    assert found.exact and found.null_size == 720
    expected = 35 / 720
    assert abs(size - expected) <= 4 * math.sqrt(expected * (1 - expected) / n)
    assert abs(found.table.loc[0, "mean_rho"]) < 0.02
    # The strongest coupling is always simulated: it gives the reachable rho.
    assert list(found.table.coupling) == [0.0, 1.0]


def test_a_one_dimensional_distance_reaches_rho_one_and_three_dimensions_do_not() -> None:
    line = primary_power(6, couplings=(1.0,), dimensions=1, n_simulations=200, seed=3)
    space = primary_power(6, couplings=(1.0,), dimensions=3, n_simulations=500, seed=3)
    assert line.reachable_rho == pytest.approx(1.0)
    assert line.table.loc[0, "power"] == 1.0
    # A gap sees one direction of a 3-D distance: rho stays well below 1, and so does power.
    assert 0.3 < space.reachable_rho < 0.6
    assert space.strongest_row["power_high"] < 0.8
    assert space.detected_rho is None and space.nearest_row is None


@pytest.mark.parametrize(("k", "direction"), [(6, "greater"), (8, "less")])
def test_power_and_the_realised_rho_grow_with_the_coupling(k: int, direction: str) -> None:
    couplings = (0.0, 0.6, 0.9, 1.0)
    alternative: Alternative = "less" if direction == "less" else "greater"
    found = primary_power(
        k, couplings=couplings, direction=alternative, dimensions=1, n_simulations=400, seed=2
    )
    table = found.table
    sign = -1 if direction == "less" else 1
    assert list(table.coupling) == list(couplings)
    rho = sign * table.mean_rho.to_numpy()
    power = table.power.to_numpy()
    assert (np.diff(rho) > 0.05).all() and abs(rho[0]) < 0.03 and rho[-1] == pytest.approx(1)
    assert (np.diff(power) > 0).all() and power[0] < 0.1 and power[-1] > 0.95
    assert (table.power_low <= table.power).all() and (table.power <= table.power_high).all()
    assert found.dimensions == 1
    assert found.exact == (k == 6) and found.null_size == (720 if k == 6 else 1000)
    assert found.detected_rho is not None and np.sign(found.detected_rho) == sign


def test_gaps_of_group_scores_have_less_power_than_independent_pair_noise() -> None:
    """The group model's table is not the old one's: at the same mean rho its power is lower.

    The old model planted rho with independent noise per pair and claimed 80% power at
    rho 0.7 with six groups (power 0.94 there); with gaps of group scores in two dimensions
    rho 0.7 is out of reach and the strongest coupling keeps power well below 80%.
    """
    found = primary_power(6, dimensions=2, n_simulations=1000, seed=0)
    assert {"coupling", "mean_rho", "power", "power_low", "power_high"} <= set(found.table)
    assert 0.5 < found.reachable_rho < 0.7
    assert found.strongest_row["power_high"] < 0.8
    assert found.detected_rho is None and found.nearest_row is None


def test_power_is_seeded_and_per_coupling_streams_do_not_depend_on_the_grid() -> None:
    one = primary_power(5, couplings=(0.5, 1.0), n_simulations=100, seed=4)
    again = primary_power(5, couplings=(1.0,), n_simulations=100, seed=4)
    other = primary_power(5, couplings=(0.5, 1.0), n_simulations=100, seed=5)
    assert one.table.loc[1, "power"] == again.table.loc[0, "power"]
    assert not one.table[["mean_rho"]].equals(other.table[["mean_rho"]])
    with pytest.raises(ValueError, match="couplings"):
        primary_power(5, couplings=(1.5,))
    with pytest.raises(ValueError, match="dimension"):
        primary_power(5, dimensions=0)


def _power(table: pd.DataFrame) -> PrimaryPower:
    return PrimaryPower(6, "greater", 0.05, 100, 720, True, 2, table)


def test_80_percent_is_claimed_only_where_the_clopper_pearson_bound_reaches_it() -> None:
    table = pd.DataFrame(
        {
            "coupling": [0.0, 0.5, 0.8, 1.0],
            "mean_rho": [0.0, 0.3, 0.5, 0.7],
            "power": [0.05, 0.5, 0.82, 0.95],
            "power_low": [0.02, 0.4, 0.74, 0.9],
            "power_high": [0.1, 0.6, 0.88, 0.98],
        }
    )
    found = _power(table)
    assert found.detected_rho == 0.7 and found.reachable_rho == 0.7
    assert found.nearest_row is None
    # The point estimate reaches 80% at rho 0.5, the bound nowhere: the row to state.
    unshown = _power(table.assign(power_low=[0.02, 0.4, 0.74, 0.78]))
    assert unshown.detected_rho is None
    assert unshown.nearest_row is not None and unshown.nearest_row["mean_rho"] == 0.5
    weak = _power(table.assign(power=0.3, power_low=0.2))
    assert weak.detected_rho is None and weak.nearest_row is None
    assert weak.strongest_row["mean_rho"] == 0.7


def test_the_power_is_stated_over_position_models_not_as_one_law():
    # Six groups: the isotropic 2-D model reaches rho 0.61 at most (power 0.64); 1-D and an
    # anisotropic 2-D model reach far higher rho and power. The primary's sentence says so.
    from regbias.analysis.power.primary import position_model_range

    models = position_model_range(
        6,
        significance=0.05,
        direction="greater",
        couplings=(0.0, 0.5, 0.8, 0.9, 1.0),
        n_simulations=400,
        relabellings=719,
        seed=0,
    ).set_index("model")
    isotropic = models.loc["isotropic 2-D"]
    assert isotropic["reachable_rho"] < 0.7 and isotropic["power"] < 0.8
    for other in ("1-D", "anisotropic 2-D (second axis sd 0.3)"):
        assert models.loc[other, "reachable_rho"] > 0.85
        assert models.loc[other, "power_low"] > 0.9
        assert models.loc[other, "detected_rho"] <= models.loc[other, "reachable_rho"]
