"""Two encoders' primary rhos compared by one joint bootstrap."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.bootstrap import interval_within
from regbias.analysis.primary_contrast import PrimaryEvidence, primary_contrasts
from regbias.distances.matrix import DistanceMatrix

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]
CORRELATION = ("dist_sinkhorn_long", "gap_accuracy")


def _evidence(rng: np.random.Generator, coupling: float, noise: float = 0.3) -> PrimaryEvidence:
    """Groups on a line; distances |x_a - x_b| (plus noise) and scores coupled to positions."""
    x = np.arange(len(GROUPS), dtype=float)
    other = rng.permutation(x)
    score = coupling * x + (1 - coupling) * other
    reps = np.abs(x[:, None] - x[None, :]) + noise * rng.standard_normal((4, 6, 6))
    reps = (reps + reps.transpose(0, 2, 1)) / 2
    for r in reps:
        np.fill_diagonal(r, 0.0)
    matrix = DistanceMatrix.from_repetitions("sinkhorn_long", GROUPS, reps)
    rows = [
        (f"s{s}f{f}", s, f, g, "accuracy", 0.7 + 0.01 * score[i] + 0.01 * rng.standard_normal())
        for s in range(3)
        for f in range(2)
        for i, g in enumerate(GROUPS)
    ]
    per_model = pd.DataFrame(rows, columns=["model", "seed", "fold", "group", "metric", "value"])
    means = per_model.groupby("group")["value"].mean()
    pairs = pd.DataFrame(
        [
            {
                "group_a": a,
                "group_b": b,
                CORRELATION[0]: matrix.mean[i, j],
                CORRELATION[1]: abs(means[a] - means[b]),
            }
            for (i, a), (j, b) in itertools.combinations(enumerate(GROUPS), 2)
        ]
    )
    return PrimaryEvidence(pairs, matrix, per_model)


def test_each_interval_is_the_report_s_own() -> None:
    item = _evidence(np.random.default_rng(0), 1.0)
    found = primary_contrasts(
        {"A": item, "B": item}, CORRELATION, n_bootstrap=200, confidence=0.95, seed=7
    ).iloc[0]
    low, high, _ = interval_within(
        item.pairs,
        CORRELATION,
        GROUPS,
        {"sinkhorn_long": item.distance},
        item.per_model,
        n_bootstrap=200,
        confidence=0.95,
        seed=7,
    )
    assert (found["rho_first_ci_low"], found["rho_first_ci_high"]) == pytest.approx((low, high))
    # The same evidence twice: every replicate's difference is 0.
    assert found["difference"] == 0 and found["ci_low"] == 0 == found["ci_high"]
    assert found["p"] == 1 and found["paired"]


def test_a_planted_difference_of_rhos_is_shown() -> None:
    rng = np.random.default_rng(1)
    found = primary_contrasts(
        {"twin": _evidence(rng, 1.0), "control": _evidence(rng, 0.0, noise=0.3)},
        CORRELATION,
        n_bootstrap=500,
        confidence=0.95,
        seed=0,
    ).iloc[0]
    assert found["rho_first"] > 0.8
    assert found["ci_low"] > 0 and found["p"] <= 0.05
    assert found["ci_low"] <= found["difference"] <= found["ci_high"]
