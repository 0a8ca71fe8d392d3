"""``analysis.correlation``: the correlation table's relabellings and adjustment, the primary."""

from __future__ import annotations

from dataclasses import dataclass

from regbias.analysis.correlation.primary import Direction
from regbias.analysis.multiplicity import Adjustment
from regbias.errors import ConfigError
from regbias.settings_reader import check_choices

__all__ = ["CorrelationSettings"]


@dataclass(frozen=True)
class CorrelationSettings:
    """``analysis.correlation``: do distances track performance gaps.

    Attributes:
        relabellings: random group relabellings of every Mantel test when enumeration is too
            large.
        exact_limit: the largest ``K!`` enumerated exactly.
        adjust: the adjustment marking significance of the secondary tests: ``maxt``,
            ``holm``, ``bh`` or ``none``.
        primary: the declared hypothesis ``(distance column, performance column)``, tested
            alone on the regions' pairs; None when none is declared.
        primary_direction: the primary test's alternative (``auto``:
            :func:`~regbias.analysis.correlation.primary.expected_direction`).
    """

    relabellings: int
    exact_limit: int
    adjust: Adjustment
    primary: tuple[str, str] | None
    primary_direction: Direction

    def __post_init__(self) -> None:
        check_choices(self, "analysis.correlation")  # also made in Python
        if self.primary is not None and len(self.primary) != 2:
            raise ConfigError(
                "analysis.correlation.primary names one distance and one performance column, "
                f"e.g. [dist_sinkhorn_long, gap_accuracy]; got {list(self.primary)}."
            )
