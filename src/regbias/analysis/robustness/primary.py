"""Does the primary survive the groups' noise and each region left out? Its checks, run.

What the checks are and why: :mod:`regbias.analysis.correlation.primary_checks` and
docs/method.md, "Is the primary more than group size?".
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest, primary_test, region_pairs
from regbias.analysis.correlation.primary_checks import PrimaryCheck, PrimaryChecks
from regbias.analysis.pair_table import MIN_GROUPS
from regbias.analysis.permutations import EXACT_LIMIT
from regbias.analysis.robustness.noise_only import NoiseDraws, noise_only_check


def check_primary(
    table: pd.DataFrame,
    test: PrimaryTest,
    noise: NoiseDraws | str,
    *,
    relabellings: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> PrimaryTest:
    """``test`` with its checks: beyond the groups' noise, and with each region left out.

    Args:
        table: the pair table ``test`` was run on.
        test: the primary test (untested ones come back unchanged).
        noise: the groups' noise draws, or why there are none (the check's note).
        relabellings: the primary's random relabellings (where ``K!`` is too many).
        seed: their seed.
        exact_limit: the largest ``K!`` enumerated.
    """
    if test.note or not math.isfinite(test.rho):
        return test
    beyond_noise = noise_only_check(region_pairs(table, test.left_out), test, noise)
    if test.n_groups - 1 < MIN_GROUPS:
        note = f"{test.n_groups - 1} regions left, fewer than {MIN_GROUPS}"
        each = tuple(PrimaryCheck(g, note=note) for g in test.groups)
    else:
        each = tuple(_without(table, test, g, relabellings, seed, exact_limit) for g in test.groups)
    return replace(test, checks=PrimaryChecks(beyond_noise, each))


def _without(
    table: pd.DataFrame,
    test: PrimaryTest,
    region: str,
    relabellings: int,
    seed: int,
    exact_limit: int,
) -> PrimaryCheck:
    """The primary's test on the pairs of ``table`` without ``region`` (its relabellings)."""
    found = primary_test(
        table,
        test.distance,
        test.performance,
        reference_groups=[*test.left_out, region],
        direction=test.direction,
        significance=test.significance,
        relabellings=relabellings,
        seed=seed,
        exact_limit=exact_limit,
    )
    return PrimaryCheck(region, found.rho, found.p_value, found.significant, found.note)
