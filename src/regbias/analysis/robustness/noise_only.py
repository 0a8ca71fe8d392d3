"""Is the primary's rho more than the groups' noise gives at their sizes?

A gap between two small groups is large by noise alone, and a distance can grow as groups
shrink (small groups are re-drawn more), so distances and gaps correlate where regions do not
matter. This test keeps the distances as measured and asks how large a rho the same
distances reach with gaps made of noise alone: each group's metric moved as its two-stage
bootstrap replicates move it (models, then texts: the Groups table's intervals), every group's
true metric the same. Its p is the share of noise draws whose rho is at least the primary's.

Holding the distances fixed, it is valid whatever they follow (size, noise, anything); it
assumes only that the replicates carry the groups' noise, shared model effects included
(docs/method.md, "Is the primary more than group size?"; ``benchmarks/primary_size_null.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.primary_checks import NoiseCheck
from regbias.analysis.pair_table import GAP_PREFIX
from regbias.analysis.pairs.performance import group_replicates, too_few_units
from regbias.analysis.pairs.pooled_scores import MIN_RESAMPLED, PerfTexts, group_metrics
from regbias.analysis.permutations import PAIR_COLUMNS, Alternative, permutation_p
from regbias.analysis.ranks import spearman_rows

#: The check's note where the study has no per-text scores to draw the noise from.
NO_TEXTS = (
    "no per-text scores to draw the groups' noise from (a bare pair table or the draws design)"
)


@dataclass(frozen=True)
class NoiseDraws:
    """Each group's metric as its noise alone moves it.

    Attributes:
        groups: the groups, in column order.
        deviations: ``(B, G)`` each bootstrap replicate of a group's metric less its measured
            value.
    """

    groups: tuple[str, ...]
    deviations: np.ndarray

    def gaps(self, group_a: Sequence[str], group_b: Sequence[str]) -> np.ndarray:
        """``(B, P)`` the pairs' absolute gaps in each draw of noise alone."""
        column = {g: i for i, g in enumerate(self.groups)}
        a = [column[g] for g in group_a]
        b = [column[g] for g in group_b]
        return np.abs(self.deviations[:, a] - self.deviations[:, b])


def noise_draws(
    texts: PerfTexts | None,
    groups: Sequence[str],
    performance: str,
    n_bootstrap: int,
    seed: int,
) -> NoiseDraws | str:
    """The groups' noise in ``performance`` (``gap_<metric>``), or why there is none.

    The draws are the Groups table's replicates (:func:`group_replicates`: the same groups,
    count and seed give the same replicates), each less its group's measured metric.
    """
    if texts is None:
        return NO_TEXTS
    metric = performance.removeprefix(GAP_PREFIX)
    if not performance.startswith(GAP_PREFIX) or metric not in texts.metrics:
        return f"{performance} is not a gap of a per-text metric ({', '.join(texts.metrics)})"
    if n_bootstrap <= 0:
        return "no bootstrap draws (analysis.robustness.resamples=0)"
    if too_few_units(texts):
        return f"too few training units to resample, {MIN_RESAMPLED} needed: run more seeds"
    replicates = group_replicates(texts, groups, n_bootstrap, seed)[metric]
    present = tuple(g for g in groups if g in texts.members)
    measured = group_metrics(texts, present)[metric]
    return NoiseDraws(present, replicates - measured[None, :])


def noise_only_check(
    regions: pd.DataFrame, test: PrimaryTest, draws: NoiseDraws | str
) -> NoiseCheck:
    """The primary's rho on ``regions`` (its pairs) against its rhos with gaps of noise alone.

    The pairs are the test's: those with both values. ``draws``: the groups' noise, or why
    there is none (the check's note).
    """
    if isinstance(draws, str):
        return NoiseCheck(note=draws)
    missing = sorted(set(test.groups) - set(draws.groups))
    if missing:
        return NoiseCheck(note=f"no noise draws of {', '.join(missing)}")
    regions = regions[[*PAIR_COLUMNS, test.distance, test.performance]].dropna()  # the test's
    null_gaps = draws.gaps(regions["group_a"].tolist(), regions["group_b"].tolist())
    if not np.isfinite(null_gaps).all():
        return NoiseCheck(note="a group's noise draws are undefined (NaN)")
    distance = regions[test.distance].to_numpy(dtype=np.float64)[None, :]
    null = spearman_rows(distance, null_gaps)
    p = noise_p(test.rho, null, test.direction)
    return NoiseCheck(
        null_rho=float(np.nanmedian(null)),
        p_value=p,
        significant=bool(p < test.significance),
        draws=len(null),
    )


def noise_p(rho: float, null: np.ndarray, alternative: Alternative) -> float:
    """``(1 + hits) / (1 + B)``: the draws at least as extreme as ``rho`` in ``alternative``.

    One-sided, the :func:`~regbias.analysis.permutations.permutation_p` of ``rho`` before its
    draws. The null is not centred on 0 (noise alone gives small groups large gaps), so a
    two-sided p is twice the smaller one-sided p, at most 1. A draw with no rho (a constant
    row) counts as extreme.
    """
    if alternative == "two-sided":
        return min(1.0, 2 * min(noise_p(rho, null, "greater"), noise_p(rho, null, "less")))
    return permutation_p(np.concatenate([[rho], null]), alternative)
