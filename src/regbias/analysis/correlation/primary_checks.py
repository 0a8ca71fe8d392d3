"""Does the primary's verdict survive group size and each region left out?

Two checks stand beside the primary test (docs/method.md, "Is the primary more than group
size?"):

- **Size-controlled.** A gap between two small groups is large by noise alone (the absolute
  difference of two noisy accuracies grows with ``1/n_a + 1/n_b``), and a distance can grow
  with the same term, so the two correlate where regions do not matter. The check is the
  one-sided partial Mantel test of the primary's distance and performance given
  ``1/n_a + 1/n_b`` (:func:`~regbias.analysis.robustness.partial_mantel.partial_mantel`), on
  the same region pairs and relabellings. On a planted null where size alone drives both
  matrices it rejects within twice the level where the raw test rejects at three to five times
  it (``benchmarks/primary_size_null.py``).
- **Each region left out.** The same test on the pairs without one region, for each region.

A supported primary that loses its verdict in either is *fragile*: :meth:`PrimaryChecks.fragile`
says why, in one clause. The checks run in
:func:`regbias.analysis.robustness.primary.check_primary`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from regbias.numbers import p_text

#: The size check's note where group size orders a column exactly (no partial correlation).
SIZE_DETERMINES = "group size orders a column's ranks exactly: no partial correlation"


@dataclass(frozen=True)
class PrimaryCheck:
    """The primary's test once more, on a changed table or given group size.

    Attributes:
        left_out: the region left out ("" for the size-controlled check).
        rho: Spearman's rho on that table, or the partial rho given size (NaN: not tested).
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
class PrimaryChecks:
    """The size-controlled check and the primary with each region left out.

    Attributes:
        size: the partial Mantel test given ``1/n_a + 1/n_b``.
        without_each: one check per region, in the primary's group order.
    """

    size: PrimaryCheck
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
        if self.size.tested and not self.size.significant:
            p = self.size.p_value
            reasons.append(f"not shown given group size (partial p = {p_text(p)})")
        if self.size.note == SIZE_DETERMINES:
            reasons.append(f"not shown given group size ({SIZE_DETERMINES})")
        lost = self.lost_without()
        if lost:
            named = ", ".join(f"{c.left_out} (p = {p_text(c.p_value)})" for c in lost)
            reasons.append(f"not shown without {named}")
        return "; ".join(reasons)
