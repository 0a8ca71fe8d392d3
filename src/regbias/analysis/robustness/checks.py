"""Does a distance-performance correlation survive its own evidence? One row per correlation.

Leave one group out and without ``baseline``/``mixed``
(:mod:`regbias.analysis.robustness.leave_one_out`), bootstrap intervals
(:mod:`regbias.analysis.robustness.bootstrap`), a partial Mantel test controlling for group
size (:mod:`regbias.analysis.robustness.partial_mantel`); :func:`robustness` joins them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.correlation.result import RHO, TAU
from regbias.analysis.correlation.table import CORRELATION_KEYS
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.permutations import EXACT_LIMIT
from regbias.analysis.robustness.bootstrap import (
    BARE_TABLE,
    bootstrap_intervals,
    bootstrap_replicates,
    resampling_units,
)
from regbias.analysis.robustness.leave_one_out import (
    leave_one_group_out,
    logo_summary,
    special_group_columns,
)
from regbias.analysis.robustness.partial_mantel import partial_mantel
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError
from regbias.settings_reader import check_draws


@dataclass(frozen=True)
class RobustnessSettings:
    """``analysis.robustness``: the bootstrap behind every interval of the analysis.

    Attributes:
        resamples: bootstrap resamples of the models, the distance repetitions and the
            evaluation texts (0 = no intervals): the correlations', the primary's, the
            performance test's and the encoders' comparison's.
        confidence: the level of those intervals.
    """

    resamples: int
    confidence: float

    def __post_init__(self) -> None:
        check_draws("analysis.robustness", resamples=self.resamples)
        if self.resamples < 0 or not 0 < self.confidence < 1:
            raise ConfigError(
                "analysis.robustness.resamples must be >= 0 and analysis.robustness.confidence "
                f"in (0, 1); got {self.resamples} and {self.confidence}."
            )


def robustness(
    table: pd.DataFrame,
    found: pd.DataFrame,
    *,
    distances: Mapping[str, DistanceMatrix] | None = None,
    per_model: pd.DataFrame | None = None,
    group_sizes: Mapping[str, int] | None = None,
    n_bootstrap: int = 999,
    confidence: float = 0.95,
    significance: float = 0.05,
    relabellings: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
    texts: PerfTexts | None = None,
) -> pd.DataFrame:
    """Every check of the module for each row of a correlation table ``found`` of ``table``.

    The bootstrap resamples ``distances``' repetitions, ``per_model``'s models and ``texts``
    (none: a bare table); ``group_sizes`` gives the partial Mantel covariate (None: no such
    test); ``significance`` is what ``survives_loo`` asks of every leave-one-group-out p.

    Returns:
        One row per correlation, in the order of ``found``: ``distance, performance,
        spearman_rho, kendall_tau``, the :func:`logo_summary` columns, ``rho_without_*`` and
        ``p_without_*``, the :func:`bootstrap_intervals` columns, and ``partial_rho,
        partial_p, size_rho``.
    """
    distance_columns = list(dict.fromkeys(found["distance"]))
    performance_columns = list(dict.fromkeys(found["performance"]))
    permutation = {"relabellings": relabellings, "seed": seed, "exact_limit": exact_limit}
    out = found[[*CORRELATION_KEYS, RHO, TAU]].copy()
    logo = leave_one_group_out(table, distance_columns, performance_columns, **permutation)
    parts = [
        logo_summary(found, logo, significance),
        special_group_columns(table, distance_columns, performance_columns, **permutation),
    ]
    replicates: dict[str, np.ndarray] = {}
    if n_bootstrap > 0:
        replicates = bootstrap_replicates(
            table, distances or {}, per_model, n_bootstrap, seed, texts
        )
    bare = distances is None and per_model is None
    units = None if bare else resampling_units(table, distances or {}, per_model)
    intervals = bootstrap_intervals(table, found, replicates, confidence, units, texts)
    if bare:
        intervals["bootstrap_note"] = BARE_TABLE
    elif n_bootstrap <= 0:
        intervals["bootstrap_note"] = "analysis.robustness.resamples=0"
    parts.append(intervals)
    if group_sizes:
        parts.append(
            partial_mantel(
                table,
                distance_columns,
                performance_columns,
                group_sizes,
                relabellings=relabellings,
                seed=seed,
                exact_limit=exact_limit,
            )
        )
    for part in parts:
        out = out.merge(part, on=CORRELATION_KEYS, how="left")
    for column in ("partial_rho", "partial_p", "size_rho"):
        if column not in out:
            out[column] = np.nan
    return out
