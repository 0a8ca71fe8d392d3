"""The test of record: its statistics, its null, its calibration, families and caps."""

from __future__ import annotations

import itertools
import json
import signal

import dcor
import numpy as np
import pytest
from scipy import stats

from regbias.analysis.multiplicity import adjust_p
from regbias.analysis.pairs import embedding
from regbias.analysis.pairs.embedding import (
    EmbeddingPairTests,
    EmbeddingTestSettings,
    embedding_pair_tests,
)
from regbias.analysis.pairs.embedding_null import (
    draw_sides,
    kth_smallest,
    pair_statistic_null,
    permutation_p,
    pooled_form,
    relabelled_values,
    tie_margin,
)
from regbias.analysis.pairs.pairwise import (
    PRIMARY_FAMILY,
    SECONDARY_FAMILY,
    cap_groups,
    size_class,
    size_classes,
)
from regbias.errors import ConfigError
from regbias.interrupt import StopRequested, clear_stop, request_stop
from tests.conftest import packaged

# Thousands of relabelled products of a few dozen texts each.
pytestmark = pytest.mark.usefixtures("one_blas_thread")


def pair_settings(**changes: object) -> EmbeddingTestSettings:
    """``analysis.tests.embedding`` as packaged, with ``changes``."""
    return packaged(EmbeddingTestSettings, "analysis.tests.embedding", **changes)


def _mmd_v(a: np.ndarray, b: np.ndarray) -> float:
    x = np.vstack([a, b])
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    width = np.median(d2[np.triu_indices(len(x), 1)])
    k = np.exp(-d2 / (2 * width))
    n = len(a)
    return k[:n, :n].mean() + k[n:, n:].mean() - 2 * k[:n, n:].mean()


@pytest.fixture
def clouds() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(30, 5)), rng.normal(size=(20, 5)) + 0.3


@pytest.mark.parametrize("statistic", ["energy", "mmd", "mean"])
def test_the_observed_statistic_is_the_textbook_one(clouds, statistic):
    a, b = clouds
    expected = {
        "energy": dcor.energy_distance(a, b),
        "mmd": _mmd_v(a, b),
        "mean": float(np.sum((a.mean(0) - b.mean(0)) ** 2)),
    }[statistic]
    observed, _ = pair_statistic_null(
        pooled_form(np.vstack([a, b]), statistic), 30, 3, np.random.default_rng(1)
    )
    assert observed == pytest.approx(expected, rel=1e-4)


def test_the_null_is_the_statistic_of_every_split():
    # 6 texts, 3 a side: 20 splits. Enough relabellings visit all of them; each relabelled
    # value is the textbook energy distance of one split, and every split is visited.
    x = np.random.default_rng(4).normal(size=(6, 3))
    _, null = pair_statistic_null(pooled_form(x, "energy"), 3, 2000, np.random.default_rng(0))
    splits = [
        dcor.energy_distance(x[list(side)], x[[i for i in range(6) if i not in side]])
        for side in itertools.combinations(range(6), 3)
    ]
    assert np.allclose(np.unique(np.round(null, 5)), np.unique(np.round(splits, 5)))


def test_null_values_are_exchangeable_relabellings():
    # Under the null the observed value is one more draw of the null: its rank is uniform.
    rng = np.random.default_rng(3)
    ranks = []
    for _ in range(300):
        x = rng.normal(size=(24, 3))
        observed, null = pair_statistic_null(pooled_form(x, "energy"), 10, 19, rng)
        ranks.append(int(np.sum(null < observed)))
    counts = np.bincount(ranks, minlength=20)
    assert stats.chisquare(counts).pvalue > 0.001


def _null_p(rng: np.random.Generator, statistic: str, n_a: int, n_b: int) -> float:
    x = rng.standard_t(df=4, size=(n_a + n_b, 6))
    observed, null = pair_statistic_null(pooled_form(x, statistic), n_a, 199, rng)
    return permutation_p(observed, null)


@pytest.mark.parametrize("statistic", ["energy", "mmd", "mean"])
def test_calibrated_on_thousands_of_null_pairs_at_005_and_001(statistic):
    # 3,000 independent exchangeable pairs of unequal sizes (as a small region against a large
    # one), heavy-tailed: the share of p <= level stays within 99.9% binomial bounds, bounds
    # that a test at twice the level would leave.
    rng = np.random.default_rng(11)
    p = np.array([_null_p(rng, statistic, n, 3 * n) for n in [6, 10, 14] * 1000])
    for level in (0.05, 0.01):
        low, high = stats.binom.ppf([0.0005, 0.9995], len(p), level) / len(p)
        assert high < 2 * level  # twice the nominal rate would fail this test
        assert low <= np.mean(p <= level) <= high, (level, np.mean(p <= level))


