"""Sequential p-values (Besag-Clifford): valid, cut from the fixed count's draws, cheaper."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from regbias.analysis.pairs.embedding import (
    EmbeddingPairTests,
    EmbeddingTestSettings,
    embedding_pair_tests,
)
from regbias.analysis.pairs.embedding_null import (
    pair_statistic_null,
    permutation_p,
    pooled_form,
    sequential_pair_null,
)
from regbias.analysis.pairs.performance import PerformanceTestSettings
from regbias.analysis.pairs.performance_null import StratifiedPair, relabel, sequential_relabel
from regbias.analysis.pairs.sequential import clear_point, ordered_p, sequential_null
from regbias.errors import ConfigError
from regbias.report.record import pair_table
from tests.analysis.pairs.test_performance import (
    perf_settings,
    perf_tests_of,
    scored_group,
    texts_frame,
)
from tests.benchmark_module import load_benchmark
from tests.conftest import packaged

rates = load_benchmark("perf_test_rates")


def test_it_stops_at_the_hth_extreme_value_and_p_is_h_over_the_draws() -> None:
    blocks = [np.array([0.1, 0.9, 0.2]), np.array([0.95, 0.3, 0.99, 0.97])]
    values, p = sequential_null(iter(blocks), lambda v: v >= 0.9, 1000, 3)
    assert values.tolist() == [0.1, 0.9, 0.2, 0.95, 0.3, 0.99]  # cut at the 3rd extreme
    assert (p.p, p.drawn, p.exceedances, p.stopped) == (3 / 6, 6, 3, True)
    # Never reaching h: the fixed count's (1 + g) / (1 + K); None never stops.
    for h in (10, None):
        values, p = sequential_null(iter(blocks), lambda v: v >= 0.9, 7, h)
        assert (p.p, p.drawn, p.stopped) == ((1 + 4) / (1 + 7), 7, False)


def test_a_sequential_p_is_valid_at_every_level_on_exchangeable_draws() -> None:
    # The observed statistic and its K relabelled values exchangeable (iid uniforms): P(p <= u)
    # stays at most u at the levels that matter, over 20,000 tests (K = 199, h = 5).
    rng = np.random.default_rng(0)
    ps = []
    for _ in range(20_000):
        u = rng.random(200)
        ps.append(sequential_null([u[1:]], lambda v, t=u[0]: v >= t, 199, 5)[1].p)
    ps = np.array(ps)
    for level in (0.01, 0.025, 0.05, 0.1, 0.5):
        upper = stats.binom.ppf(0.999, len(ps), level) / len(ps)
        assert np.mean(ps <= level) <= upper, level
    assert np.mean(ps <= 0.05) > 0.04  # and not so conservative that it never rejects


def _form(seed: int, shift: float) -> tuple[object, int]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((70, 4))
    x[:30] += shift
    return pooled_form(x, "mean"), 30


@pytest.mark.parametrize("shift", [0.0, 0.8])
def test_the_embedding_nulls_draws_are_the_fixed_counts_cut_short(shift: float) -> None:
    form, n_a = _form(3, shift)
    t, full = pair_statistic_null(form, n_a, 2999, np.random.default_rng(1))
    t2, cut, p = sequential_pair_null(form, n_a, 2999, np.random.default_rng(1), 20)
    assert t == t2
    assert np.array_equal(cut, full[: len(cut)])  # the same stream, only cut
    if p.stopped:  # no difference: it stops early, at its 20th T* >= T
        assert shift == 0.0 and len(cut) < 2999 and cut[-1] >= t
        assert p.p == 20 / len(cut) and np.sum(cut >= t) == 20
    else:  # a difference: every relabelling, the fixed count's p bit for bit
        assert shift > 0 and p.p == permutation_p(t, full)


def test_the_embedding_test_is_calibrated_with_stopping_on_null_pairs() -> None:
    # 3,000 exchangeable pairs, K = 499, h = 10: twice the nominal rate falls outside the band.
    rng = np.random.default_rng(5)
    ps = []
    for _ in range(3000):
        x = rng.standard_normal((40, 3))
        ps.append(sequential_pair_null(pooled_form(x, "mean"), 15, 499, rng, 10)[2].p)
    ps = np.array(ps)
    for alpha in (0.05, 0.01):
        low, high = stats.binom.interval(0.998, len(ps), alpha)
        assert low / len(ps) <= np.mean(ps <= alpha) <= high / len(ps)
        assert high / len(ps) < 2 * alpha


def _pair(seed: int, regime: str) -> tuple[np.ndarray, StratifiedPair]:
    texts = rates.simulate(rates.REGIMES[regime], np.random.default_rng(seed), ["nz", "za"])
    return texts.scores(), StratifiedPair.of(texts.group_side("nz"), texts.group_side("za"))


def test_the_performance_test_stops_on_its_own_relabellings() -> None:
    scores, pair = _pair(2, "strong null")
    fixed = relabel(scores, pair, "accuracy", 3000, np.random.default_rng(9))
    gap, p = sequential_relabel(scores, pair, "accuracy", 3000, np.random.default_rng(9), None)
    assert gap == fixed.gaps[0] and p.p == fixed.p() and p.drawn == 3000
    _, stopped = sequential_relabel(scores, pair, "accuracy", 3000, np.random.default_rng(9), 20)
    statistic = np.abs(fixed.statistic())
    extreme = np.flatnonzero(statistic[1:] >= statistic[0] - 1e-9)
    if len(extreme) >= 20:  # it stopped where the fixed count's 20th extreme value lies
        assert stopped.stopped and stopped.drawn == extreme[19] + 1
        assert stopped.p == 20 / stopped.drawn
    else:
        assert not stopped.stopped and stopped.p == fixed.p()


def test_stop_after_must_be_positive_or_null() -> None:
    assert perf_settings().stop_after == 100  # the shipped default
    with pytest.raises(ConfigError, match=r"analysis.tests.performance.stop_after must be >= 1"):
        perf_settings(stop_after=0)
    assert perf_settings(stop_after=None).stop_after is None
    assert isinstance(perf_settings(), PerformanceTestSettings)


def _tests(relabelled: list[float] | None) -> EmbeddingPairTests:
    table = pd.DataFrame(
        {
            "group_a": ["uk", "nz"],
            "group_b": ["us", "za"],
            "family": ["regions", "regions"],
            "p": [0.0001, 0.4],
            "p_adjusted": [0.0002, 0.4],
            "differs": [True, False],
        }
        | ({"relabelled": relabelled} if relabelled is not None else {})
    )
    settings = packaged(EmbeddingTestSettings, "analysis.tests.embedding")
    return EmbeddingPairTests(settings, 0.05, table)


def test_the_pair_table_says_how_many_relabellings_each_p_drew() -> None:
    lines = pair_table(_tests([9999.0, 250.0]))
    assert "| relabellings |" in lines[0]
    assert "| 9999 |" in lines[2] and "| 250 |" in lines[3]
    assert "relabellings" not in pair_table(_tests(None))[0]  # an older table: not measured
    method = _tests(None).method()
    words = (
        "9999 relabellings, stopping at 100 as extreme as observed "
        "(where it stops, p = 100 / drawn, ~10%)"
    )
    assert words in method


def _exact_null(relabellings: int, stop_after: int | None, clear_after: int | None, block: int):
    """Every outcome's p and null chance: the observed value's rank uniform, the rest arranged."""
    found: dict[float, float] = {}
    for pattern in itertools.product((0.0, 1.0), repeat=relabellings):
        drawn = np.array(pattern)
        g = int(drawn.sum())
        chance = 1 / ((relabellings + 1) * math.comb(relabellings, g))
        blocks = (drawn[i : i + block] for i in range(0, relabellings, block))
        p = sequential_null(blocks, lambda v: v >= 1, relabellings, stop_after, clear_after)[1]
        found[p.p] = found.get(p.p, 0.0) + chance
    return found


@pytest.mark.parametrize(
    ("stop_after", "clear_after", "block"), [(3, 4, 1), (3, 4, 5), (None, 6, 4), (2, 9, 13)]
)
def test_stopping_clear_keeps_every_p_exact_under_the_null(
    stop_after: int | None, clear_after: int, block: int
) -> None:
    # All 2^13 arrangements of a null's exceedances among K = 13 relabellings, each with its
    # chance: P(p <= u) equals u at every value p takes (exact, not merely at most).
    found = _exact_null(13, stop_after, clear_after, block)
    assert math.isclose(sum(found.values()), 1.0)
    below = 0.0
    for value in sorted(found):
        below += found[value]
        assert math.isclose(below, value, rel_tol=1e-9), (value, below)
    assert min(found) == 1 / (clear_after + 1)  # the pairs that stopped clear


def test_without_the_clear_stop_a_p_too_small_would_be_invalid() -> None:
    # The check the test above makes fails for the naive p of a clear stop, 1 / (1 + N) with
    # the fixed-count p for the rest: P(p <= 1/(1+N)) exceeds 1/(1+N).
    found = _exact_null(13, None, 4, 1)
    naive: dict[float, float] = {}
    for pattern in itertools.product((0.0, 1.0), repeat=13):
        g = int(sum(pattern))
        chance = 1 / (14 * math.comb(13, g))
        p = 1 / 5 if sum(pattern[:4]) == 0 else (1 + g) / 14
        naive[p] = naive.get(p, 0.0) + chance
    assert sum(c for v, c in naive.items() if v <= 1 / 5) > 1 / 5 + 0.01
    assert sum(c for v, c in found.items() if v <= 1 / 5) <= 1 / 5 + 1e-12


def test_a_clear_stop_draws_n_and_is_its_own_kind_of_stop() -> None:
    values, p = sequential_null(iter([np.zeros(10), np.ones(10)]), lambda v: v >= 1, 20, 3, 7)
    assert (len(values), p.drawn, p.exceedances, p.stopped, p.cleared) == (7, 7, 0, True, True)
    assert p.p == 1 / 8
    # One exceedance before N: no clear stop; the 3rd exceedance stops it, p = ordered_p's.
    blocks = [np.r_[np.zeros(5), 1.0, np.zeros(4)], np.ones(10)]
    values, p = sequential_null(iter(blocks), lambda v: v >= 1, 20, 3, 7)
    assert (p.drawn, p.stopped, p.cleared) == (12, True, False)
    assert p.p == ordered_p(11, 2, 7) > 3 / 12


def test_the_clear_point_is_a_third_of_holms_smallest_threshold() -> None:
    primary, secondary = ["primary"] * 15, ["secondary"] * 13
    assert clear_point(primary + secondary, 0.05, 9999) == 999  # 899 by the rule; 999 floor
    assert 15 / (999 + 1) <= 0.05 / 3
    assert clear_point(["primary"] * 40, 0.05, 9999) == 2399
    assert clear_point(primary, 0.01, 9999) == 4499
    assert clear_point(primary, 0.05, 999) is None  # as many draws as the check: no early stop
    assert clear_point([], 0.05, 9999) is None


def _shifted(texts: list[str]) -> np.ndarray:
    """Group b's vectors 3 sd away from group a's: every relabelling is less extreme."""
    rng = np.random.default_rng(len(texts))
    return rng.normal(size=(len(texts), 4)) + np.array([[3.0 * t.startswith("b")] for t in texts])


@pytest.mark.parametrize("clear", [True, False])
def test_both_tests_of_record_stop_a_clear_pair_at_n_where_asked(clear: bool) -> None:
    groups = {g: [f"{g}{i}" for i in range(30)] for g in ("a", "b")}
    settings = packaged(
        EmbeddingTestSettings, "analysis.tests.embedding", relabellings=2999, stop_when_clear=clear
    )
    embedding = embedding_pair_tests(groups, _shifted, settings)
    rng = np.random.default_rng(3)
    frame = texts_frame(
        {
            "a": scored_group(rng, 400, 0.5, (0.95, 0.95)),
            "b": scored_group(rng, 400, 0.5, (0.4, 0.4)),
        }
    )
    performance = perf_tests_of(frame, relabellings=2999, stop_when_clear=clear)
    for tests in (embedding, performance):
        row = tests.table.iloc[0]
        if clear:  # one pair: N = max(999, 3 / 0.05 - 1)
            assert (row["relabelled"], row["p"], tests.clear_after) == (999, 1 / 1000, 999)
            assert "or at 999 with none (p = 1/1000)" in tests.method()
            assert tests.smallest_p == 1 / 1000
        else:
            assert (row["relabelled"], row["p"], tests.clear_after) == (2999, 1 / 3000, None)
            assert "with none" not in tests.method()
