"""What the performance test of record could detect: planted accuracy gaps at the tested sizes.

A plant cuts two disjoint pseudo-groups of the tested sizes out of one region's scored texts
and flips a share ``pi`` of the second's correctness, a planted gap of ``pi (2 acc - 1)``;
each plant is tested as a pair (docs/method.md, "Performance gaps", **Power**).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from regbias.analysis.pairs.pairwise import size_class
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.analysis.pairs.performance_null import StratifiedPair, relabel
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.power.embedding import PowerSettings, smallest_detected
from regbias.data.sampling import rng_for
from regbias.errors import SampleSizeError

#: The level of the Clopper-Pearson bound a power claim rests on.
_BOUND = 0.95


@dataclass(frozen=True)
class PerfPower:
    """Detection rates of the performance test per size class and planted gap.

    Attributes:
        source: the region cut into pseudo-groups (``accuracy``: its accuracy).
        relabellings: relabellings of each plant's test (``plants``: per gap and size class).
        rates: one row per size class and gap: ``n_a, n_b, m, gap, share, detected, power,
            power_low`` (``gap`` 0: the false-positive rate).
        note: why asked-for gaps were not planted ("" when all were).
    """

    source: str
    accuracy: float
    relabellings: int
    plants: int
    rates: pd.DataFrame
    note: str = ""

    def detectable(self) -> dict[tuple[int, int], float]:
        """Per size class, the smallest gap from which on every bound reaches the target (NaN)."""
        return {
            (int(n_a), int(n_b)): smallest_detected(part, "gap")
            for (n_a, n_b), part in self.rates.groupby(["n_a", "n_b"], sort=True)
        }

    def detectable_for(self, n_a: int, n_b: int) -> float:
        """The detectable gap of the size class of a pair of ``n_a`` and ``n_b`` texts."""
        key = (size_class(min(n_a, n_b)), size_class(max(n_a, n_b)))
        return self.detectable().get(key, math.nan)


def perf_classes(tests: PerformancePairTests) -> list[tuple[int, int, int]]:
    """``(n_small, n_large, m)`` of every testable pair's size class, ``m`` its largest family."""
    classes: dict[tuple[int, int], int] = {}
    for family in tests.table["family"].unique():
        rows = tests.family(str(family))
        for n_a, n_b in zip(rows["n_a"], rows["n_b"], strict=True):
            key = (size_class(min(n_a, n_b)), size_class(max(n_a, n_b)))
            classes[key] = max(classes.get(key, 0), len(rows))
    return [(a, b, m) for (a, b), m in sorted(classes.items())]


def perf_plant_power(
    texts: PerfTexts,
    source: str,
    classes: Sequence[tuple[int, int, int]],
    settings: PowerSettings,
    alpha: float,
) -> PerfPower:
    """The performance test on planted accuracy gaps at every size class (the module).

    ``source``: the region cut into pseudo-groups; ``classes``: ``(n_a, n_b, m)`` per size class
    (:func:`perf_classes`), a plant detected at ``p <= alpha / m``; the settings'
    ``performance_gaps`` are planted (0 is added: the false-positive rate).

    Raises:
        SampleSizeError: the source has too few texts for a class.
    """
    gaps, plants, relabellings = settings.performance_gaps, settings.plants, settings.relabellings
    rows = texts.group_side(source).positions
    scores = texts.scores()[:, :1]
    accuracy = float(scores[rows, 0].mean())
    leverage = 2 * accuracy - 1
    # Flipping every text moves accuracy by 2 acc - 1 at most: larger gaps cannot be planted.
    fitting = [g for g in gaps if g <= leverage]
    note = ""
    if len(fitting) < len(gaps):
        note = (
            f"{source}'s accuracy {accuracy:.3f} leaves room for planted gaps up to "
            f"{max(leverage, 0):.3f} only: {len(gaps) - len(fitting)} larger gaps not planted"
        )
    gaps = fitting
    out = []
    for n_a, n_b, m in classes:
        if n_a + n_b > len(rows):
            raise SampleSizeError(
                f"performance plants of {n_a} + {n_b} texts need {n_a + n_b} of {source}'s "
                f"texts; it has {len(rows)}: name a larger analysis.power.source"
            )
        for gap in (0.0, *gaps):
            rng = rng_for(settings.seed, "perf-power", n_a, n_b, f"{gap:g}")
            share = gap / leverage if gap > 0 else 0.0
            plan = _Plan((n_a, n_b), share, relabellings, alpha / m, plants)
            hits = _plants(scores, texts, rows, plan, rng) if plants else 0
            low = stats.binomtest(hits, plants).proportion_ci(_BOUND).low if plants else 0.0
            out.append((n_a, n_b, m, gap, share, hits, hits / plants, low))
    columns = ["n_a", "n_b", "m", "gap", "share", "detected", "power", "power_low"]
    rates = pd.DataFrame(out, columns=columns)
    return PerfPower(source, accuracy, relabellings, plants, rates, note)


@dataclass(frozen=True)
class _Plan:
    """One size class and gap: the pseudo-groups' sizes, the flipped share, the test."""

    sizes: tuple[int, int]
    share: float
    relabellings: int
    level: float
    plants: int


def _plants(
    scores: np.ndarray, texts: PerfTexts, rows: np.ndarray, plan: _Plan, rng: np.random.Generator
) -> int:
    """How many of the plan's plants the stratified test detects at its level."""
    (n_a, n_b), share, relabellings = plan.sizes, plan.share, plan.relabellings
    hits = 0
    for _ in range(plan.plants):
        chosen = rng.permutation(rows)[: n_a + n_b]
        planted = scores.copy()
        flipped = rng.choice(chosen[n_a:], round(share * n_b), replace=False)
        planted[flipped] = 1.0 - planted[flipped]
        pair = StratifiedPair.of(texts.side(chosen[:n_a]), texts.side(chosen[n_a:]))
        if not pair.common:
            continue
        hits += relabel(planted, pair, "accuracy", relabellings, rng).p() <= plan.level
    return hits
