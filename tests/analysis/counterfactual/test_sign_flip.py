"""The paired sign-flip test: exact on a symmetric null, and it sees a planted shift."""

from __future__ import annotations

import numpy as np
from scipy import stats

from regbias.analysis.counterfactual.sign_flip import sign_flip_p


def test_identical_edits_give_p_one_and_a_consistent_shift_the_smallest_p():
    rng = np.random.default_rng(0)
    assert sign_flip_p(np.zeros(50), 199, rng) == 1.0
    assert sign_flip_p(np.full(50, 0.3), 199, rng) == 1 / 200
    assert sign_flip_p(np.full(50, -0.3), 199, rng, "two-sided") == 1 / 200


def test_rejections_on_a_symmetric_null_are_at_the_level_at_005_and_001():
    # 3,000 nulls: at 0.01 the 99.9% binomial bound is below 0.02, so twice the level fails.
    rng = np.random.default_rng(1)
    reps, n = 3000, 40
    p = np.array([sign_flip_p(rng.standard_t(3, n), 199, rng) for _ in range(reps)])
    for level in (0.05, 0.01):
        low, high = stats.binom.ppf([0.0005, 0.9995], reps, level) / reps
        assert low <= (p <= level).mean() <= high, level
        assert high < 2 * level
