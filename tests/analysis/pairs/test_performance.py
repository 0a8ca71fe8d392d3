"""The test of record for performance: calibration on planted nulls, power, strata, families."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from regbias.analysis.pairs.performance import (
    PerformancePairTests,
    PerformanceTestSettings,
    performance_pair_tests,
)
from regbias.analysis.pairs.performance_null import StratifiedPair, relabel
from regbias.analysis.pairs.pooled_scores import PerfTexts, group_metrics, pool_text_tables
from regbias.report.record import pairs_lines
from tests.benchmark_module import load_benchmark
from tests.conftest import packaged

rates = load_benchmark("perf_test_rates")


def perf_settings(**changes: object) -> PerformanceTestSettings:
    return packaged(PerformanceTestSettings, "analysis.tests.performance", **changes)


def texts_frame(
    groups: dict[str, tuple[np.ndarray, np.ndarray]], models: int = 5, seed: int = 0
) -> pd.DataFrame:
    """A per-text table from each group's (labels, per-text chance of being right)."""
    rng = np.random.default_rng(seed)
    frames = []
    for name, (labels, right) in groups.items():
        correct = rng.random((len(labels), models)) < right[:, None]
        prob = np.where(correct == (labels[:, None] == 1), 0.8, 0.2)
        frame = pd.DataFrame(
            {"group": name, "key": [f"{name}-{i}" for i in range(len(labels))], "label": labels}
        )
        for m in range(models):
            frame[f"prob:seed{m}/fold0"] = prob[:, m]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def scored_group(rng, n, positive_share, accuracy_by_label):
    labels = (rng.random(n) < positive_share).astype(int)
    right = np.where(labels == 1, accuracy_by_label[1], accuracy_by_label[0])
    # Texts differ in difficulty, and every model shares it (the real reuse pattern).
    right = np.clip(right + rng.normal(0, 0.25, n), 0.02, 0.98)
    return labels, right


def perf_tests_of(frame, **changes) -> PerformancePairTests:
    return performance_pair_tests(
        PerfTexts.of(frame),
        list(dict.fromkeys(frame["group"])),
        perf_settings(**changes),
        references=["mixed", "baseline"],
    )


def test_a_different_mix_of_labels_is_not_a_performance_difference():
    # Both groups' texts come from one distribution within each label, but a has 80%
    # positives (easy) and b 20%: the plain gap is large, the stratified test stays calm.
    ps, raw = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        groups = {
            "a": scored_group(rng, 120, 0.8, (0.6, 0.9)),
            "b": scored_group(rng, 80, 0.2, (0.6, 0.9)),
        }
        row = perf_tests_of(texts_frame(groups, seed=seed), relabellings=199).table.iloc[0]
        ps.append(row["p"])
        raw.append(row["raw_gap"])
    assert np.mean(raw) > 0.1  # what an unstratified comparison would call a gap
    assert np.mean(np.asarray(ps) <= 0.05) <= stats.binom.ppf(0.999, 200, 0.05) / 200


def _null_p(seed: int, relabellings: int) -> float:
    """p of one exchangeable pair: 90 + 40 texts, the same law within each label, a random
    mix of labels, discrete scores (five models' correctness averaged)."""
    rng = np.random.default_rng(1000 + seed)
    share = rng.uniform(0.3, 0.7)
    labels = (rng.random(130) < share).astype(int)
    right = np.clip(np.where(labels == 1, 0.8, 0.7) + rng.normal(0, 0.25, 130), 0.02, 0.98)
    scores = (rng.random((130, 5)) < right[:, None]).mean(axis=1)
    texts = PerfTexts(
        "binary",
        np.arange(130).astype(str),
        labels.astype(str),
        scores[:, None, None],
        ["seed0/fold0"],
        {"a": np.arange(90), "b": np.arange(90, 130)},
    )
    pair = StratifiedPair.of(texts.group_side("a"), texts.group_side("b"))
    return relabel(scores[:, None], pair, "accuracy", relabellings, rng).p()


@pytest.fixture(scope="module")
def null_ps() -> np.ndarray:
    return np.array([_null_p(seed, 199) for seed in range(2000)])


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_planted_nulls_reject_at_the_nominal_rate(null_ps, alpha):
    # 2,000 exchangeable pairs: the 99.8% binomial band excludes twice the nominal rate.
    n = len(null_ps)
    rate = float(np.mean(null_ps <= alpha))
    low, high = stats.binom.interval(0.998, n, alpha)
    assert low / n <= rate <= high / n
    assert high / n < 2 * alpha


def _upper(n: int, alpha: float) -> float:
    """The top of the 99.8% binomial band of a rate ``alpha`` in ``n``."""
    return float(stats.binom.ppf(0.999, n, alpha) / n)


def test_equal_accuracy_with_a_wider_spread_is_not_a_difference():
    # ZA's per-text scores spread far wider (sd 0.39 against 0.12) at the same per-label
    # accuracy, all 25 models shared: the plain gap's relabellings reject most of these pairs.
    regime = rates.Regime("stress", spread=10.0, others=0.5)
    ps = rates.regime_ps(regime, 250, 199, 7, [("au", "za")])[:, 0]
    for alpha in (0.05, 0.01):
        assert np.mean(ps[:, 0] <= alpha) > 2 * alpha  # the plain gap: the regime bites
        assert np.mean(ps[:, 1] <= alpha) <= _upper(len(ps), alpha)