@pytest.mark.parametrize("statistic", ["energy", "mmd", "mean"])
def test_a_planted_shift_is_found(statistic):
    rng = np.random.default_rng(2)
    found = 0
    for _ in range(40):
        a, b = rng.normal(size=(40, 6)), rng.normal(size=(40, 6)) + 0.6
        observed, null = pair_statistic_null(
            pooled_form(np.vstack([a, b]), statistic), 40, 199, rng
        )
        found += permutation_p(observed, null) <= 0.01
    assert found >= 36


def test_a_tie_counts_as_extreme():
    null = np.array([1.0, 2.0, 3.0])
    assert permutation_p(3.0, null) == pytest.approx(2 / 4)


def _exact_scaled(k: np.ndarray, n_a: int, sides: np.ndarray, statistic: str) -> np.ndarray:
    """``T (n_a n_b)^2`` of integer data ``k`` in exact integer arithmetic, per labelling."""
    n_b = len(k) - n_a
    weights = np.where(sides.T > 0, n_b, -n_a).astype(np.int64)  # n_a n_b w, an integer
    if statistic == "mean":
        return ((weights @ k) ** 2).sum(axis=1)
    m = -np.abs(k[:, None, 0] - k[None, :, 0])  # 1-D energy: integer distances
    return np.einsum("ki,ij,kj->k", weights, m, weights)


def _exact_p(k: np.ndarray, n_a: int, sides: np.ndarray, statistic: str) -> float:
    observed = np.zeros((len(k), 1))
    observed[:n_a] = 1.0
    t = _exact_scaled(k, n_a, observed, statistic)[0]
    return (1 + int(np.sum(_exact_scaled(k, n_a, sides, statistic) >= t))) / (1 + sides.shape[1])


@pytest.mark.parametrize("statistic", ["mean", "energy"])
def test_p_on_tied_discrete_vectors_is_the_exact_p_of_the_same_relabellings(statistic):
    # Two or three distinct values, offset and scaled: most relabelled values tie exactly with
    # others and often with T. float32 products and a 1e-6 tie rule lost up to 4e-6 relative
    # and gave p too small (main: 5 of these 40 wrong); the p must equal the exact p.
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n_a, n_b = 60, 140
        d = 3 if statistic == "mean" else 1
        k = rng.integers(0, 2 + seed % 2, size=(n_a + n_b, d))
        x = k * 0.37 + 5.1
        observed, null = pair_statistic_null(
            pooled_form(x, statistic), n_a, 400, np.random.default_rng(seed + 100)
        )
        sides = draw_sides(n_a + n_b, n_a, 400, np.random.default_rng(seed + 100))
        assert permutation_p(observed, null) == _exact_p(k, n_a, sides, statistic), seed


@pytest.mark.parametrize("statistic", ["mean", "energy"])
def test_every_split_enumerated_gives_the_exact_p_with_equal_sides(statistic):
    # All 924 splits of 6 + 6 discrete texts: a split and its mirror tie exactly, and so do
    # splits that swap duplicates; the count of T* >= T over every split is the exact one.
    for seed in range(10):
        k = np.random.default_rng(seed).integers(0, 3, size=(12, 2 if statistic == "mean" else 1))
        form = pooled_form(k * 1.1 - 0.3, statistic)
        sides = np.zeros((12, 924))
        for j, side in enumerate(itertools.combinations(range(12), 6)):
            sides[list(side), j] = 1.0
        values = relabelled_values(form, 6, sides)
        observed = float(relabelled_values(form, 6, np.repeat([[1.0], [0.0]], 6, axis=0))[0])
        values[np.abs(values - observed) <= tie_margin(form, 6, observed)] = observed
        assert permutation_p(observed, values) == _exact_p(k, 6, sides, statistic), seed


def _vectors(texts: list[str]) -> np.ndarray:
    return np.stack(
        [np.random.default_rng(sum(map(ord, t)) * 7 + len(t)).normal(size=4) for t in texts]
    )


