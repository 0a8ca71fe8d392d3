"""Does the primary's verdict survive the groups' noise and each region left out?

Two checks stand beside the primary test (docs/method.md, "Is the primary more than group
size?"):

- **Beyond noise.** A gap between two small groups is large by noise alone (the absolute
  difference of two noisy accuracies grows with ``1/n_a + 1/n_b``), and a distance can grow
  as groups shrink, so the two correlate where regions do not matter. The check holds the
  distances as measured and draws the gaps from each group's noise alone (its metric's
  two-stage bootstrap replicates, every group's true metric the same): its p is the share of
  draws whose rho is at least the primary's
  (:func:`~regbias.analysis.robustness.noise_only.noise_only_check`). On planted nulls where
  size alone drives both matrices it holds its level where the raw test rejects at three to
  five times it (``benchmarks/primary_size_null.py``).
- **Each region left out.** The same test on the pairs without one region, for each region.

A supported primary that loses its verdict in either is *fragile*: :meth:`PrimaryChecks.fragile`
says why, in one clause. The checks run in
:func:`regbias.analysis.robustness.primary.check_primary`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from regbias.numbers import p_text


@dataclass(frozen=True)
class PrimaryCheck:
    """The primary's test once more, on the pairs without one region.

    Attributes:
        left_out: the region left out.
        rho: Spearman's rho on those pairs (NaN: not tested).
        p_value: its permutation p in the primary's direction.
        significant: whether ``p_value`` is below the primary's level.
        note: why it was not tested ("" where it was).
    """

    left_out: str = ""
    rho: float = math.nan
    p_value: float = math.nan
    significant: bool = False
    note: str = ""

    @property
    def tested(self) -> bool:
        """Whether the test ran and gave a rho."""
        return not self.note and math.isfinite(self.rho)


@dataclass(frozen=True)
class NoiseCheck:
    """The primary's rho against the rhos its distances reach with gaps of noise alone.

    Attributes:
        null_rho: the median rho of the noise draws: what noise alone gives at these group
            sizes with these distances (NaN: not tested).
        p_value: the share of draws at least as extreme as the primary's rho, in its direction
            (``(1 + hits) / (1 + draws)``).
        significant: whether ``p_value`` is below the primary's level.
        draws: how many noise draws.
        note: why it was not tested ("" where it was).
    """

    null_rho: float = math.nan
    p_value: float = math.nan
    significant: bool = False
    draws: int = 0
    note: str = ""

    @property
    def tested(self) -> bool:
        """Whether the test ran and gave a p."""
        return not self.note and math.isfinite(self.p_value)


@dataclass(frozen=True)
class PrimaryChecks:
    """The check beyond noise and the primary with each region left out.

    Attributes:
        noise: the primary's rho against gaps of noise alone.
        without_each: one check per region, in the primary's group order.
    """

    noise: NoiseCheck
    without_each: tuple[PrimaryCheck, ...] = ()

    def lost_without(self) -> tuple[PrimaryCheck, ...]:
        """The regions whose absence leaves the primary unsupported (untested ones excluded)."""
        return tuple(c for c in self.without_each if c.tested and not c.significant)

    def fragile(self, supported: bool) -> str:
        """Why a supported primary is fragile, in one clause ("" where it is not, or untested).

        Args:
            supported: whether the primary test itself is significant.
        """
        if not supported:
            return ""
        reasons = []
        if self.noise.tested and not self.noise.significant:
            p = p_text(self.noise.p_value)
            reasons.append(f"not shown beyond the groups' noise (p = {p})")
        lost = self.lost_without()
        if lost:
            named = ", ".join(f"{c.left_out} (p = {p_text(c.p_value)})" for c in lost)
            reasons.append(f"not shown without {named}")
        return "; ".join(reasons)
