"""``analysis.explain``: what carries each difference the test of record finds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from regbias.errors import ConfigError
from regbias.settings_reader import check_choices

#: The Dirichlet prior of the words' log-odds: the pair's pooled counts or the whole corpus's.
PriorKind = Literal["pair", "corpus"]


@dataclass(frozen=True)
class ExplainSettings:
    """``analysis.explain``: per differing pair, its words, typical texts and a place control.

    Attributes:
        enabled: explain every pair the test of record calls different.
        mask_places: also run the test of record again with place names and demonyms
            masked (the place-name control).
        top_words: distinguishing words kept each way per pair.
        typical_texts: typical texts kept a side per pair.
        prior: ``pair`` (the two groups' pooled counts) or ``corpus`` (every group's).
        min_population: the smallest city of the gazetteer (15,000 or more).
    """

    enabled: bool
    mask_places: bool
    top_words: int
    typical_texts: int
    prior: PriorKind
    min_population: int

    def __post_init__(self) -> None:
        check_choices(self, "analysis.explain")
        if self.top_words < 1 or self.typical_texts < 1 or self.min_population < 15_000:
            raise ConfigError(
                "analysis.explain.top_words and typical_texts must be >= 1 and min_population "
                "15000 or more (the gazetteer's smallest cities); got "
                f"{self.top_words}, {self.typical_texts} and {self.min_population}"
            )
