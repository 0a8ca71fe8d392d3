"""``analysis.counterfactual``: the same texts rewritten into another variety."""

from __future__ import annotations

from dataclasses import dataclass

from regbias.errors import ConfigError

#: Changed texts a direction needs for an interval and a test (fewer: counted, not tested).
MIN_CHANGED = 10


@dataclass(frozen=True)
class CounterfactualSettings:
    """``analysis.counterfactual``: rewrites into another variety, beside a matched control.

    Attributes:
        enabled: rewrite every group with a variety into the other groups' varieties; the
            encoder's shift toward the other group and the classifiers' flips are measured.
        pairs: the group pairs (``us-uk``; both directions each); None: every pair of groups
            written in different varieties.
        word_list: a CSV of lexis pairs of one's own (``american,british[,direction]``), added
            to the built-in pairs; None: the built-in pairs only.
        relabellings: sign flips of each direction's paired test (variety against control).
    """

    enabled: bool
    pairs: list[str] | None
    word_list: str | None
    relabellings: int

    def __post_init__(self) -> None:
        if not 99 <= self.relabellings <= 1_000_000:
            raise ConfigError(
                "analysis.counterfactual.relabellings must be 99 to 1000000 (the paired test's "
                f"sign flips); got {self.relabellings}"
            )
