"""The paired sign-flip test over texts: a rewrite against its matched control.

Each changed text has two edited versions, the variety rewrite and the control. Where the two
edits are exchangeable (the null: the variety's forms do nothing the control's words do not),
each text's difference of their effects is as likely to have either sign, and flipping signs
at random draws the statistic's null distribution exactly. A p-value counts the observed
statistic among the draws, so it is never below ``1 / (relabellings + 1)``.

A verdict that the rewrite does something *beyond* the control joins two such tests as an
intersection-union test (Berger 1982): the rewrite against the text as written, and the rewrite
against the control; it rejects only where both do, so its p-value is the larger of the two and
it holds its level under either null without adjustment.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

import numpy as np

from regbias.analysis.multiplicity import adjust_p

#: A frozen dataclass row with a ``verdict`` (:class:`Verdict`).
Row = TypeVar("Row", bound=Any)


@dataclass(frozen=True)
class Verdict:
    """Two paired sign-flip tests joined as an intersection-union test.

    Attributes:
        moved: p that the rewrite moves the texts at all (toward B; their accuracy).
        beyond: p that it moves them more than its control does.
        adjusted: the verdict's p, Holm-adjusted over the directions (NaN: not tested).
        differs: the adjusted p is at most the level.
    """

    moved: float = math.nan
    beyond: float = math.nan
    adjusted: float = math.nan
    differs: bool = False

    @property
    def p(self) -> float:
        """The verdict's p: the larger of the two (NaN where either is)."""
        if math.isnan(self.moved) or math.isnan(self.beyond):
            return math.nan
        return max(self.moved, self.beyond)


#: A flipped mean this close to the observed one counts as a tie (it exceeds).
_TIE = 1e-12
#: Sign-flip draws per chunk (bounds the memory of a ``(chunk, n)`` sign matrix).
_CHUNK = 1024


def sign_flip_p(
    differences: np.ndarray,
    relabellings: int,
    rng: np.random.Generator,
    alternative: Literal["greater", "less", "two-sided"] = "greater",
) -> float:
    """The sign-flip p-value of the mean of per-text ``differences`` (NaN: no texts)."""
    values = np.asarray(differences, dtype=np.float64)
    if alternative == "less":
        values = -values
    if not len(values):
        return float("nan")
    observed = float(values.mean())
    if alternative == "two-sided":
        observed = abs(observed)
    exceed, left = 0, relabellings
    while left > 0:
        size = min(_CHUNK, left)
        signs = rng.integers(0, 2, size=(size, len(values)), dtype=np.int8) * 2 - 1
        flipped = signs @ values / len(values)
        if alternative == "two-sided":
            flipped = np.abs(flipped)
        exceed += int((flipped >= observed - _TIE).sum())
        left -= size
    return (1 + exceed) / (1 + relabellings)


def holm_rows(rows: Sequence[Row], alpha: float) -> list[Row]:
    """``rows`` with their verdicts Holm-adjusted over the rows (untested rows kept)."""
    adjusted = adjust_p(np.array([r.verdict.p for r in rows], dtype=np.float64), "holm")
    return [
        replace(r, verdict=replace(r.verdict, adjusted=float(p), differs=bool(p <= alpha)))
        if math.isfinite(p)
        else r
        for r, p in zip(rows, adjusted, strict=True)
    ]
