"""The primary rho of two encoders compared: one joint bootstrap of both.

Each encoder's primary rho (the declared distance against the declared gap, over the region
pairs) has a bootstrap interval that resamples its models and its distance repetitions
(:func:`regbias.analysis.bootstrap.bootstrap_replicates`). Two encoders of one sweep were run
on the same seeds: model ``(seed, fold)`` was trained on the same texts in both, and
repetition ``r`` drew the same texts. So one replicate draws the same models and the same
repetitions for both encoders (the same generator, seed and shapes give the same draws), and
the difference of their rhos gets a percentile interval and a two-sided bootstrap p. Where
the encoders' models or repetitions differ, the two are resampled apart (``paired`` False).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.bootstrap import bootstrap_replicates
from regbias.analysis.encoder_contrast import bootstrap_p
from regbias.analysis.pairs import DISTANCE_PREFIX
from regbias.analysis.rank_stats import spearman_rows
from regbias.distances.matrix import DistanceMatrix

__all__ = ["PrimaryEvidence", "PrimaryRho", "primary_contrasts", "primary_rho"]


@dataclass(frozen=True)
class PrimaryEvidence:
    """What one encoder's primary rho is computed from.

    Attributes:
        pairs: the region pairs' rows of its pair table (``group_a, group_b`` and the two
            columns).
        distance: the distance column's matrix (its repetitions are resampled), or None.
        per_model: the long performance table (its models are resampled), or None.
    """

    pairs: pd.DataFrame
    distance: DistanceMatrix | None
    per_model: pd.DataFrame | None

    def shape(self) -> tuple[int, tuple[tuple[object, object], ...]]:
        """The repetitions and the models a replicate draws: equal ones are drawn alike."""
        reps = self.distance.repetitions if self.distance is not None else None
        r = len(reps) if reps is not None else 0
        models: tuple[tuple[object, object], ...] = ()
        if self.per_model is not None and len(self.per_model):
            keys = self.per_model[["seed", "fold"]].drop_duplicates().sort_values(["seed", "fold"])
            models = tuple(map(tuple, keys.to_numpy().tolist()))
        return r, models


@dataclass(frozen=True)
class PrimaryRho:
    """One encoder's primary rho and its ``(B,)`` bootstrap replicates."""

    rho: float
    replicates: np.ndarray


def primary_rho(
    evidence: PrimaryEvidence, correlation: tuple[str, str], n_bootstrap: int, seed: int
) -> PrimaryRho:
    """The rho of ``correlation`` over ``evidence.pairs`` and its replicates (seeded)."""
    distance, performance = correlation
    table = evidence.pairs.reset_index(drop=True)
    kept = table[[distance, performance]].notna().all(axis=1).to_numpy()
    matrices = {}
    if evidence.distance is not None:
        matrices[distance.removeprefix(DISTANCE_PREFIX)] = evidence.distance
    replicates = bootstrap_replicates(table, matrices, evidence.per_model, n_bootstrap, seed)
    columns = []
    for column in (distance, performance):
        if column in replicates:
            columns.append(replicates[column][:, kept])
        else:
            columns.append(np.repeat(table[column].to_numpy(float)[kept][None, :], n_bootstrap, 0))
    observed = table.loc[kept, [distance, performance]].to_numpy(float)
    if kept.sum() < 3:
        return PrimaryRho(math.nan, np.full(n_bootstrap, np.nan))
    rho = float(spearman_rows(observed[None, :, 0], observed[None, :, 1])[0])
    return PrimaryRho(rho, spearman_rows(columns[0], columns[1]))


def primary_contrasts(
    evidence: Mapping[str, PrimaryEvidence],
    correlation: tuple[str, str],
    *,
    n_bootstrap: int,
    confidence: float,
    seed: int,
    order: Sequence[tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """Per encoder its rho and interval, and per pair of encoders the rhos' difference.

    Args:
        evidence: each encoder's evidence, by label.
        correlation: ``(distance, performance)``, the primary hypothesis.
        n_bootstrap: replicates B.
        confidence: the intervals' level.
        seed: the bootstrap's seed (the analysis's: each encoder's own interval is the one
            its report shows).
        order: the encoder pairs to compare (None: every pair in the labels' order).

    Returns:
        One row per encoder pair: ``first, second, rho_first, rho_second`` with their
        intervals (``..._ci_low``, ``..._ci_high``), ``difference`` (first minus second),
        ``ci_low, ci_high, p`` (two-sided bootstrap) and ``paired`` (whether both were
        resampled alike).
    """
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    rhos = {k: primary_rho(v, correlation, n_bootstrap, seed) for k, v in evidence.items()}
    rows = []
    for first, second in order or list(itertools.combinations(evidence, 2)):
        a, b = rhos[first], rhos[second]
        paired = evidence[first].shape() == evidence[second].shape()
        if not paired:  # resampled apart: the second one's draws from another seed
            b = primary_rho(evidence[second], correlation, n_bootstrap, seed + 1)
        difference = a.replicates - b.replicates
        row: dict[str, object] = {"first": first, "second": second}
        for name, item in (("first", a), ("second", b)):
            row[f"rho_{name}"] = item.rho
            low, high = _quantiles(item.replicates, tails)
            row[f"rho_{name}_ci_low"], row[f"rho_{name}_ci_high"] = low, high
        row["difference"] = a.rho - b.rho
        row["ci_low"], row["ci_high"] = _quantiles(difference, tails)
        finite = np.isfinite(difference).any()
        row["p"] = float(bootstrap_p(difference[:, None])[0]) if finite else math.nan
        row["paired"] = paired
        rows.append(row)
    return pd.DataFrame(rows)


def _quantiles(values: np.ndarray, tails: list[float]) -> tuple[float, float]:
    if not np.isfinite(values).any():
        return math.nan, math.nan
    low, high = np.nanquantile(values, tails)
    return float(low), float(high)
