"""How many drawn texts fit the encoder's window: per measurement, from the draw records.

The draws count, for each draw, the corpus texts embedded in full (``texts_in_full`` in
``data/draws.csv``); the others are cut at the window. A job's counts and a sweep's sums reach
the report as :class:`WindowFit` (its truncation caveat).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


def texts_in_full(records: pd.DataFrame) -> pd.DataFrame:
    """Per kind of the draw records (``data/draws.csv``): texts drawn, in full, and the share.

    Twins count with their kind; empty when the draws did not know the encoder's window.
    """
    if "texts_in_full" not in records or records["texts_in_full"].isna().all():
        return pd.DataFrame(columns=["kind", "texts", "texts_in_full", "share"])
    frame = records.assign(kind=records["kind"].str.removesuffix("_twin"))
    totals = frame.groupby("kind", sort=False)[["texts", "texts_in_full"]].sum()
    totals["share"] = totals["texts_in_full"] / totals["texts"]
    return totals.astype({"texts": int, "texts_in_full": int}).reset_index()


@dataclass(frozen=True)
class WindowFit:
    """How many of one measurement's drawn corpus texts fit the encoder's window.

    Attributes:
        kind: the measurement (``short``, ``long``, ``sentence``, ``lda``).
        texts: the corpus texts its draws use (twins included; a text drawn twice counts twice).
        in_full: those embedded in full; the others are cut at the window.
    """

    kind: str
    texts: int
    in_full: int

    @property
    def cut_share(self) -> float:
        """The share of the texts cut at the window (0 where none was drawn)."""
        return 1.0 - self.in_full / self.texts if self.texts else 0.0

    @staticmethod
    def of(records: pd.DataFrame) -> list[WindowFit]:
        """One per kind of the draw records (none where the window was not known)."""
        counts = texts_in_full(records)
        return [
            WindowFit(str(r.kind), int(r.texts), int(r.texts_in_full)) for r in counts.itertuples()
        ]

    @staticmethod
    def pooled(fits: list[list[WindowFit]]) -> list[WindowFit]:
        """Several jobs' fits summed per kind, in first-seen order."""
        totals: dict[str, tuple[int, int]] = {}
        for fit in (f for job in fits for f in job):
            texts, in_full = totals.get(fit.kind, (0, 0))
            totals[fit.kind] = (texts + fit.texts, in_full + fit.in_full)
        return [WindowFit(kind, texts, in_full) for kind, (texts, in_full) in totals.items()]
