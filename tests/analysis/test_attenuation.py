"""The primary's interval for the noise-free rho (regbias.analysis.robustness.attenuation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.pair_table import pairwise_table
from regbias.analysis.ranks import spearman_rows
from regbias.analysis.robustness.attenuation import corrected_interval, corrected_rho
from regbias.analysis.robustness.bootstrap import NOISE_CORRECTED, interval_within
from regbias.analysis.tests.text_scores import PerfTexts
from regbias.performance.evaluation import performance_gaps, summarise
from tests.benchmark_module import load_benchmark

PAIRS = np.triu_indices(6, 1)


def test_without_noise_the_interval_is_the_measured_rho() -> None:
    rng = np.random.default_rng(0)
    metrics = rng.normal(size=6)
    distances = np.abs(metrics[PAIRS[0]] - metrics[PAIRS[1]]) + rng.normal(0, 0.1, 15)
    rho = spearman_rows(distances[None], np.abs(metrics[PAIRS[0]] - metrics[PAIRS[1]])[None])[0]
    replicates = (np.repeat(distances[None], 50, 0), np.repeat(metrics[None], 50, 0))
    low, high = corrected_interval(replicates, PAIRS, 0.95, rng)
    assert low == pytest.approx(rho, abs=1e-12) and high == pytest.approx(rho, abs=1e-12)


def test_the_correction_undoes_the_attenuation() -> None:
    """Gaps that rank exactly as the distances (rho 1), measured with noise: rho shrinks."""
    rng = np.random.default_rng(1)
    measured, corrected = [], []
    for _ in range(60):
        truth = rng.normal(size=6)
        distances = np.abs(truth[PAIRS[0]] - truth[PAIRS[1]])
        noisy = truth + rng.normal(0, 0.4, 6)
        noise = (np.zeros((50, 15)), rng.normal(0, 0.4, (50, 6)))
        gaps = np.abs(noisy[PAIRS[0]] - noisy[PAIRS[1]])
        measured.append(spearman_rows(distances[None], gaps[None])[0])
        corrected.append(corrected_rho(distances[None], noisy[None], PAIRS, noise)[0])
    assert np.mean(measured) < 0.8  # the attenuation
    assert abs(1 - np.mean(corrected)) < 0.5 * abs(1 - np.mean(measured))


def test_the_primary_interval_covers_the_true_rho_on_studies_with_shared_text_noise() -> None:
    """The percentile interval covered 0.83-0.91 here; the corrected one must reach 0.9."""
    benchmark = load_benchmark("perf_coverage")
    rng = np.random.default_rng(3)
    hits, studies = 0, 60
    for study in range(studies):
        matrix, per_model, texts, rho = benchmark.simulate(
            rng, [1000, 900, 329, 1000, 1000, 250], 10, 10, 0.02, 1.0, 0.05
        )
        gaps = performance_gaps(summarise(per_model), benchmark.GROUPS)
        table = pairwise_table({"sinkhorn_long": matrix}, gaps, None)
        low, high, method = interval_within(
            table,
            ("dist_sinkhorn_long", "gap_accuracy"),
            benchmark.GROUPS,
            {"sinkhorn_long": matrix},
            per_model,
            n_bootstrap=199,
            confidence=0.95,
            seed=study,
            texts=PerfTexts.of(texts),
        )
        assert method == NOISE_CORRECTED
        hits += int(low <= rho <= high)
    assert hits / studies >= 0.9


def test_without_texts_the_interval_stays_the_percentile_one() -> None:
    benchmark = load_benchmark("perf_coverage")
    matrix, per_model, _, _ = benchmark.simulate(
        np.random.default_rng(4), [200] * 6, 6, 10, 0.02, 1.0, 0.05
    )
    gaps = performance_gaps(summarise(per_model), benchmark.GROUPS)
    table = pairwise_table({"sinkhorn_long": matrix}, gaps, None)
    assert isinstance(table, pd.DataFrame)
    *_, method = interval_within(
        table,
        ("dist_sinkhorn_long", "gap_accuracy"),
        benchmark.GROUPS,
        {"sinkhorn_long": matrix},
        per_model,
        n_bootstrap=99,
        confidence=0.95,
        seed=0,
    )
    assert method == "percentile"
