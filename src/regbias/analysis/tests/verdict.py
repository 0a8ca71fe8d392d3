"""A family of pair tests in words: how many differ, which, and whether any could.

The encoder comparison page states each variant's test of record per family with it
(:mod:`regbias.report.encoders`). A test of ``K`` relabellings cannot give a p below
``1 / (1 + K)``, so after Holm over ``m`` pairs no pair can differ unless
``m / (1 + K) <= alpha``; a verdict says so rather than report "no pair differs" as if the
test could have found one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["DistanceVerdict"]

_WORDS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "unadjusted"}


@dataclass(frozen=True)
class DistanceVerdict:
    """The pair tests of one family (the test of record's region or reference pairs).

    Attributes:
        name: the family's name (``test of record, regions``).
        relabellings: relabellings behind each p (0: not tested).
        adjust: the adjustment over the distance's pairs.
        alpha: the level.
        table: one row per pair: ``group_a, group_b``, ``p``, ``p_adjusted``, ``differs``
            (and ``excess`` where known).
        family_size: the p-values adjusted together (0: this family's pairs alone).
    """

    name: str
    relabellings: int
    adjust: str
    alpha: float
    table: pd.DataFrame
    family_size: int = 0

    @property
    def tested(self) -> bool:
        """Whether the family was tested at all (it has relabellings)."""
        return self.relabellings > 0

    @property
    def n_pairs(self) -> int:
        """The number of pairs of groups the verdict covers."""
        return len(self.table)

    @property
    def differing(self) -> pd.DataFrame:
        """The pairs that differ, smallest adjusted p first."""
        rows = self.table[self.table["differs"]]
        return rows.sort_values(["p_adjusted", "p"], kind="stable")

    @property
    def smallest_adjusted_p(self) -> float:
        """The smallest adjusted p any pair could reach: ``m / (1 + K)`` for Holm and BH."""
        if not self.tested:
            return math.nan
        smallest = 1.0 / (1 + self.relabellings)
        scale = 1 if self.adjust == "none" else max(self.n_pairs, self.family_size)
        return min(1.0, scale * smallest)

    @property
    def can_reject(self) -> bool:
        """Whether the test's resolution allows any pair to differ at ``alpha``."""
        return self.tested and self.smallest_adjusted_p <= self.alpha

    def sentence(self, detectable: str = "", name: Callable[[str], str] = str) -> str:
        """The verdict in one line, e.g. "regions: 3 of 15 pairs differ (Holm p <= 0.05)".

        Args:
            detectable: what the test could have detected, appended when given.
            name: how a group's name is written (the report escapes it for Markdown).
        """
        head = f"`{self.name}`"
        if not self.tested:
            return (
                f"{head}: not tested (no relabellings; the distances of its {self.n_pairs} pairs "
                "are estimates without a verdict)."
            )
        family = max(self.n_pairs, self.family_size)
        rule = f"{_WORDS[self.adjust]} over {family} pair tests, p <= {self.alpha:g}; secondary"
        if not self.can_reject:
            return (
                f"{head}: no verdict possible: with {self.relabellings} relabellings the "
                f"smallest {_WORDS[self.adjust]} p over {max(self.n_pairs, self.family_size)} "
                "pair tests is "
                f"{self.smallest_adjusted_p:.2g} > {self.alpha:g} (raise its relabellings)."
            )
        found = self.differing
        listed = ", ".join(_pair(row, name) for row in found.itertuples()) or "none"
        text = f"{head}: {len(found)} of {self.n_pairs} pairs differ ({rule})"
        text += f": {listed}" if len(found) else " (none shown to differ)"
        if detectable:
            text += f"; {detectable}"
        return text + "."


def _pair(row: Any, name: Callable[[str], str]) -> str:
    """``a-b (excess 0.12, p 0.003)`` of a row of a verdict's table (an ``itertuples`` row)."""
    excess = getattr(row, "excess", math.nan)
    shown = "" if not math.isfinite(excess) else f"excess {excess:.3g}, "
    return f"{name(row.group_a)}-{name(row.group_b)} ({shown}p {_p(row.p_adjusted)})"


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.01 else f"{value:.3f}"
