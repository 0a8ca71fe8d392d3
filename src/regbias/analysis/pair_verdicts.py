"""Secondary pair tests of the distances, adjusted over every pair of every tested distance.

Which pairs differ is the test of record's (:mod:`regbias.analysis.pair_test`). A distance
matrix tested by its own joint relabellings (:mod:`regbias.distances.relabel`, where its
``relabellings`` are set) carries one permutation p per pair: a secondary, exploratory test
(passages re-cut in every repetition make the long-text ones anti-conservative, PROTOCOL.md).
The pairs of all tested distances listed together form one family: their p-values are
adjusted together (Holm by default), and a pair *differs* when its adjusted p is at most the
level. A test of ``K`` relabellings cannot give a p below ``1 / (1 + K)``, so after Holm
over ``m`` pairs no pair can differ unless ``m / (1 + K) <= alpha``; a verdict says so rather
than report "no pair differs" as if the test could have found one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from regbias.analysis.multiplicity import adjust_p
from regbias.distances.matrix import DistanceMatrix

__all__ = [
    "PAIR_ADJUSTMENTS",
    "DistanceVerdict",
    "pair_method",
    "pair_verdicts",
    "with_verdict_columns",
]

#: Adjustments over a distance's pairs (maxT needs one permutation of all groups at once,
#: which pair relabellings are not: ``maxt`` falls back to Holm).
PAIR_ADJUSTMENTS = ("holm", "bh", "none")
_WORDS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "unadjusted"}


def pair_method(adjust: str) -> str:
    """The adjustment used over pairs for ``analysis.adjust`` (``maxt``: Holm)."""
    return adjust if adjust in PAIR_ADJUSTMENTS else "holm"


@dataclass(frozen=True)
class DistanceVerdict:
    """The pair tests of one distance.

    Attributes:
        name: the distance (``energy_long``, ``lda``, ...).
        relabellings: joint relabellings behind each p (0: not tested).
        adjust: the adjustment over the distance's pairs.
        alpha: the level.
        table: one row per pair: ``group_a, group_b, mean, excess`` (distance above the mean
            floor; NaN without floors), ``p`` (the relabelling test), ``p_adjusted`` and
            ``differs``.
        family_size: the p-values adjusted together (every tested distance's pairs; 0: this
            distance's pairs alone).
    """

    name: str
    relabellings: int
    adjust: str
    alpha: float
    table: pd.DataFrame
    family_size: int = 0

    @property
    def tested(self) -> bool:
        """Whether the distance was tested at all (it has relabellings)."""
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
        """The verdict in one line, e.g. "energy_long: 3 of 28 pairs differ (Holm p <= 0.05)".

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
        text += f": {listed}" if len(found) else " (none: every pair within noise)"
        if detectable:
            text += f"; {detectable}"
        return text + "."


def _pair(row: Any, name: Callable[[str], str]) -> str:
    """``a-b (excess 0.12, p 0.003)`` of a row of a verdict's table (an ``itertuples`` row)."""
    excess = row.excess
    shown = "" if not math.isfinite(excess) else f"excess {excess:.3g}, "
    return f"{name(row.group_a)}-{name(row.group_b)} ({shown}p {_p(row.p_adjusted)})"


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.01 else f"{value:.3f}"


def pair_verdicts(
    matrices: dict[str, DistanceMatrix], adjust: str = "holm", alpha: float = 0.05
) -> dict[str, DistanceVerdict]:
    """The verdicts of every distance matrix (tested or not), in the matrices' order.

    Args:
        matrices: the distance matrices by name.
        adjust: ``analysis.adjust`` (``maxt`` adjusts pairs by Holm, see :func:`pair_method`).
        alpha: the level.
    """
    method = pair_method(adjust)
    verdicts = {name: _verdict(matrix, method, alpha) for name, matrix in matrices.items()}
    return _adjusted_together(verdicts, method, alpha)


def _adjusted_together(
    verdicts: dict[str, DistanceVerdict], method: str, alpha: float
) -> dict[str, DistanceVerdict]:
    """Every tested distance's pairs adjusted as one family (they are listed together)."""
    tested = [name for name, v in verdicts.items() if v.tested]
    if len(tested) < 2:
        return verdicts
    joint = np.concatenate([verdicts[n].table["p"].to_numpy() for n in tested])
    adjusted = adjust_p(joint, method)
    start = 0
    out = dict(verdicts)
    for name in tested:
        verdict = verdicts[name]
        table = verdict.table.copy()
        table["p_adjusted"] = adjusted[start : start + len(table)]
        table["differs"] = table["p_adjusted"].to_numpy() <= alpha
        start += len(table)
        out[name] = replace(verdict, table=table, family_size=len(joint))
    return out


def _verdict(matrix: DistanceMatrix, method: str, alpha: float) -> DistanceVerdict:
    pairs = matrix.pairs()
    k = len(matrix.groups)
    upper = np.triu_indices(k, 1)
    excess = matrix.excess()
    pairs["excess"] = excess[upper] if excess is not None else np.nan
    p = matrix.p_above_noise
    pairs["p"] = p[upper] if p is not None else np.nan
    pairs["p_adjusted"] = adjust_p(pairs["p"].to_numpy(), method)
    pairs["differs"] = pairs["p_adjusted"].to_numpy() <= alpha
    pairs = pairs.drop(columns=["sd"])
    return DistanceVerdict(matrix.name, matrix.relabellings, method, alpha, pairs)


def with_verdict_columns(
    pairwise: pd.DataFrame, verdicts: dict[str, DistanceVerdict]
) -> pd.DataFrame:
    """The pair table with each tested distance's pair-test verdicts as columns.

    Args:
        pairwise: the pair table.
        verdicts: :func:`pair_verdicts` by distance name.

    Returns:
        A copy with ``p_adjusted_dist_<name>`` and ``differs_dist_<name>`` per tested
        distance (pairs matched in either order; NaN / False where a pair is not in the
        matrix).
    """
    out = pairwise.copy()
    for name, verdict in verdicts.items():
        if not verdict.tested:
            continue
        keyed = {
            frozenset((row.group_a, row.group_b)): (row.p_adjusted, row.differs)
            for row in verdict.table.itertuples()
        }
        found = [
            keyed.get(frozenset((a, b)), (np.nan, False))
            for a, b in zip(out["group_a"], out["group_b"], strict=True)
        ]
        out[f"p_adjusted_dist_{name}"] = [f[0] for f in found]
        out[f"differs_dist_{name}"] = [bool(f[1]) for f in found]
    return out
