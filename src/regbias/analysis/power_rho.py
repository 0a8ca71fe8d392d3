"""How strong a correlation can the primary test detect with K groups? Power at planted rho.

With six regions the primary test has 15 pairs and 720 relabellings: a null result says little
unless the test could have detected the correlation the study cares about. This module plants
a Spearman rho between a distance matrix and a performance matrix of K groups and counts how
often the same one-sided Mantel test rejects at the level.

The model, one simulated study at a time: K group positions drawn in the plane give the
distance matrix (Euclidean distances, so the pairs share their groups as real ones do); the
performance of pair e is ``w q_e + sqrt(1 - w^2) noise_e`` with ``q_e`` the normal score of the
rank of distance e (standardised) and independent standard normal noise. The sample Spearman
rho of such a study depends only on w and the number of pairs m, so w is calibrated once per m
(a seeded grid of w, its mean rho interpolated) to make the studies' mean rho the planted one;
the table reports that achieved mean too. At ``rho = 0`` the performance is noise exchangeable
over the pairs, so the rejection rate is the test's size (at most the level: the test is
exact).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as scipy_stats

from regbias.analysis.pair_power import TARGET_POWER
from regbias.analysis.permutations import Alternative, permutation_p_values, relabelled_pairs
from regbias.interrupt import check_stop

__all__ = ["DEFAULT_RHOS", "PrimaryPower", "primary_power"]

#: Planted rhos of the power table (their sign follows the test's direction).
DEFAULT_RHOS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
_SIMULATION_CHUNK = 64
# The weight calibration: grid points, noise draws per point, and its own fixed seed (it is
# a property of the model, not of a run).
_CALIBRATION_GRID = 51
_CALIBRATION_DRAWS = 1000
_CALIBRATION_SEED = 20240617


@dataclass(frozen=True)
class PrimaryPower:
    """The power of the primary test at planted correlations.

    Attributes:
        n_groups: the groups K of each simulated study (all ``K(K-1)/2`` pairs present).
        direction: the test's alternative.
        significance: the level; a simulated test rejects when ``p < significance``.
        n_simulations: simulated studies per planted rho.
        n_permutations: relabellings of each simulated test, the identity included.
        exact: whether they are all ``K!`` (else seeded random ones).
        table: one row per planted rho: ``planted_rho`` (signed as the alternative expects),
            ``achieved_rho`` (the mean Spearman rho of the simulated studies), ``power`` and
            its binomial standard error ``power_se``.
    """

    n_groups: int
    direction: Alternative
    significance: float
    n_simulations: int
    n_permutations: int
    exact: bool
    table: pd.DataFrame

    @property
    def n_pairs(self) -> int:
        """Pairs of each simulated study."""
        return self.n_groups * (self.n_groups - 1) // 2

    @property
    def detected_rho(self) -> float | None:
        """The smallest planted ``|rho|`` with power at least :data:`TARGET_POWER`.

        Signed as ``planted_rho``; None when no planted rho reaches that power.
        """
        reached = self.table[self.table["power"] >= TARGET_POWER]
        if not len(reached):
            return None
        return float(reached.loc[reached["planted_rho"].abs().idxmin(), "planted_rho"])


def primary_power(
    n_groups: int,
    *,
    significance: float = 0.05,
    direction: Alternative = "greater",
    rhos: Sequence[float] = DEFAULT_RHOS,
    n_simulations: int = 400,
    n_permutations: int = 999,
    seed: int = 0,
) -> PrimaryPower:
    """Power of the Mantel test of Spearman's rho over the pairs of ``n_groups`` groups.

    Args:
        n_groups: the groups K (the regions of the primary test).
        significance: the level.
        direction: ``greater`` plants positive rhos, ``less`` negative ones, ``two-sided``
            positive ones tested two-sided.
        rhos: the planted ``|rho|`` values, each in [0, 1].
        n_simulations: simulated studies per planted rho.
        n_permutations: random relabellings per simulated test; all ``K!`` when ``K!`` is at
            most ``n_permutations + 1`` (6 groups: the 720 of the real test).
        seed: the seed; each planted rho draws its own stream, so a rho's power does not
            depend on the other rhos asked for.

    Returns:
        The power table (cached: the same arguments give the same numbers at no cost).

    Raises:
        ValueError: fewer than 3 groups, a rho outside [0, 1], or no simulations.
    """
    if n_groups < 3 or n_simulations < 1 or not all(0 <= abs(r) <= 1 for r in rhos):
        raise ValueError(
            f"primary_power needs at least 3 groups, 1 simulation and rhos in [0, 1]; got "
            f"{n_groups}, {n_simulations} and {list(rhos)}."
        )
    rhos = tuple(float(abs(r)) for r in rhos)
    rows = _simulate(n_groups, significance, direction, rhos, n_simulations, n_permutations, seed)
    sign = -1.0 if direction == "less" else 1.0
    table = pd.DataFrame(rows, columns=["planted_rho", "achieved_rho", "power"])
    table["planted_rho"] *= sign
    table["power_se"] = np.sqrt(table["power"] * (1 - table["power"]) / n_simulations)
    exact = math.factorial(n_groups) <= n_permutations + 1
    n_null = math.factorial(n_groups) if exact else n_permutations + 1
    return PrimaryPower(n_groups, direction, significance, n_simulations, n_null, exact, table)


@lru_cache(maxsize=16)
def _simulate(
    k: int,
    significance: float,
    direction: Alternative,
    rhos: tuple[float, ...],
    n_simulations: int,
    n_permutations: int,
    seed: int,
) -> tuple[tuple[float, float, float], ...]:
    a, b = np.triu_indices(k, 1)
    moved = relabelled_pairs(
        tuple(a.tolist()), tuple(b.tolist()), n_permutations, seed, n_permutations + 1,
        inverse=False,
    )  # fmt: skip
    sign = -1.0 if direction == "less" else 1.0
    rows = []
    for rho in rhos:
        check_stop()  # a safe point between planted correlations
        rng = np.random.default_rng([seed, round(rho * 1_000_000)])
        rank_x, rank_y = _planted_study(rng, k, a, b, n_simulations, sign * rho)
        observed = (rank_x * rank_y).sum(axis=1)
        p = np.concatenate(
            [
                permutation_p_values(_null(rank_x[s], rank_y[s], moved).T, direction)
                for s in _chunks(n_simulations)
            ]
        )
        rows.append((rho, float(observed.mean()), float((p < significance).mean())))
    return tuple(rows)


def _planted_study(
    rng: np.random.Generator, k: int, a: np.ndarray, b: np.ndarray, n: int, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length centred ranks ``(n, m)`` of simulated distances and performances."""
    points = rng.normal(size=(n, k, 2))
    distance = np.linalg.norm(points[:, a] - points[:, b], axis=2)
    m = distance.shape[1]
    order = scipy_stats.rankdata(distance, axis=1, method="ordinal").astype(np.int64) - 1
    scores = _scores(m)[order]
    weight = _weight_for(rho, m)
    noise = rng.normal(size=distance.shape)
    performance = weight * scores + math.sqrt(max(0.0, 1 - weight**2)) * noise
    return _unit_rows(distance), _unit_rows(performance)


