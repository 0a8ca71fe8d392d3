"""Per-group accuracy intervals for the training procedure: seeds, then texts (docs/method.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from regbias.analysis.pairs.pooled_scores import (
    ModelDraws,
    PerfTexts,
    Side,
    draw_counts,
    resampled_sums,
    training_units,
    unit_weights,
)
from tests.benchmark_module import load_benchmark

bench = load_benchmark("accuracy_interval_coverage")


def test_the_seeds_are_the_units_and_one_seed_s_folds_are():
    assert training_units(np.repeat([3, 7, 9], 2)).tolist() == [0, 0, 1, 1, 2, 2]
    assert training_units(np.zeros(4, dtype=int)).tolist() == [0, 1, 2, 3]
    assert (unit_weights(np.zeros(3, dtype=int), 4, np.random.default_rng(0)) == 1).all()


def test_a_draw_moves_the_seeds_mean_by_student_t_times_its_standard_error():
    # 5 seeds of 5 folds: a t interval from 5 units needs t_4's tails, not the normal's.
    rng = np.random.default_rng(0)
    values = rng.normal(size=5)
    weights = unit_weights(training_units(np.repeat(np.arange(5), 5)), 20_000, rng)
    moved = weights @ np.repeat(values, 5) / 25 - values.mean()
    standardised = moved / (values.std(ddof=1) / np.sqrt(5))
    assert stats.kstest(standardised, stats.t(4).cdf).pvalue > 0.001
    assert stats.kstest(standardised, stats.norm.cdf).pvalue < 1e-6


def test_a_held_out_text_carries_its_seed_s_weight_and_is_never_redrawn():
    # 2 seeds x 2 folds; texts 0-3 each held out by one model, texts 4-5 scored by all.
    values = np.full((6, 4, 1), np.nan)
    values[np.arange(4), np.arange(4), 0] = [1.0, 0.0, 1.0, 1.0]
    values[4:, :, 0] = [[1, 0, 1, 1], [0, 0, 1, 0]]
    names = ["seed0/fold0", "seed0/fold1", "seed1/fold0", "seed1/fold1"]
    texts = PerfTexts(
        "binary", np.arange(6).astype(str), np.zeros(6).astype(str), values, names, {}
    )
    rng = np.random.default_rng(1)
    draws = texts.model_replicates(50, rng)
    assert draws.nested.tolist() == [True] * 4 + [False] * 2
    seed_weight = draws.weights[:, [0, 2]]  # each seed's relative weight, equal within it
    assert np.allclose(draws.weights[:, :4], np.repeat(seed_weight, 2, axis=1))
    assert np.allclose(draws.weights[:, 4:], 1.0)
    sums, counts = resampled_sums(draws, texts.side(np.arange(4)), rng)
    assert np.allclose(counts[:, 0], 2 * seed_weight.sum(axis=1))  # all four, once each
    assert np.allclose(sums[:, 0, 0], draws.sums[:, :4, 0].sum(axis=1))


def _covered(effects: bench.Effects, studies: int, n_bootstrap: int) -> np.ndarray:
    return bench.coverage(effects, studies, n_bootstrap, seed=2026)[:, 0].sum(axis=0)


def test_group_intervals_cover_the_procedure_under_seed_effects():
    # Seed effects of 2 points: today's draw of 25 independent models covered the us
    # accuracy in about 0.64 of studies; 52 of 60 is the 1% binomial bound at 0.95.
    effects = bench.Effects(2.0, sizes=(("us", 4000), ("za", 250)), fold_texts=100)
    hits = _covered(effects, studies=60, n_bootstrap=199)
    assert min(hits) >= 52, hits  # us, za, baseline


@pytest.mark.slow
@pytest.mark.parametrize("seed_effect", bench.REGIMES)
def test_group_intervals_cover_the_procedure_at_the_real_sizes(seed_effect):
    # The benchmark's own run: every group within the 0.998 binomial band around 0.95.
    hits = _covered(bench.Effects(seed_effect), studies=200, n_bootstrap=299)
    low, high = stats.binom.interval(0.998, 200, 0.95)
    assert ((low <= hits) & (hits <= high)).all(), hits


def _counts_in_one(n: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """The counts as one ``bincount`` of every draw (the form blocks must reproduce)."""
    drawn = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
    return np.bincount(drawn.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)


@pytest.mark.parametrize("n", [0, 1, 7, 300, 40_000])
@pytest.mark.parametrize("b", [0, 1, 3, 999])
def test_counting_in_blocks_gives_the_counts_of_one_count(n, b):
    blocked = draw_counts(n, b, np.random.default_rng(n + b))
    assert blocked.dtype == np.float64
    assert np.array_equal(blocked, _counts_in_one(n, b, np.random.default_rng(n + b)))


def test_the_text_stage_in_blocks_gives_the_sums_of_one_product_bit_for_bit():
    # 130 draws: two full blocks and a part; strata of 1, 50 and 3,000 texts, 5% nested.
    rng = np.random.default_rng(4)
    n, b = 5_000, 130
    draws = ModelDraws(
        rng.standard_normal((b, n, 3)).astype(np.float32),
        (rng.random((b, n)) + 0.5).astype(np.float32),
        rng.random(n) < 0.05,
    )
    rows = tuple(np.sort(rng.choice(n, k, replace=False)) for k in (1, 50, 3_000))
    side = Side(rows, ("a", "b", "c"))
    sums, counts = resampled_sums(draws, side, np.random.default_rng(9))
    again = np.random.default_rng(9)
    for s, taken in enumerate(rows):
        crossed, carried = taken[~draws.nested[taken]], taken[draws.nested[taken]]
        times = _counts_in_one(len(crossed), b, again)
        expected = np.einsum("bn,bnd->bd", times, draws.sums[:, crossed])
        expected += draws.sums[:, carried].sum(axis=1, dtype=np.float64)
        weights = np.einsum("bn,bn->b", times, draws.weights[:, crossed])
        weights += draws.weights[:, carried].sum(axis=1, dtype=np.float64)
        assert np.array_equal(sums[:, s], expected)
        assert np.array_equal(counts[:, s], weights)
