"""The typed result of the explanations: one :class:`PairExplanation` per differing pair."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.explain.typical import TYPICAL_COLUMNS
from regbias.analysis.explain.words import WORD_COLUMNS
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.serial import structure, unstructure


@dataclass(frozen=True)
class PairExplanation:
    """What carries one pair's difference, on the texts its test of record used.

    Attributes:
        group_a: the pair's first group (side a; positive ``z`` and projections are its).
        group_b: its second group.
        words: the distinguishing words (:data:`~regbias.analysis.explain.words.WORD_COLUMNS`).
        typical: the typical texts (:data:`~regbias.analysis.explain.typical.TYPICAL_COLUMNS`).
        effect: the test of record's size-free effect.
        p_adjusted: its Holm-adjusted p.
        masked_share: the share of the pair's texts in which a place name was masked; NaN (None
            for ``masked_differs``) in each ``masked_*`` where no control ran.
        masked_effect: the effect on the masked texts.
        masked_p_adjusted: the Holm-adjusted p on the masked texts.
        masked_differs: the verdict on the masked texts.
        has_words_a: whether side a's texts hold any word (False: emoji or punctuation only,
            and no word is ranked against it).
        has_words_b: the same of side b's texts.
        masked_names_a: the place names masked in side a's texts, with their counts, most
            first (empty where no control ran or none was found).
        masked_names_b: the same of side b's texts.
    """

    group_a: str
    group_b: str
    words: pd.DataFrame
    typical: pd.DataFrame
    effect: float
    p_adjusted: float
    masked_share: float = math.nan
    masked_effect: float = math.nan
    masked_p_adjusted: float = math.nan
    masked_differs: bool | None = None
    has_words_a: bool = True
    has_words_b: bool = True
    masked_names_a: dict[str, int] = field(default_factory=dict)
    masked_names_b: dict[str, int] = field(default_factory=dict)

    @property
    def pair(self) -> str:
        """``a-b``."""
        return f"{self.group_a}-{self.group_b}"

    @property
    def only_places(self) -> bool:
        """Whether the pair, found to differ, is not shown to differ once places are masked."""
        return self.masked_differs is False

    def has_words(self, side: str) -> bool:
        """Whether side ``a``'s or ``b``'s texts hold any word."""
        return self.has_words_a if side == "a" else self.has_words_b

    @property
    def ranked(self) -> bool:
        """Whether the words are ranked by log-odds (both sides' texts hold words)."""
        return self.has_words_a and self.has_words_b

    def side_words(self, side: str) -> pd.DataFrame:
        """The words of side ``a`` (z > 0) or ``b`` (z < 0).

        Where a side's texts hold no word, it has none and the other side's are the words it
        uses (by count; nothing is ranked against an empty side).
        """
        if not self.has_words(side):
            return self.words.iloc[:0]
        if not self.ranked:
            return self.words[self.words[f"count_{side}"].astype(int) > 0]
        positive = self.words["z"].astype(float) > 0
        return self.words[positive if side == "a" else ~positive]

    def masked_names(self, side: str) -> dict[str, int]:
        """The place names masked in side ``a``'s or ``b``'s texts, with their counts."""
        return self.masked_names_a if side == "a" else self.masked_names_b

    def side_texts(self, side: str) -> pd.DataFrame:
        """The typical texts of side ``a`` or ``b``."""
        return self.typical[self.typical["side"] == side]

    def __post_init__(self) -> None:
        """An empty table keeps its columns (one read back from a file has none)."""
        for name, columns in (("words", WORD_COLUMNS), ("typical", TYPICAL_COLUMNS)):
            if getattr(self, name).empty:
                frame = getattr(self, name).reindex(columns=list(columns))
                object.__setattr__(self, name, frame)


@dataclass(frozen=True)
class Explanations:
    """What carries each difference the test of record finds.

    Attributes:
        settings: what was run.
        pairs: one explanation per differing pair, in the test's order.
        masked: the test of record again on the texts with place names masked (None: the
            control did not run).
        gazetteer: the gazetteer in words ("" where no control ran).
        note: why the control did not run where it was asked for ("" otherwise).
        skipped: why nothing was explained though ``analysis.explain`` is on (the test of
            record did not run); "" where the explanations ran.
        place_shares: per group of a differing pair, the share of its texts that name a place
            (the control's gazetteer; measured whether or not the control runs).
    """

    settings: ExplainSettings
    pairs: list[PairExplanation] = field(default_factory=list)
    masked: EmbeddingPairTests | None = None
    gazetteer: str = ""
    note: str = ""
    skipped: str = ""
    place_shares: dict[str, float] = field(default_factory=dict)

    @property
    def controlled(self) -> bool:
        """Whether the place-name control ran."""
        return self.masked is not None

    def only_places(self) -> list[PairExplanation]:
        """The differing pairs not shown to differ once place names are masked."""
        return [p for p in self.pairs if p.only_places]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (:meth:`from_dict` reads it back; tables as lists of records)."""
        return dict(unstructure(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Explanations:
        """The explanations written by :meth:`to_dict` (what an older file lacks: defaults)."""
        values = dict(data)
        masked = values.pop("masked", None)
        found = structure(values, cls)
        if masked is None:
            return found
        return dataclasses.replace(found, masked=EmbeddingPairTests.from_dict(masked))
