"""How strong a correlation can the primary test detect with K groups? A group model's power.

Simulated studies with the primary test's structure, tested by the same Mantel test: each
group g has a standard normal position ``x_g`` in ``dimensions`` dimensions (a pair's distance
is the Euclidean distance of its positions) and a score ``s_g = c x_g1 + sqrt(1 - c^2) e_g``
(coupling c); a pair's performance is its gap ``|s_a - s_b|`` (negated when the test expects
``rho < 0``). With ``noise`` (per group, its measured metric's standard error over the true
metrics' spread) each score gets that much independent noise, ``s~_g = s_g + r_g e'_g``, before
its gaps are taken. At ``c = 0`` the rejection rate is the test's size; the mean rho at
``c = 1`` is the most the model can reach (below 1 with more than one dimension).

The relabellings are one matrix product: the null rho of study s under relabelling p is
``sum_f,e x_sf y_se [moved_pe = f]``, against one indicator matrix per relabelling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.permutations import (
    Alternative,
    permutation_p_values,
    relabelled_pairs,
)
from regbias.analysis.power.embedding import TARGET_POWER
from regbias.analysis.ranks import unit_ranks
from regbias.interrupt import check_stop

#: Couplings c of the power table (1 is always simulated: it gives the reachable rho).
DEFAULT_COUPLINGS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0)
#: The position models whose range the primary power states beside its own model:
#: ``(name, dimensions, spread of the coordinates beyond the first)``.
POSITION_MODELS = (
    ("1-D", 1, 1.0),
    ("isotropic 2-D", 2, 1.0),
    ("anisotropic 2-D (second axis sd 0.3)", 2, 0.3),
)
#: The level of the Clopper-Pearson interval around each simulated power.
POWER_CONFIDENCE = 0.95
#: A group's noise ratio (standard error over the regions' true spread) standing for "the
#: regions' values spread no more than their noise": no true spread is measured beyond it.
NO_SIGNAL = 1e3
_SIMULATION_CHUNK = 1024
# The largest relabelling indicator (entries) built for the matrix product; beyond it (many
# groups) each chunk gathers its relabelled distances instead.
_INDICATOR_LIMIT = 1 << 24


@dataclass(frozen=True)
class PrimaryPower:
    """The power of the primary test in a group model, per coupling of scores to positions.

    Attributes:
        n_groups: the groups K of each simulated study (all ``K(K-1)/2`` pairs present).
        direction: the test's alternative; it rejects when ``p < significance``.
        n_simulations: simulated studies per coupling.
        null_size: the orderings of each simulated test's null, the identity included
            (``exact``: all ``K!``).
        dimensions: the dimensions of the groups' positions.
        noise: per group, the gaps' measured evaluation noise (empty: none).
        table: one row per coupling: ``coupling``, ``mean_rho`` (the simulated studies' mean
            Spearman rho, signed as the alternative expects), ``power`` and its 95%
            Clopper-Pearson interval ``power_low``, ``power_high``.
    """

    n_groups: int
    direction: Alternative
    significance: float
    n_simulations: int
    null_size: int
    exact: bool
    dimensions: int
    table: pd.DataFrame
    noise: tuple[float, ...] = ()

    @property
    def reachable_rho(self) -> float:
        """The mean rho at the strongest coupling (c = 1): the most this model can realise."""
        return float(self.table.loc[self.table["coupling"].idxmax(), "mean_rho"])

    @property
    def detected_rho(self) -> float | None:
        """The smallest mean rho whose power bound reaches :data:`TARGET_POWER` (None: none)."""
        row = self._first(self.table["power_low"] >= TARGET_POWER)
        return None if row is None else float(row["mean_rho"])

    @property
    def nearest_row(self) -> pd.Series | None:
        """The weakest coupling reaching the target by its estimate only (None: shown, or none)."""
        if self.detected_rho is not None:
            return None
        return self._first(self.table["power"] >= TARGET_POWER)

    @property
    def strongest_row(self) -> pd.Series:
        """The row of the strongest coupling."""
        return self.table.loc[self.table["coupling"].idxmax()]

    def _first(self, mask: pd.Series) -> pd.Series | None:
        reached = self.table[mask & (self.table["coupling"] > 0)]
        if not len(reached):
            return None
        return reached.loc[reached["mean_rho"].abs().idxmin()]


def primary_power(
    n_groups: int,
    *,
    significance: float = 0.05,
    direction: Alternative = "greater",
    couplings: Sequence[float] = DEFAULT_COUPLINGS,
    dimensions: int = 2,
    n_simulations: int = 1000,
    relabellings: int = 999,
    seed: int = 0,
    spread: float = 1.0,
    noise: Sequence[float] = (),
) -> PrimaryPower:
    """Power of the Mantel test of Spearman's rho over the pairs of ``n_groups`` groups.

    ``direction``: ``greater`` plants gaps (rho > 0), ``less`` negated gaps (rho < 0),
    ``two-sided`` gaps tested two-sided; ``couplings`` in [0, 1] (1 is added: the reachable
    rho), each drawing its own stream of ``seed``; ``relabellings`` random relabellings per
    simulated test (all ``K!`` when at most ``relabellings + 1``); ``spread``: the sd of the
    positions' coordinates beyond the first; ``noise``: per group (the module; empty: none).

    Raises:
        ValueError: fewer than 3 groups, a coupling outside [0, 1], no dimension or no
            simulations.
    """
    if (
        n_groups < 3
        or n_simulations < 1
        or dimensions < 1
        or not all(0 <= c <= 1 for c in couplings)
    ):
        raise ValueError(
            "primary_power needs at least 3 groups, 1 simulation, 1 dimension and couplings "
            f"in [0, 1]; got {n_groups}, {n_simulations}, {dimensions} and {list(couplings)}."
        )
    if noise and len(noise) != n_groups:
        raise ValueError(f"noise needs one ratio per group ({n_groups}), got {len(noise)}")
    grid = tuple(sorted({float(c) for c in couplings} | {1.0}))
    ratios = tuple(float(r) for r in noise) if any(noise) else ()
    rows = _simulate(
        n_groups,
        significance,
        direction,
        grid,
        dimensions,
        n_simulations,
        relabellings,
        seed,
        spread,
        ratios,
    )
    table = pd.DataFrame(rows, columns=["coupling", "mean_rho", "hits"])
    intervals = [
        scipy_stats.binomtest(int(hits), n_simulations).proportion_ci(POWER_CONFIDENCE)
        for hits in table["hits"]
    ]
    table["power"] = table.pop("hits") / n_simulations
    table["power_low"] = [interval.low for interval in intervals]
    table["power_high"] = [interval.high for interval in intervals]
    exact = math.factorial(n_groups) <= relabellings + 1
    n_null = math.factorial(n_groups) if exact else relabellings + 1
    return PrimaryPower(
        n_groups, direction, significance, n_simulations, n_null, exact, dimensions, table, ratios
    )


@lru_cache(maxsize=16)
def _simulate(
    k: int,
    significance: float,
    direction: Alternative,
    couplings: tuple[float, ...],
    dimensions: int,
    n_simulations: int,
    relabellings: int,
    seed: int,
    spread: float,
    noise: tuple[float, ...] = (),
) -> tuple[tuple[float, float, int], ...]:
    a, b = np.triu_indices(k, 1)
    moved = relabelled_pairs(
        tuple(a.tolist()), tuple(b.tolist()), relabellings, seed, relabellings + 1,
        inverse=False,
    )  # fmt: skip
    indicator = _relabelling_indicator(moved) if moved.size * a.size <= _INDICATOR_LIMIT else None
    sign = -1.0 if direction == "less" else 1.0
    rows = []
    for coupling in couplings:
        check_stop()  # a safe point between couplings
        rng = np.random.default_rng([seed, round(coupling * 1_000_000)])
        shape = (dimensions, spread)
        rank_x, rank_y = _group_study(rng, k, shape, a, b, n_simulations, coupling, noise)
        rank_y *= sign
        p = np.concatenate(
            [
                permutation_p_values(_null(rank_x[s], rank_y[s], moved, indicator).T, direction)
                for s in _chunks(n_simulations)
            ]
        )
        mean_rho = float((rank_x * rank_y).sum(axis=1).mean())
        rows.append((coupling, mean_rho, int((p < significance).sum())))
    return tuple(rows)


def _group_study(
    rng: np.random.Generator,
    k: int,
    shape: tuple[int, float],
    a: np.ndarray,
    b: np.ndarray,
    n: int,
    coupling: float,
    measured: tuple[float, ...] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length centred ranks ``(n, m)`` of simulated distances and (measured) gaps."""
    dimensions, spread = shape
    positions = rng.normal(size=(n, k, dimensions))
    positions[:, :, 1:] *= spread
    distance = np.linalg.norm(positions[:, a] - positions[:, b], axis=2)
    noise = rng.normal(size=(n, k))
    scores = coupling * positions[:, :, 0] + math.sqrt(max(0.0, 1 - coupling**2)) * noise
    if measured:
        scores = scores + np.asarray(measured)[None, :] * rng.normal(size=(n, k))
    gap = np.abs(scores[:, a] - scores[:, b])
    return unit_ranks(distance, axis=1), unit_ranks(gap, axis=1)