@pytest.mark.slow
def test_the_unequal_spread_null_stays_at_the_level():
    # Issue #45's null: ZA's per-text scores sd 0.34 against 0.30, the same per-label accuracy;
    # 600 independent pairs of ZA with each region at the real sizes.
    regime = rates.REGIMES["unequal-spread null"]
    ps = np.concatenate(
        [rates.regime_ps(regime, 600, 199, 45, [(g, "za")])[:, 0] for g in rates.SIZES if g != "za"]
    )
    assert np.mean(ps[:, 0] <= 0.05) > 0.06  # today's plain gap
    assert np.mean(ps[:, 1] <= 0.05) <= 0.06
    assert np.mean(ps[:, 1] <= 0.01) <= _upper(len(ps), 0.01) < 0.02


def test_a_planted_gap_is_found():
    rng = np.random.default_rng(5)
    detected = 0
    for seed in range(40):
        groups = {
            "a": scored_group(rng, 400, 0.5, (0.8, 0.8)),
            "b": scored_group(rng, 400, 0.5, (0.7, 0.7)),
        }
        detected += (
            perf_tests_of(texts_frame(groups, seed=seed), relabellings=999).table.iloc[0]["p"]
            < 0.01
        )
    assert detected >= 36


def test_p_is_the_exact_permutation_p_on_tiny_groups():
    # Enumerate every relabelling within strata of a 4 + 3 pair: the studentized gap's p.
    labels_a, labels_b = np.array([0, 0, 1, 1]), np.array([0, 1, 1])
    right_a, right_b = np.array([1.0, 1, 1, 0]), np.array([0.0, 0, 1])
    frame = texts_frame({"a": (labels_a, right_a), "b": (labels_b, right_b)}, models=1)
    # Every relabelling (no sequential stop): the p at the fixed count's resolution.
    tests = perf_tests_of(frame, relabellings=200_000, stop_after=None)
    scores = np.concatenate([right_a, right_b])
    labels = np.concatenate([labels_a, labels_b])
    observed = float(tests.table.iloc[0]["gap"])
    values = []
    zero, one = np.flatnonzero(labels == 0), np.flatnonzero(labels == 1)
    for side_zero in itertools.combinations(zero, 2):
        for side_one in itertools.combinations(one, 2):
            values.append(_studentized_gap(scores, labels, set(side_zero) | set(side_one)))
    z = _studentized_gap(scores, labels, set(range(4)))
    assert observed == pytest.approx(_studentized_gap(scores, labels, set(range(4)), se=False))
    exact = np.mean(np.abs(values) >= abs(z) - 1e-12)
    # The observed labelling is one of the 9, so p's Monte Carlo error is at most ~0.002.
    assert tests.table.iloc[0]["p"] == pytest.approx(exact, abs=0.005)


def _studentized_gap(scores, labels, side_a, se=True):
    """The CMH gap over its standard error (unbiased variances in each stratum and side)."""
    gap, variance, total = 0.0, 0.0, 0.0
    for label in (0, 1):
        members = np.flatnonzero(labels == label)
        a = scores[[i for i in members if i in side_a]]
        b = scores[[i for i in members if i not in side_a]]
        w = len(a) * len(b) / len(members)
        gap += w * (a.mean() - b.mean())
        variance += w**2 * sum(x.var(ddof=1) / len(x) if len(x) > 1 else 0.0 for x in (a, b))
        total += w
    if not se:
        return gap / total
    return gap / np.sqrt(variance) if variance > 0 else np.sign(gap) * np.inf


def test_identical_sides_give_p_one():
    labels = np.array([0, 1, 0, 1, 1])
    right = np.array([1.0, 0, 1, 1, 0])
    frame = texts_frame({"a": (labels, right), "b": (labels.copy(), right.copy())}, models=1)
    row = perf_tests_of(frame, relabellings=999).table.iloc[0]
    assert row["gap"] == 0.0
    assert row["p"] == 1.0


def test_models_that_predict_one_class_show_no_difference():
    # Every text of a label scores alike (each model says "positive" to all): the sides' gaps
    # differ only in float summation order, which is no evidence (a smoke run found 4 "pairs").
    rng = np.random.default_rng(0)
    groups = {}
    for name, n, share in (("a", 157, 0.37), ("b", 93, 0.61), ("c", 211, 0.5)):
        labels = (rng.random(n) < share).astype(int)
        groups[name] = (labels, labels.astype(float))  # right exactly on the positives
    table = perf_tests_of(texts_frame(groups, models=4), relabellings=999).table
    assert (table["gap"].abs() < 1e-9).all()
    assert (table["p"] == 1.0).all() and not table["differs"].any()


