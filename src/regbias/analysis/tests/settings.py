"""``analysis.tests``: the settings of the two tests of record, one group each."""

from __future__ import annotations

from dataclasses import dataclass

from regbias.analysis.tests.embedding import PairTestSettings
from regbias.analysis.tests.performance import PerfTestSettings

__all__ = ["PairwiseTestSettings"]


@dataclass(frozen=True)
class PairwiseTestSettings:
    """``analysis.tests``: which pairs of groups differ, in two spaces.

    Attributes:
        embedding: the test of record in the encoder's space (sentence vectors of every
            distinct text of both groups).
        performance: the test of record of the classifiers' per-text scores (the ``texts``
            design).
    """

    embedding: PairTestSettings
    performance: PerfTestSettings
