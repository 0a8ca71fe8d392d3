"""Power of the primary test at planted rho: its size at rho = 0, growth with rho, seeding."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.power_rho import PrimaryPower, primary_power


def test_at_rho_zero_the_rejection_rate_is_the_level() -> None:
    """At rho = 0 the exact test rejects with probability 35/720 (p < 0.05 on 720 values)."""
    n = 3000
    found = primary_power(6, rhos=(0.0,), n_simulations=n, seed=11)
    size = found.table.loc[0, "power"]
    assert found.exact and found.n_permutations == 720
    expected = 35 / 720
    assert abs(size - expected) <= 4 * math.sqrt(expected * (1 - expected) / n)
    assert abs(found.table.loc[0, "achieved_rho"]) < 0.02


@pytest.mark.parametrize(("k", "direction"), [(6, "greater"), (8, "less")])
def test_power_grows_with_the_planted_rho_which_is_achieved(k: int, direction: str) -> None:
    rhos = (0.0, 0.3, 0.6, 0.9)
    found = primary_power(k, rhos=rhos, direction=direction, n_simulations=300, seed=2)  # type: ignore[arg-type]
    table = found.table
    sign = -1 if direction == "less" else 1
    np.testing.assert_allclose(table.planted_rho, [sign * r for r in rhos])
    # The simulated studies' mean rho is the planted one (up to simulation noise).
    np.testing.assert_allclose(table.achieved_rho, table.planted_rho, atol=0.04)
    power = table.power.to_numpy()
    assert (np.diff(power) > 0).all() and power[0] < 0.1 and power[-1] > 0.95
    assert found.n_pairs == k * (k - 1) // 2
    assert found.exact == (k == 6) and found.n_permutations == (720 if k == 6 else 1000)
    assert found.detected_rho is not None and abs(found.detected_rho) in rhos
    assert np.sign(found.detected_rho) == sign


def test_power_is_seeded_and_per_rho_streams_do_not_depend_on_the_grid() -> None:
    one = primary_power(5, rhos=(0.2, 0.5), n_simulations=100, seed=4)
    again = primary_power(5, rhos=(0.5,), n_simulations=100, seed=4)
    other = primary_power(5, rhos=(0.2, 0.5), n_simulations=100, seed=5)
    assert one.table.loc[1, "power"] == again.table.loc[0, "power"]
    assert not one.table[["achieved_rho"]].equals(other.table[["achieved_rho"]])
    with pytest.raises(ValueError, match="rhos"):
        primary_power(5, rhos=(1.5,))


def test_detected_rho_is_the_smallest_planted_rho_at_80_percent() -> None:
    table = pd.DataFrame(
        {"planted_rho": [0.2, 0.4, 0.6], "achieved_rho": [0.2, 0.4, 0.6], "power": [0.1, 0.8, 0.99]}
    )
    found = PrimaryPower(6, "greater", 0.05, 100, 720, True, table)
    assert found.detected_rho == 0.4
    weak = PrimaryPower(4, "greater", 0.05, 100, 24, True, table.assign(power=0.3))
    assert weak.detected_rho is None
