"""One correlation of the table as a typed value: what the analysis returns and readers read.

The correlation table (:func:`regbias.analysis.correlation.table.correlations`, with the
robustness checks merged in) is computed as a DataFrame, one row per distance and performance
column; the analysis hands it on as :class:`Correlation` values (``Analysis.correlations``),
and only a writer turns them back into a table (:func:`correlation_frame`: the CSV, the
heatmap, the page's table). The column names live here and in the table's computation only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from regbias.analysis.multiplicity import ADJUSTMENTS, STATISTICS

#: The table's columns, each named once (the writer and this reader use these names).
RHO = "spearman_rho"
TAU = "kendall_tau"
RHO_P = "spearman_p_perm"
TAU_P = "kendall_p_perm"
RHO_CI = ("spearman_ci_low", "spearman_ci_high")


def p_name(statistic: str, adjust: str) -> str:
    """The column of ``statistic``'s (``spearman``, ``kendall``) p under ``adjust``."""
    return f"{statistic}_{ADJUSTMENTS[adjust]}"


def _number(value: object) -> float:
    """A cell as a float (NaN where it is missing or not a number)."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


@dataclass(frozen=True)
class Correlation:
    """One distance column against one performance column, as the table holds it.

    Attributes:
        distance: the distance column (``dist_sinkhorn_long``).
        performance: the performance column (``gap_accuracy``).
        n_pairs: the pairs correlated.
        n_pairs_left_out: pairs left out where a value is undefined.
        rho: Spearman's rho (NaN: no rank correlation).
        tau: Kendall's tau.
        p: each statistic's p-values by adjustment (``{"spearman": {"maxt": ...}}``; the
            unadjusted Mantel p is ``none``).
        interval: the bootstrap interval of the measured rho (NaN ends: none).
        bootstrap_note: why there is no interval ("" where there is one or none was asked).
        bootstrap_sources: what the interval resampled (``models+texts``).
        row: every cell of its table row, in the table's column order (what a writer writes;
            empty for a correlation built by hand); the cells not read into the fields above
            are the robustness checks' columns (leave one group out, partial rho, ...).
    """

    distance: str
    performance: str
    n_pairs: int
    rho: float
    tau: float = math.nan
    n_pairs_left_out: int = 0
    p: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    interval: tuple[float, float] = (math.nan, math.nan)
    bootstrap_note: str = ""
    bootstrap_sources: str = ""
    row: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Correlation:
        """The correlation a table row holds (a column it lacks takes its default)."""
        p = {
            statistic: {
                adjust: _number(row.get(p_name(statistic, adjust)))
                for adjust in ADJUSTMENTS
                if p_name(statistic, adjust) in row
            }
            for statistic in STATISTICS
        }
        pairs, left = _number(row.get("n_pairs", 0)), _number(row.get("n_pairs_left_out", 0))
        note = row.get("bootstrap_note")
        return cls(
            distance=str(row["distance"]),
            performance=str(row["performance"]),
            n_pairs=0 if math.isnan(pairs) else int(pairs),
            rho=_number(row.get(RHO)),
            tau=_number(row.get(TAU)),
            n_pairs_left_out=0 if math.isnan(left) else int(left),
            p=p,
            interval=(_number(row.get(RHO_CI[0])), _number(row.get(RHO_CI[1]))),
            bootstrap_note=note if isinstance(note, str) else "",
            bootstrap_sources=str(row.get("bootstrap_sources") or ""),
            row=dict(row),
        )

    def with_checks(self, checks: Mapping[str, Any]) -> Correlation:
        """The correlation with robustness ``checks`` its row lacks added (after its cells)."""
        return Correlation.of(
            {**self.row, **{k: v for k, v in checks.items() if k not in self.row}}
        )

    def p_value(self, adjust: str, statistic: str = "spearman") -> float:
        """The statistic's p under ``adjust`` (NaN where the table has none)."""
        return self.p.get(statistic, {}).get(adjust, math.nan)

    @property
    def has_rho(self) -> bool:
        """Whether a rank correlation was measured."""
        return math.isfinite(self.rho)

    @property
    def has_interval(self) -> bool:
        """Whether the measured rho has a bootstrap interval."""
        return all(math.isfinite(end) for end in self.interval)

    def is_pair(self, pair: tuple[str, str] | None) -> bool:
        """Whether this is the correlation of ``(distance, performance)``."""
        return pair is not None and (self.distance, self.performance) == pair

    def check(self, name: str, default: Any = math.nan) -> Any:
        """A robustness check's value (``loo_rho_min``, ``partial_rho``...), else ``default``."""
        return default if name in _READ else self.row.get(name, default)


_READ = {
    "distance",
    "performance",
    "n_pairs",
    "n_pairs_left_out",
    RHO,
    TAU,
    *RHO_CI,
    "bootstrap_note",
    "bootstrap_sources",
    *(p_name(s, a) for s in STATISTICS for a in ADJUSTMENTS),
}


def correlation_rows(table: pd.DataFrame | None) -> list[Correlation]:
    """Every row of a correlation table, in order (none for None)."""
    return [] if table is None else [Correlation.of(r) for r in table.to_dict(orient="records")]


def correlation_frame(rows: Sequence[Correlation]) -> pd.DataFrame:
    """The correlations as the table they came from (a writer's form: the CSV, a heatmap)."""
    return pd.DataFrame([dict(row.row) for row in rows])


def strongest_rows(rows: list[Correlation], k: int) -> list[Correlation]:
    """The ``k`` rows with the largest absolute rho (a row without one last), stably."""
    order = sorted(rows, key=lambda c: -abs(c.rho) if c.has_rho else math.inf)
    return order[:k]
