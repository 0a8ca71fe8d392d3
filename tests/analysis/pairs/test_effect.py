"""The size-free effect of a pair: unbiased at any size, its bootstrap interval covers it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from regbias.analysis.pairs.effect import pair_effect, quantile_mc_sd
from regbias.analysis.pairs.embedding_null import pair_statistic_null, pooled_form
from regbias.numbers import monte_carlo_text


def test_the_interval_covers_the_true_effect_in_95_percent_of_400_datasets():
    # Two Gaussian groups whose means differ by 0.8 (true squared difference 0.64), 80 + 120
    # texts: the 95% interval covers 0.64 in 0.93-0.97 of 400 independent datasets (0.949 on
    # average over 1,600 more).
    rng = np.random.default_rng(10)
    delta = np.array([0.8, 0.0, 0.0, 0.0])
    covered = []
    for _ in range(400):
        a, b = rng.normal(size=(80, 4)), rng.normal(size=(120, 4)) + delta
        _, low, high, _ = pair_effect(a, b, "mean", resamples=499, confidence=0.95, rng=rng)
        covered.append(low <= delta @ delta <= high)
    assert 0.93 <= np.mean(covered) <= 0.97, np.mean(covered)


@pytest.mark.parametrize("statistic", ["mean", "energy", "mmd"])
def test_the_effect_does_not_grow_with_the_sizes_where_the_test_statistic_does(statistic):
    # No difference at all: the test's value is about (1/n_a + 1/n_b) tr(Sigma) (it shrinks
    # as the sizes grow, so it cannot be compared across pairs of other sizes); the effect
    # averages 0 at 20 + 20 and at 200 + 200 alike.
    rng = np.random.default_rng(3)
    effects = {20: [], 200: []}
    statistics = {20: [], 200: []}
    for n in effects:
        for _ in range(60 if n == 20 else 12):
            a, b = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
            effects[n].append(
                pair_effect(a, b, statistic, resamples=0, confidence=0.95, rng=rng)[0]
            )
            t, _ = pair_statistic_null(pooled_form(np.vstack([a, b]), statistic), n, 1, rng)
            statistics[n].append(t)
    for n, values in effects.items():
        se = np.std(values) / np.sqrt(len(values))
        assert abs(np.mean(values)) < 4 * se + 1e-12, (n, np.mean(values), se)
    assert np.mean(statistics[20]) > 3 * np.mean(statistics[200])


def test_the_mean_effect_is_the_u_statistic_by_hand():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(7, 3)), rng.normal(size=(5, 3)) + 1.0
    aa = np.mean([a[i] @ a[j] for i in range(7) for j in range(7) if i != j])
    bb = np.mean([b[i] @ b[j] for i in range(5) for j in range(5) if i != j])
    ab = np.mean([a[i] @ b[j] for i in range(7) for j in range(5)])
    effect, low, high, _ = pair_effect(a, b, "mean", resamples=200, confidence=0.9, rng=rng)
    assert effect == pytest.approx(aa + bb - 2 * ab)
    assert low < effect < high
    d = np.mean([np.linalg.norm(x - y) for x in a for y in b])
    daa = np.mean([np.linalg.norm(a[i] - a[j]) for i in range(7) for j in range(7) if i != j])
    dbb = np.mean([np.linalg.norm(b[i] - b[j]) for i in range(5) for j in range(5) if i != j])
    energy = pair_effect(a, b, "energy", resamples=0, confidence=0.9, rng=rng)[0]
    assert energy == pytest.approx(2 * d - daa - dbb)


def test_an_ends_monte_carlo_sd_is_estimated_from_its_own_resamples() -> None:
    """The 2.5% quantile of 999 normal draws moves by sqrt(q (1 - q) / B) / phi(z_q) over
    reruns (0.0788); the order-statistic estimate from each rerun's own draws averages within
    15% of that, and of the spread measured over 300 reruns."""
    rng = np.random.default_rng(3)
    q, b = 0.025, 999
    theory = math.sqrt(q * (1 - q) / b) / stats.norm.pdf(stats.norm.ppf(q))
    draws = rng.normal(size=(300, b))
    estimates = [quantile_mc_sd(row, q) for row in draws]
    measured = float(np.std(np.quantile(draws, q, axis=1), ddof=1))
    assert np.mean(estimates) == pytest.approx(theory, rel=0.15)
    assert measured == pytest.approx(theory, rel=0.15)
    assert math.isnan(quantile_mc_sd(np.array([1.0]), q))


def test_the_effect_carries_its_ends_monte_carlo_sd() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(60, 4)), rng.normal(size=(90, 4)) + 0.3
    found = pair_effect(a, b, "mean", resamples=499, confidence=0.95, rng=rng)
    assert 0 < found.mc_sd < (found.high - found.low) / 5
    assert math.isnan(pair_effect(a, b, "mean", resamples=0, confidence=0.95, rng=rng).mc_sd)


@pytest.mark.parametrize(
    ("value", "sd", "text"),
    [
        (0.01234, 0.0013, "0.01"),  # 2 sd = 0.0026: the hundredths are the last firm digit
        (0.01234, 0.0004, "0.012"),
        (0.01234, 1e-7, "0.0123"),  # never past the digits asked for
        (0.01234, math.nan, "0.0123"),  # an older table: as before
        (123.4, 3.0, "120"),
        (-0.0044, 0.0013, "0.00"),  # no "-0.00"
        (math.nan, 0.1, "n/a"),
        (-8.528e-07, 7e-08, "-1e-06"),  # tiny values in scientific notation
        (-8.528e-07, 7e-10, "-8.5e-07"),
        (-2e-08, 7e-08, "0"),
    ],
)
def test_a_monte_carlo_estimate_prints_to_the_digit_its_sd_supports(
    value: float, sd: float, text: str
) -> None:
    assert monte_carlo_text(value, sd) == text