def test_families_shared_texts_duplicates_and_holm_within_a_family():
    groups = {
        "au": [f"au{i}" for i in range(30)] + ["shared"],
        "uk": [f"uk{i}" for i in range(25)] + ["shared", "uk0"],
        "nz": [f"nz{i}" for i in range(12)],
        "mixed": [f"au{i}" for i in range(10)] + [f"uk{i}" for i in range(10)],
    }
    tests = embedding_pair_tests(
        groups,
        _vectors,
        pair_settings(relabellings=199),
        references=("mixed",),
    )
    table = tests.table.set_index(["group_a", "group_b"])
    assert table.loc[("au", "uk"), "family"] == PRIMARY_FAMILY
    assert table.loc[("au", "mixed"), "family"] == SECONDARY_FAMILY
    # The text both hold is on neither side; uk's duplicate counts once.
    assert table.loc[("au", "uk"), ["n_a", "n_b", "shared"]].tolist() == [30, 25, 1]
    # mixed against a region: the whole region against mixed's other texts.
    assert table.loc[("au", "mixed"), ["n_a", "n_b", "shared"]].tolist() == [31, 10, 10]
    for family in (PRIMARY_FAMILY, SECONDARY_FAMILY):
        rows = tests.family(family)
        assert np.allclose(rows["p_adjusted"], adjust_p(rows["p"].to_numpy(), "holm"))
    assert tests.group_sizes["uk"] == 26


def test_a_group_over_the_cap_is_subsampled_once_the_same_in_every_pair():
    groups = {"us": [f"t{i}" for i in range(500)], "uk": [f"u{i}" for i in range(50)]}
    first = cap_groups(groups, 100, seed=0)
    assert len(first["us"]) == 100 and len(first["uk"]) == 50
    assert first == cap_groups(groups, 100, seed=0)
    assert first["us"] != cap_groups(groups, 100, seed=1)["us"]
    plans = pair_settings(cap=100).plans(
        {**groups, "ca": [f"c{i}" for i in range(40)]},
        (),
    )
    us_sides = [set(p.side_a) for p in plans if p.group_a == "us"]
    assert all(side == us_sides[0] for side in us_sides)


def test_mixed_against_a_region_over_the_cap_is_the_region_against_the_other_regions():
    # us exceeds the cap; mixed holds 300 us and 150 uk texts. Shared texts must go from the
    # mixed side before capping (main removed them from the capped subsample only, so most of
    # mixed's side stayed us tweets).
    us = [f"us{i}" for i in range(500)]
    uk = [f"uk{i}" for i in range(150)]
    groups = {"us": us, "uk": uk, "mixed": us[:300] + uk}
    plans = {(p.group_a, p.group_b): p for p in pair_settings(cap=100).plans(groups, ("mixed",))}
    us_mixed = plans[("us", "mixed")]
    assert not set(us_mixed.side_b) & set(us)
    assert len(us_mixed.side_b) == 100 and len(us_mixed.side_a) == 100
    assert us_mixed.shared == 300
    assert set(us_mixed.side_a) == set(plans[("us", "uk")].side_a)  # the region's own cap
    uk_mixed = plans[("uk", "mixed")]
    assert not set(uk_mixed.side_b) & set(uk) and uk_mixed.shared == 150


def test_the_cap_is_none_for_mean_and_quadratic_for_energy_and_mmd():
    assert pair_settings().group_cap is None
    assert pair_settings(statistic="energy").group_cap == 2000
    assert pair_settings(statistic="mmd", cap=500).group_cap == 500
    assert pair_settings(cap=300).group_cap == 300
    groups = {"us": [f"t{i}" for i in range(3000)], "uk": [f"u{i}" for i in range(50)]}
    assert len(pair_settings().plans(groups, ())[0].side_a) == 3000
    assert len(pair_settings(statistic="energy").plans(groups, ())[0].side_a) == 2000


def test_resolution_round_trip_and_settings_checks():
    groups = {g: [f"{g}{i}" for i in range(8)] for g in ("a", "b", "c", "d")}
    coarse = embedding_pair_tests(groups, _vectors, pair_settings(relabellings=19))
    assert not coarse.can_reject(PRIMARY_FAMILY)  # 6 pairs x 1/20 > 0.05
    fine = embedding_pair_tests(groups, _vectors, pair_settings(relabellings=999))
    assert fine.can_reject(PRIMARY_FAMILY)
    back = EmbeddingPairTests.from_dict(fine.to_dict())
    assert back.settings == fine.settings and back.table.equals(fine.table)
    with pytest.raises(ConfigError, match=r"analysis\.tests\.embedding\.statistic"):
        pair_settings(statistic="median")
    with pytest.raises(ConfigError, match="relabellings must be >= 1"):
        pair_settings(relabellings=0)
    with pytest.raises(ConfigError, match="pairs_at_once must be >= 1"):
        pair_settings(pairs_at_once=0)


def test_same_inputs_same_numbers():
    groups = {g: [f"{g}{i}" for i in range(40)] for g in ("a", "b", "c")}
    one = embedding_pair_tests(groups, _vectors, pair_settings(relabellings=499))
    two = embedding_pair_tests(groups, _vectors, pair_settings(relabellings=499))
    assert one.table.equals(two.table)