def test_an_untestable_pair_is_said_so_and_left_out_of_its_family():
    rng = np.random.default_rng(0)
    groups = {g: scored_group(rng, 50, 0.5, (0.7, 0.7)) for g in ("au", "ca", "nz")}
    frame = texts_frame(groups)
    # nz's texts are ca's texts: both sides of ca-nz are empty.
    frame.loc[frame["group"] == "nz", "key"] = frame.loc[frame["group"] == "ca", "key"].to_numpy()
    tests = perf_tests_of(frame, relabellings=99)
    row = tests.table.set_index(["group_a", "group_b"]).loc[("ca", "nz")]
    assert row["untestable"] and not row["differs"]
    assert "no scored text" in row["untestable"]
    assert math.isnan(row["p_adjusted"])
    assert len(tests.family("regions")) == 2


def test_region_and_reference_pairs_are_two_holm_families():
    rng = np.random.default_rng(1)
    groups = {g: scored_group(rng, 60, 0.5, (0.7, 0.7)) for g in ("au", "ca", "nz", "baseline")}
    tests = perf_tests_of(texts_frame(groups), relabellings=99)
    families = tests.table.groupby("family").size().to_dict()
    assert families == {"regions": 3, "reference": 3}
    for family, rows in tests.table.groupby("family"):
        p = np.sort(rows["p"].to_numpy())
        m = len(p)
        holm = np.maximum.accumulate(np.minimum(1, p * (m - np.arange(m))))
        assert np.allclose(np.sort(rows["p_adjusted"].to_numpy()), holm), family


def test_group_intervals_cover_the_true_accuracy():
    # Two-stage bootstrap: the texts every model shares are noise the interval must see.
    covered, runs = 0, 120
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, 2, 300)
        right = rng.beta(1.6, 0.4, 300)  # mean 0.8: the group's true accuracy
        frame = texts_frame({"a": (labels, right), "b": (labels, right)}, models=10, seed=seed)
        frame = frame[frame["group"] == "a"]
        tests = performance_pair_tests(PerfTexts.of(frame), ["a"], perf_settings(), n_bootstrap=299)
        row = tests.groups.iloc[0]
        covered += row["ci_low"] <= 0.8 <= row["ci_high"]
    rate = covered / runs
    assert 0.88 <= rate <= 0.99


def test_jobs_pool_into_one_row_per_text_with_every_model():
    rng = np.random.default_rng(2)
    groups = {"a": scored_group(rng, 20, 0.5, (0.7, 0.7))}
    one = texts_frame(groups, models=2, seed=0)
    two = texts_frame(groups, models=2, seed=1).rename(
        columns={"prob:seed0/fold0": "prob:seed5/fold0", "prob:seed1/fold0": "prob:seed6/fold0"}
    )
    pooled = pool_text_tables([one, two])
    assert len(pooled) == 20
    assert PerfTexts.of(pooled).models == [
        "seed0/fold0",
        "seed1/fold0",
        "seed5/fold0",
        "seed6/fold0",
    ]


def test_the_tests_read_back_from_their_json_form():
    rng = np.random.default_rng(3)
    groups = {g: scored_group(rng, 40, 0.5, (0.7, 0.7)) for g in ("au", "ca")}
    tests = perf_tests_of(texts_frame(groups), relabellings=99)
    again = PerformancePairTests.from_dict(tests.to_dict())
    pd.testing.assert_frame_equal(again.table, tests.table, check_dtype=False)
    assert again.metric == "accuracy" and again.models == 5


@pytest.mark.parametrize("metric", ["accuracy", "micro_f1"])
def test_the_power_note_names_the_corpus_s_own_metric(metric):
    rng = np.random.default_rng(3)
    groups = {
        "a": scored_group(rng, 60, 0.5, (0.8, 0.8)),
        "b": scored_group(rng, 60, 0.5, (0.7, 0.7)),
    }
    tests = replace(perf_tests_of(texts_frame(groups), relabellings=99), metric=metric)
    note = pairs_lines(tests)[-1]
    assert "could have detected is not measured" in note
    assert f"{metric} gaps" in note
    other = "micro_f1" if metric == "accuracy" else "accuracy"
    assert other not in note


def test_a_text_two_groups_label_differently_is_scored_with_each_group_s_label():
    # Text "t" is labelled 0 in a and 1 in b; its one model says positive: wrong in a, right in b.
    frame = pd.DataFrame(
        {
            "group": ["a", "a", "b", "b", "c", "c"],
            "key": ["t", "u", "t", "v", "w", "x"],
            "label": [0, 1, 1, 0, 1, 0],
            "prob:seed0/fold0": [0.9, 0.9, 0.9, 0.1, 0.9, 0.9],
        }
    )
    texts = PerfTexts.of(frame)
    assert group_metrics(texts, ["a", "b", "c"])["accuracy"].tolist() == [0.5, 1.0, 0.5]
    table = perf_tests_of(frame, relabellings=99).table.set_index(["group_a", "group_b"])
    assert table.loc[("b", "c"), "raw_gap"] == 0.5  # b's "t" counted right, as b labels it
    assert table.loc[("a", "c"), "raw_gap"] == 0.0
