"""The declared primary hypothesis: one correlation among the regions, one-sided, at alpha.

Positive with gaps (``gap_*``), negative with dependence (``dcor_*``); docs/method.md,
"Correlations, with a clear family"; its power: :mod:`regbias.analysis.power.primary`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from regbias.analysis.correlation.primary_checks import PrimaryChecks
from regbias.analysis.correlation.result import RHO, RHO_CI
from regbias.analysis.multiplicity import Adjustment
from regbias.analysis.pair_table import MIN_GROUPS
from regbias.analysis.permutations import (
    EXACT_LIMIT,
    PAIR_COLUMNS,
    Alternative,
    group_permutations,
    groups_in_order,
    pair_indices,
    permutation_p,
    rank_correlation_null,
)
from regbias.analysis.power.embedding import PrimaryPowerSettings
from regbias.analysis.power.primary import PrimaryPower, position_model_range, primary_power
from regbias.errors import ConfigError
from regbias.settings_reader import check_choices, check_draws

#: The ``analysis.correlation.primary_direction`` choices; ``auto`` takes the performance
#: column's prefix.
Direction = Literal["auto", "greater", "less", "two-sided"]
_EXPECTED: dict[str, Alternative] = {"gap_": "greater", "dcor_": "less"}


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
        primary_direction: the primary test's alternative (``auto``: :func:`expected_direction`).
    """

    relabellings: int
    exact_limit: int
    adjust: Adjustment
    primary: tuple[str, str] | None
    primary_direction: Direction

    def __post_init__(self) -> None:
        check_choices(self, "analysis.correlation")  # also made in Python
        check_draws("analysis.correlation", relabellings=self.relabellings)
        if self.primary is not None and len(self.primary) != 2:
            raise ConfigError(
                "analysis.correlation.primary names one distance and one performance column, "
                f"e.g. [dist_sinkhorn_long, gap_accuracy]; got {list(self.primary)}."
            )


def expected_direction(performance: str) -> Alternative:
    """The protocol's sign: ``greater`` for ``gap_*``, ``less`` for ``dcor_*``, else two-sided."""
    for prefix, direction in _EXPECTED.items():
        if performance.startswith(prefix):
            return direction
    return "two-sided"


def region_pairs(table: pd.DataFrame, reference_groups: Sequence[str]) -> pd.DataFrame:
    """The rows of a pair table involving none of ``reference_groups`` (two regions)."""
    involved = table["group_a"].isin(reference_groups) | table["group_b"].isin(reference_groups)
    return table[~involved]


@dataclass(frozen=True)
class PrimaryTest:
    """The primary hypothesis's test: Spearman's rho over the regions' pairs, Mantel p.

    Attributes:
        distance: the distance column.
        performance: the performance column.
        direction: the alternative tested (``greater``: rho > 0).
        significance: the level the test is held to, alone.
        left_out: the reference groups of the table, left out of the test.
        groups: the regions tested.
        n_pairs: the pairs with both values.
        rho: Spearman's rho over them.
        p_value: the one-sided (or two-sided) Mantel permutation p.
        exact: whether all ``K!`` relabellings were enumerated.
        null_size: the orderings of the null, the identity included (``K!`` when exact, else
            the random relabellings plus one).
        power: the test's power in a group model with as many groups; None when not computed.
        power_models: :func:`~regbias.analysis.power.primary.position_model_range`; None with
            ``power``.
        note: why the test did not run (then ``rho`` and ``p_value`` are NaN).
        ci_low: the lower end of rho's bootstrap interval over the same region pairs, for the
            measured rho (:mod:`regbias.analysis.robustness.bootstrap`; NaN: none);
            ``ci_high`` its upper end, ``confidence`` its level.
        ci_note: why there is no interval ("" where there is one, or none was asked for).
        checks: the test beyond the groups' noise and each region left out
            (:func:`regbias.analysis.robustness.primary.check_primary`; None: not checked).
    """

    distance: str
    performance: str
    direction: Alternative
    significance: float
    left_out: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    n_pairs: int = 0
    rho: float = math.nan
    p_value: float = math.nan
    exact: bool = False
    null_size: int = 0
    power: PrimaryPower | None = None
    power_models: pd.DataFrame | None = None
    note: str = ""
    ci_low: float = math.nan
    ci_high: float = math.nan
    confidence: float = math.nan
    ci_note: str = ""
    checks: PrimaryChecks | None = None

    @property
    def n_groups(self) -> int:
        """The regions tested."""
        return len(self.groups)

    @property
    def significant(self) -> bool:
        """Whether ``p_value < significance``."""
        return bool(math.isfinite(self.p_value) and self.p_value < self.significance)

    @property
    def fragile(self) -> str:
        """Why a supported primary does not survive its checks, one clause ("": it does)."""
        return "" if self.checks is None else self.checks.fragile(self.significant)

    def to_frame(self) -> pd.DataFrame:
        """One row (for ``analysis/primary.csv``): the test and its power summary."""
        detected = None if self.power is None else self.power.detected_rho
        reachable = np.nan if self.power is None else self.power.reachable_rho
        row = {
            "distance": self.distance,
            "performance": self.performance,
            "direction": self.direction,
            "n_groups": self.n_groups,
            "n_pairs": self.n_pairs,
            "groups": " ".join(self.groups),
            "left_out": " ".join(self.left_out),
            RHO: self.rho,
            RHO_CI[0]: self.ci_low,
            RHO_CI[1]: self.ci_high,
            "confidence": self.confidence,
            "p_value": self.p_value,
            "exact": self.exact,
            "null_size": self.null_size,
            "significance": self.significance,
            "significant": self.significant,
            "rho_at_80_power": np.nan if detected is None else detected,
            "reachable_rho": reachable,
            "note": self.note,
            **_checks_columns(self.checks),
            "fragile": self.fragile,
        }
        return pd.DataFrame([row])


