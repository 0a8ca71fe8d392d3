"""What the performance test could detect: planted accuracy gaps, claims that hold."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.power.embedding import PowerSettings
from regbias.analysis.power.performance import PerfPower, perf_plant_power
from tests.conftest import packaged


def _texts(n: int, accuracy: float, seed: int = 0) -> PerfTexts:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    scores = (rng.random((n, 5)) < accuracy).mean(axis=1)
    return PerfTexts(
        "binary",
        np.arange(n).astype(str),
        labels.astype(str),
        scores[:, None, None],
        ["seed0/fold0"],
        {"us": np.arange(n)},
    )


def test_a_gap_counts_only_where_every_larger_gap_passes_too():
    rates = pd.DataFrame(
        {
            "n_a": 300,
            "n_b": 300,
            "m": 15,
            "gap": [0.0, 0.02, 0.04, 0.08],
            "share": 0.0,
            "detected": 0,
            "power": [0.0, 0.9, 0.5, 0.99],
            "power_low": [0.0, 0.85, 0.4, 0.93],
        }
    )
    power = PerfPower("us", 0.75, 999, 50, rates)
    assert power.detectable() == {(300, 300): 0.08}
    rates.loc[3, "power_low"] = 0.5
    assert math.isnan(PerfPower("us", 0.75, 999, 50, rates).detectable()[(300, 300)])


def test_planted_gaps_are_found_and_the_null_plants_stay_at_the_level():
    settings = packaged(
        PowerSettings, "analysis.power", performance_gaps=[0.02, 0.15], plants=40, relabellings=999
    )
    power = perf_plant_power(
        _texts(4000, 0.75), "us", [(250, 1800, 15)], replace(settings, seed=0), alpha=0.05
    )
    rates = power.rates.set_index("gap")["power"]
    assert rates[0.0] <= 0.1  # at alpha / m: rarely a false detection
    assert rates[0.15] >= 0.95
    assert rates[0.02] < rates[0.15]
    assert power.detectable()[(250, 1800)] == 0.15
