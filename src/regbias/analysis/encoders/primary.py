"""The primary rho of two encoders compared: one joint bootstrap of both.

Each rho has its own report's interval (:mod:`regbias.analysis.robustness.bootstrap`); one
replicate draws the same models, repetitions and texts for both, so their difference gets an
interval moved to centre on the measured difference (:func:`centred`) and its two-sided p, the
interval's own test (docs/method.md, "Comparing encoders on the same texts"). Where the
evidence differs, the two are resampled apart (``paired`` False).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from regbias.analysis.encoders.separation import bootstrap_p
from regbias.analysis.pair_table import DISTANCE_PREFIX
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.robustness.bootstrap import (
    RhoReplicates,
    centred,
    centred_interval,
    rho_replicates,
    table_groups,
)
from regbias.distances.matrix import DistanceMatrix


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


def primary_rho(
    evidence: PrimaryEvidence, correlation: tuple[str, str], n_bootstrap: int, seed: int
) -> RhoReplicates:
    """The rho of ``correlation`` over ``evidence.pairs`` and its replicates (seeded).

    As in the encoder's own report, no interval (NaN replicates, the reason their note) where
    the rho is undefined or too little was measured to resample.
    """
    table = evidence.pairs.reset_index(drop=True)
    matrices = {}
    if evidence.distance is not None:
        matrices[correlation[0].removeprefix(DISTANCE_PREFIX)] = evidence.distance
    return rho_replicates(
        table,
        correlation,
        table_groups(table),
        matrices,
        evidence.per_model,
        n_bootstrap=n_bootstrap,
        seed=seed,
        texts=evidence.texts,
    )


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

    ``correlation``: the primary hypothesis; ``seed``: the analysis's, so each encoder's interval
    is its report's; ``order``: the encoder pairs to compare (None: every pair, labels' order).

    Returns:
        One row per encoder pair: ``first, second``, per encoder ``rho_<x>``,
        ``rho_<x>_ci_low``, ``rho_<x>_ci_high``, ``difference`` (first minus second) with
        ``ci_low, ci_high, p`` (NaN where a rho has no interval), ``note`` (why a rho has none)
        and ``paired`` (whether both were resampled alike).
    """
    rhos = {k: primary_rho(v, correlation, n_bootstrap, seed) for k, v in evidence.items()}
    rows = []
    for first, second in order or list(itertools.combinations(evidence, 2)):
        a, b = rhos[first], rhos[second]
        paired = evidence[first].shape() == evidence[second].shape()
        apart = b  # resampled apart: the second one's draws from another seed
        if not paired:
            apart = primary_rho(evidence[second], correlation, n_bootstrap, seed + 1)
        difference = a.values - apart.values
        row: dict[str, object] = {"first": first, "second": second}
        for name, item in (("first", a), ("second", b)):
            row[f"rho_{name}"] = item.estimate
            row[f"rho_{name}_ci_low"], row[f"rho_{name}_ci_high"] = item.interval(confidence)
        row["difference"] = measured = a.estimate - b.estimate
        row["ci_low"], row["ci_high"], row["p"] = math.nan, math.nan, math.nan
        if not (a.note or apart.note):
            row["ci_low"], row["ci_high"] = centred_interval(difference, measured, confidence, 2.0)
            row["p"] = float(bootstrap_p(centred(difference, measured)[:, None])[0])
        row["note"] = "; ".join(
            f"{label}: {item.note}" for label, item in ((first, a), (second, b)) if item.note
        )
        row["paired"] = paired
        rows.append(row)
    return pd.DataFrame(rows)