def _checks_columns(checks: PrimaryChecks | None) -> dict[str, object]:
    """``primary.csv``'s columns of the check beyond noise and each region left out."""
    if checks is None:
        return {}
    noise = checks.noise
    row: dict[str, object] = {
        "noise_only_rho": noise.null_rho,
        "noise_only_p": noise.p_value,
        "noise_only_draws": noise.draws,
        "noise_only_note": noise.note,
    }
    for check in checks.without_each:
        row[f"rho_without_{check.left_out}"] = check.rho
        row[f"p_without_{check.left_out}"] = check.p_value
    return row


def primary_test(
    table: pd.DataFrame,
    distance: str,
    performance: str,
    *,
    reference_groups: Sequence[str],
    direction: Direction = "auto",
    significance: float = 0.05,
    relabellings: int = 9999,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
    power: PrimaryPowerSettings | None = None,
    power_noise: Mapping[str, float] | None = None,
) -> PrimaryTest:
    """Test the primary hypothesis on the regions' pairs, in its expected direction.

    ``reference_groups`` (the corpus's) are left out of ``table``; ``direction`` ``auto`` takes
    :func:`expected_direction`; ``relabellings`` random relabellings (seeded by ``seed``, as
    is the power simulation) when ``K!`` exceeds ``exact_limit``; ``power``: the power table's
    group model (:mod:`regbias.analysis.power.primary`; None or no simulations: none), with
    ``power_noise`` by group (None: noise-free). A ``note`` and NaN statistics where the columns
    are missing or fewer than 4 regions have both values.
    """
    alternative = expected_direction(performance) if direction == "auto" else direction
    present = set(groups_in_order(table))
    left_out = tuple(g for g in reference_groups if g in present)
    untested = PrimaryTest(distance, performance, alternative, significance, left_out)
    missing = [c for c in (distance, performance) if c not in table.columns]
    if missing:
        return replace(untested, note=f"not measured in this run (no column {', '.join(missing)})")
    data = region_pairs(table, reference_groups)[[*PAIR_COLUMNS, distance, performance]].dropna()
    names, index_a, index_b = pair_indices(data)
    groups = tuple(names)
    if len(groups) < MIN_GROUPS:
        note = f"not tested: {len(groups)} regions with both values, fewer than {MIN_GROUPS}"
        return replace(untested, groups=groups, n_pairs=len(data), note=note)
    perms = group_permutations(len(groups), relabellings, seed, exact_limit)
    x = data[distance].to_numpy(dtype=np.float64)
    y = data[[performance]].to_numpy(dtype=np.float64)
    null = rank_correlation_null(x, y, index_a, index_b, perms).spearman[:, 0]
    tested = replace(
        untested,
        groups=groups,
        n_pairs=len(data),
        rho=float(null[0]),
        p_value=permutation_p(null, alternative),
        exact=math.factorial(len(groups)) <= exact_limit,
        null_size=len(perms),
    )
    if power is None or power.simulations <= 0:
        return tested
    simulated = {
        "significance": significance,
        "direction": alternative,
        "couplings": power.couplings,
        "n_simulations": power.simulations,
        "relabellings": power.relabellings,
        "seed": seed,
        "noise": tuple(power_noise.get(g, 0.0) for g in groups) if power_noise else (),
    }
    return replace(
        tested,
        power=primary_power(len(groups), dimensions=power.dimensions, **simulated),  # type: ignore[arg-type]
        power_models=position_model_range(len(groups), **simulated),
    )