def _relabelling_indicator(moved: np.ndarray) -> np.ndarray:
    """``(m * m, n_perm)``: entry ``(f * m + e, p)`` is 1 where relabelling p moves f onto e."""
    n_perm, m = moved.shape
    indicator = np.zeros((m * m, n_perm))
    rows = moved * m + np.arange(m)[None, :]
    indicator[rows.ravel(), np.repeat(np.arange(n_perm), m)] = 1.0
    return indicator


def _null(
    rank_x: np.ndarray, rank_y: np.ndarray, moved: np.ndarray, indicator: np.ndarray | None
) -> np.ndarray:
    """``(n, n_perm)`` rho of each simulated study under every relabelling of its distances."""
    if indicator is None:
        return np.stack([rank_x[i, moved] @ rank_y[i] for i in range(len(rank_x))])
    outer = (rank_x[:, :, None] * rank_y[:, None, :]).reshape(len(rank_x), -1)
    return outer @ indicator


def _chunks(n: int) -> list[slice]:
    return [slice(start, start + _SIMULATION_CHUNK) for start in range(0, n, _SIMULATION_CHUNK)]


def position_model_range(n_groups: int, **simulated: Any) -> pd.DataFrame:
    """The reachable rho, its power and the rho detected under each of :data:`POSITION_MODELS`.

    ``simulated``: :func:`primary_power`'s keyword arguments but ``dimensions`` and ``spread``.
    One row per model: ``model``, ``reachable_rho`` (the mean rho at coupling 1), ``power``
    there, ``power_low``, and ``detected_rho`` (NaN: none).
    """
    rows = []
    for name, dimensions, spread in POSITION_MODELS:
        power = primary_power(n_groups, dimensions=dimensions, spread=spread, **simulated)
        row = power.strongest_row
        detected = math.nan if power.detected_rho is None else power.detected_rho
        rows.append((name, row["mean_rho"], row["power"], row["power_low"], detected))
    columns = ["model", "reachable_rho", "power", "power_low", "detected_rho"]
    return pd.DataFrame(rows, columns=columns).astype({c: float for c in columns[1:]})