@pytest.mark.parametrize("n", [5, 1999, 2000, 18_000])
def test_the_kth_smallest_draw_is_the_partitions_at_every_rank(n):
    # From 2,000 draws a row only a band around the expected order statistic is partitioned;
    # rows planted outside the band (all tiny, all near 1, a step) take the whole row's.
    draws = np.random.default_rng(n).random((40, n))
    draws[0] *= 1e-3
    draws[1] = 1 - draws[1] * 1e-3
    draws[2, : n // 2] = 0.25
    for index in sorted({0, 1, n // 3, n // 2, n - 2, n - 1}):
        expected = np.partition(draws, index, axis=1)[:, index]
        assert np.array_equal(kth_smallest(draws, index), expected), index


def _partition_sides(n: int, n_a: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """The relabellings as drawn before the band: argpartition of the same draws."""
    draws = rng.random((k, n))
    sides = np.zeros((k, n), dtype=bool)
    np.put_along_axis(sides, np.argpartition(draws, n_a - 1, axis=1)[:, :n_a], True, axis=1)
    return sides.T


@pytest.mark.parametrize(("n_a", "n_b"), [(2, 2), (1, 5), (300, 700), (1332, 16597), (2999, 3)])
def test_relabellings_and_their_values_are_those_of_the_whole_partition(n_a, n_b):
    n = n_a + n_b
    sides = draw_sides(n, n_a, 64, np.random.default_rng(7))
    assert np.array_equal(sides, _partition_sides(n, n_a, 64, np.random.default_rng(7)))
    form = pooled_form(np.random.default_rng(8).normal(size=(n, 16)), "mean")
    contiguous = np.ascontiguousarray(sides, dtype=np.float64)
    assert np.array_equal(
        relabelled_values(form, n_a, sides), relabelled_values(form, n_a, contiguous)
    )


def test_pairs_side_by_side_give_the_numbers_of_one_pair_at_a_time():
    groups = {g: [f"{g}{i}" for i in range(400 + 70 * j)] for j, g in enumerate("abcde")}
    found = [
        embedding_pair_tests(
            groups, _vectors, pair_settings(relabellings=999, pairs_at_once=n)
        ).table
        for n in (1, 2, 3)
    ]
    assert found[0].equals(found[1]) and found[0].equals(found[2])


def test_a_stop_ends_the_pair_tests_without_running_the_rest(monkeypatch):
    started = []
    test_pair = embedding._test

    def stop_after_the_first(plan, *args):
        started.append(plan)
        if len(started) == 2:
            request_stop(signal.SIGTERM)
        return test_pair(plan, *args)

    monkeypatch.setattr(embedding, "_test", stop_after_the_first)
    groups = {g: [f"{g}{i}" for i in range(300)] for g in "abcdefgh"}  # 28 pairs
    for at_once in (1, 2):
        started.clear()
        try:
            with pytest.raises(StopRequested):
                embedding_pair_tests(
                    groups, _vectors, pair_settings(relabellings=5000, pairs_at_once=at_once)
                )
        finally:
            clear_stop()
        assert len(started) < 28, at_once


def test_size_classes_round_down_and_take_the_larger_family():
    assert [size_class(n) for n in (57, 250, 329, 1840, 2000, 17606)] == [
        57,
        250,
        320,
        1800,
        2000,
        17000,
    ]
    groups = {
        "au": [f"a{i}" for i in range(184)],
        "uk": [f"u{i}" for i in range(200)],
        "mixed": [f"m{i}" for i in range(190)],
    }
    plans = pair_settings().plans(groups, ("mixed",))
    assert size_classes(plans) == [(180, 190, 2), (180, 200, 1), (190, 200, 2)]


def test_an_older_files_settings_are_read_under_their_names_now():
    groups = {g: [f"{g}{i}" for i in range(8)] for g in ("a", "b", "c")}
    tests = embedding_pair_tests(groups, _vectors, pair_settings(relabellings=99))
    older = json.loads(json.dumps(tests.to_dict(), default=str))
    settings = older["settings"]
    settings["effect_resamples"] = settings.pop("resamples")  # its name before
    for key in ("quadratic_cap", "pairs_at_once"):  # settings it did not have
        settings.pop(key)
    back = EmbeddingPairTests.from_dict(older)
    assert back.settings.resamples == tests.settings.resamples
    assert back.settings.quadratic_cap is None and back.settings.pairs_at_once is None
    assert back.table.equals(tests.table)
