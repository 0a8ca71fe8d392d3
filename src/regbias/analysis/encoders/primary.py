"""The primary rho of two encoders compared: one joint bootstrap of both.

Each encoder's rho has the interval of its own report
(:func:`regbias.analysis.robustness.bootstrap.rho_replicates`). Two encoders of one sweep ran on
the same seeds, so one replicate draws the same models, repetitions, texts and noise rows for
both, and their difference gets an interval and a two-sided bootstrap p from the replicates'
differences (docs/method.md, "Comparing encoders on the same texts"). Where the evidence
differs, the two are resampled apart (``paired`` False).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.encoders.separation import bootstrap_p
from regbias.analysis.pair_table import DISTANCE_PREFIX
from regbias.analysis.ranks import spearman_rows
from regbias.analysis.robustness.attenuation import TAIL_SCALE, tail_interval
from regbias.analysis.robustness.bootstrap import (
    NOISE_CORRECTED,
    RhoReplicates,
    no_interval_note,
    resampling_units,
    rho_replicates,
    table_groups,
)
from regbias.analysis.tests.text_scores import PerfTexts, percentile_interval
from regbias.distances.matrix import DistanceMatrix

__all__ = ["NO_INTERVAL", "PrimaryEvidence", "PrimaryRho", "primary_contrasts", "primary_rho"]

#: The interval kind of a rho that has none (undefined, or too little measured to resample).
NO_INTERVAL = "none"


@dataclass(frozen=True)
class PrimaryEvidence:
    """One encoder's region pairs (``group_a, group_b`` and the two columns) and what they rest on.

    ``distance``'s repetitions, ``per_model``'s models and ``texts`` are resampled (None: none).
    """

    pairs: pd.DataFrame
    distance: DistanceMatrix | None
    per_model: pd.DataFrame | None
    texts: PerfTexts | None = None

    def shape(self) -> tuple[object, ...]:
        """The repetitions, models and texts a replicate draws: equal ones are drawn alike."""
        reps = self.distance.repetitions if self.distance is not None else None
        r = len(reps) if reps is not None else 0
        models: tuple[tuple[object, object], ...] = ()
        if self.per_model is not None and len(self.per_model):
            keys = self.per_model[["seed", "fold"]].drop_duplicates().sort_values(["seed", "fold"])
            models = tuple(map(tuple, keys.to_numpy().tolist()))
        texts: tuple[object, ...] = ()
        if self.texts is not None:
            members = sorted((g, tuple(self.texts.keys[m])) for g, m in self.texts.members.items())
            texts = (len(self.texts.models), hash(tuple(members)))
        return r, models, texts


@dataclass(frozen=True)
class PrimaryRho:
    """One encoder's primary rho and its bootstrap replicates (:class:`RhoReplicates`)."""

    rho: float
    replicates: RhoReplicates


def primary_rho(
    evidence: PrimaryEvidence, correlation: tuple[str, str], n_bootstrap: int, seed: int
) -> PrimaryRho:
    """The rho of ``correlation`` over ``evidence.pairs`` and its replicates (seeded).

    As in the encoder's own report, no interval (NaN replicates, the reason their note) where
    the rho is undefined or too little was measured to resample.
    """
    distance, performance = correlation
    table = evidence.pairs.reset_index(drop=True)
    matrices = {}
    if evidence.distance is not None:
        matrices[distance.removeprefix(DISTANCE_PREFIX)] = evidence.distance
    observed = table[[distance, performance]].dropna().to_numpy(float)
    rho = math.nan
    if len(observed) >= 3:
        rho = float(spearman_rows(observed[None, :, 0], observed[None, :, 1])[0])
    note = no_interval_note(correlation, resampling_units(table, matrices, evidence.per_model))
    if not math.isfinite(rho) or note:
        empty = np.full(n_bootstrap, np.nan)
        return PrimaryRho(rho, RhoReplicates(empty, NO_INTERVAL, note or "the rho is undefined"))
    replicates = rho_replicates(
        table,
        correlation,
        table_groups(table),
        matrices,
        evidence.per_model,
        n_bootstrap=n_bootstrap,
        seed=seed,
        texts=evidence.texts,
    )
    return PrimaryRho(rho, replicates)


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
        seed: the bootstrap's seed (the analysis's, so each encoder's interval is its report's).
        order: the encoder pairs to compare (None: every pair in the labels' order).

    Returns:
        One row per encoder pair: ``first, second``, per encoder ``rho_<x>``,
        ``rho_<x>_ci_low``, ``rho_<x>_ci_high`` and ``method_<x>``, ``difference`` (first
        minus second) with ``ci_low, ci_high, p`` (NaN where a rho has no interval), ``note``
        (why a rho has none) and ``paired`` (whether both were resampled alike).
    """
    rhos = {k: primary_rho(v, correlation, n_bootstrap, seed) for k, v in evidence.items()}
    rows = []
    for first, second in order or list(itertools.combinations(evidence, 2)):
        a, b = rhos[first], rhos[second]
        paired = evidence[first].shape() == evidence[second].shape()
        apart = b  # resampled apart: the second one's draws from another seed
        if not paired:
            apart = primary_rho(evidence[second], correlation, n_bootstrap, seed + 1)
        difference = a.replicates.values - apart.replicates.values
        row: dict[str, object] = {"first": first, "second": second}
        for name, item in (("first", a), ("second", b)):
            row[f"rho_{name}"] = item.rho
            low, high = item.replicates.interval(confidence)
            row[f"rho_{name}_ci_low"], row[f"rho_{name}_ci_high"] = low, high
            row[f"method_{name}"] = item.replicates.method
        row["difference"] = a.rho - b.rho
        corrected = a.replicates.method == b.replicates.method == NOISE_CORRECTED
        row["ci_low"], row["ci_high"], row["p"] = math.nan, math.nan, math.nan
        if not (a.replicates.note or apart.replicates.note):
            row["ci_low"], row["ci_high"] = _difference_interval(difference, confidence, corrected)
            row["p"] = _difference_p(difference, corrected)
        row["note"] = "; ".join(
            f"{label}: {item.replicates.note}"
            for label, item in ((first, a), (second, b))
            if item.replicates.note
        )
        row["paired"] = paired
        rows.append(row)
    return pd.DataFrame(rows)


def _difference_interval(
    difference: np.ndarray, confidence: float, corrected: bool
) -> tuple[float, float]:
    """The differences' percentile range; the calibrated tails where both rhos are corrected."""
    if corrected:
        return tail_interval(difference, confidence)
    return percentile_interval(difference, confidence)


def _difference_p(difference: np.ndarray, corrected: bool) -> float:
    """The two-sided bootstrap p, scaled as the tails are where both rhos are corrected.

    So p falls below 1 - confidence where the interval leaves 0 out (up to the +1s of the
    bootstrap p's counts).
    """
    if not np.isfinite(difference).any():
        return math.nan
    p = float(bootstrap_p(difference[:, None])[0])
    return min(1.0, p / TAIL_SCALE) if corrected else p