@lru_cache(maxsize=8)
def _calibration(m: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean sample Spearman rho over m pairs at a grid of weights w (increasing in w)."""
    weights = np.linspace(0.0, 1.0, _CALIBRATION_GRID)
    scores = _scores(m)
    noise = np.random.default_rng(_CALIBRATION_SEED).normal(size=(_CALIBRATION_DRAWS, m))
    mixed = weights[:, None, None] * scores + np.sqrt(1 - weights**2)[:, None, None] * noise
    rank_q = _unit_rows(scores[None, :])[0]
    rho = (_unit_rows(mixed.reshape(-1, m)) @ rank_q).reshape(len(weights), -1).mean(axis=1)
    return weights, np.maximum.accumulate(rho)


def _weight_for(rho: float, m: int) -> float:
    """The weight w whose studies over m pairs have mean Spearman rho ``rho`` (``|rho| <= 1``)."""
    weights, means = _calibration(m)
    return math.copysign(float(np.interp(abs(rho), means, weights)), rho)


def _scores(m: int) -> np.ndarray:
    """Standardised normal scores of the ranks 1..m."""
    scores = special.ndtri(np.arange(1, m + 1) / (m + 1))
    return scores / scores.std()


def _unit_rows(values: np.ndarray) -> np.ndarray:
    """Centred ranks of each row scaled to unit length: row dot products are Spearman's rho."""
    centred = scipy_stats.rankdata(values, axis=1)
    centred -= centred.mean(axis=1, keepdims=True)
    return centred / np.sqrt((centred**2).sum(axis=1, keepdims=True))


def _null(rank_x: np.ndarray, rank_y: np.ndarray, moved: np.ndarray) -> np.ndarray:
    """``(n, n_perm)`` rho of each simulated study under every relabelling of its distances."""
    return np.einsum("spe,se->sp", rank_x[:, moved], rank_y)


def _chunks(n: int) -> list[slice]:
    return [slice(start, start + _SIMULATION_CHUNK) for start in range(0, n, _SIMULATION_CHUNK)]
