"""What the test of record could detect: graded mixtures planted at the study's own sizes.

docs/method.md, "What the test could detect": per size class two pseudo-groups from one
*source* group, a share ``pi`` of side ``b`` replaced by texts of a *donor* (the same draw at
every share of one plant), the test of record run on each plant, detected at ``p <= alpha /
m``; "80% power" only where the 95% Clopper-Pearson lower bound reaches it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.pairs.embedding_null import (
    PairStatistic,
    pair_statistic_null,
    permutation_p,
    pooled_form,
)
from regbias.console import progress_bar
from regbias.data.sampling import rng_for
from regbias.errors import ConfigError, SampleSizeError
from regbias.settings_reader import HANDED_DOWN, check_draws

#: The columns of :attr:`PowerResult.plants`.
_PLANT_COLUMNS = ["n_a", "n_b", "family_pairs", "share", "plant", "planted_a", "planted_b", "p"]
#: The power a planted effect must reach (by its Clopper-Pearson lower bound) to count as
#: detected: the share a verdict quotes, and the rho the primary test's power table names.
TARGET_POWER = 0.8


@dataclass(frozen=True)
class PrimaryPowerSettings:
    """``analysis.power.primary``: the primary test's power (:mod:`regbias.analysis.power.primary`).

    Attributes:
        couplings: couplings c in [0, 1] of the group scores to the group positions.
        dimensions: the dimensions of the model's group positions.
        simulations: simulated studies per coupling (0 = no power table).
        relabellings: relabellings per simulated test (all ``K!`` when fewer).
    """

    couplings: list[float]
    dimensions: int
    simulations: int
    relabellings: int

    def __post_init__(self) -> None:
        check_draws("analysis.power.primary", relabellings=self.relabellings)
        if not all(0 <= c <= 1 for c in self.couplings):
            raise ConfigError(
                "analysis.power.primary.couplings are couplings in [0, 1]; got "
                f"{list(self.couplings)}."
            )
        if self.dimensions < 1:
            raise ConfigError(
                "analysis.power.primary.dimensions must be >= 1 (the dimensions of the power "
                f"model's group positions); got {self.dimensions}."
            )
        if self.simulations < 0 or self.relabellings < 1:
            raise ConfigError(
                "analysis.power.primary.simulations must be >= 0 (0 = off) and "
                "analysis.power.primary.relabellings >= 1; got "
                f"{self.simulations} and {self.relabellings}."
            )


@dataclass(frozen=True)
class PowerSettings:
    """``analysis.power``: planted mixtures that measure what the test of record detects.

    Attributes:
        enabled: run the plants at the end of a sweep (``task=power`` runs them anyway).
        shares: the mixture shares planted (0 is always added: the false-positive rate).
        plants: plants per share and size class.
        relabellings: relabellings of each plant's test.
        source: the group cut into two pseudo-groups (None: the largest region).
        donor: the group mixed in (None: the largest other region).
        refine_step: where the detectable share falls between two planted shares, plant
            the shares between them on a grid of this step too (null: no refinement).
        performance_gaps: the accuracy gaps planted for the performance test (0 is added).
        primary: the primary test's power (its own group model, not planted mixtures).
        seed: ``analysis.seed``, handed down (no key of this group): seed of the plants.
    """

    enabled: bool
    shares: list[float]
    plants: int
    relabellings: int
    source: str | None
    donor: str | None
    refine_step: float | None
    performance_gaps: list[float]
    primary: PrimaryPowerSettings
    seed: int = field(metadata=HANDED_DOWN)

    def __post_init__(self) -> None:
        check_draws("analysis.power", relabellings=self.relabellings)
        if self.plants < 1 or self.relabellings < 1:
            raise ConfigError(
                "analysis.power.plants and analysis.power.relabellings must be >= 1, not "
                f"{self.plants} and {self.relabellings}"
            )
        if any(not 0 < g < 1 for g in self.performance_gaps):
            raise ConfigError(
                "analysis.power.performance_gaps are accuracy gaps in (0, 1), e.g. [0.02, 0.05]; "
                f"got {self.performance_gaps}"
            )
        if not self.shares or any(not 0 < s <= 1 for s in self.shares):
            raise ConfigError(
                "analysis.power.shares must be shares in (0, 1], e.g. [0.1, 0.4]; got "
                f"{self.shares}"
            )


@dataclass(frozen=True)
class PowerResult:
    """Detection rates of the test of record per size class and planted share.

    Attributes:
        plants: one row per plant: ``n_a, n_b, family_pairs, share, plant, planted_a,
            planted_b, p`` (``planted_*``: the sizes planted, below the class's where the
            source or the donor cannot give it).
        alpha: the level (``statistic``: the test's; ``relabellings``: per plant).
        source: the group cut into pseudo-groups; ``donor``: the group mixed in.
    """

    plants: pd.DataFrame
    alpha: float
    statistic: str
    relabellings: int
    source: str
    donor: str

    @property
    def plants_per_share(self) -> int:
        """The fewest plants behind one size class and share (0: none)."""
        rates = self.rates()
        return int(rates["plants"].min()) if len(rates) else 0

    @property
    def resolvable(self) -> bool:
        """Whether each plant's smallest p can reach its level ``alpha / m``."""
        m = int(self.plants["family_pairs"].max()) if len(self.plants) else 1
        return 1.0 / (1 + self.relabellings) <= self.alpha / m

    def rates(self) -> pd.DataFrame:
        """Per size class and share: ``plants``, ``power`` (p <= alpha / m), its 95% interval.

        Columns: ``n_a, n_b, share, plants, power, power_low, power_high, power_unadjusted``.
        """
        rows = []
        keys = ["n_a", "n_b", "family_pairs", "share"]
        for (n_a, n_b, m, share), part in self.plants.groupby(keys, sort=True):
            p = part["p"].to_numpy(dtype=np.float64)
            hits = int(np.sum(p <= self.alpha / m))
            low, high = scipy_stats.binomtest(hits, len(p)).proportion_ci(0.95)
            found = (hits / len(p), float(low), float(high), float(np.mean(p <= self.alpha)))
            rows.append((int(n_a), int(n_b), float(share), len(p), *found))
        columns = ["n_a", "n_b", "share", "plants", "power", "power_low", "power_high"]
        return pd.DataFrame(rows, columns=[*columns, "power_unadjusted"])

    def detectable(self) -> dict[tuple[int, int], float]:
        """Per size class ``(n_a, n_b)``: the smallest share detected, every larger one too.

        Detected: the power's lower bound reaches :data:`TARGET_POWER`. NaN where the largest
        planted share does not (or the plants could not resolve the level).
        """
        return {
            (int(n_a), int(n_b)): smallest_detected(part, "share") if self.resolvable else math.nan
            for (n_a, n_b), part in self.rates().groupby(["n_a", "n_b"], sort=True)
        }

    def sentence(self, n_a: int, n_b: int) -> str:
        """What the test detects at one size class, in words for a verdict."""
        if not self.resolvable:
            return (
                "no power statement possible: with "
                f"{self.relabellings} relabellings a plant's smallest p is "
                f"{1 / (1 + self.relabellings):.2g}, above its level (raise "
                "analysis.power.relabellings)"
            )
        if self.plants_per_share < fewest_plants():
            return (
                f"no power statement possible: with {self.plants_per_share} plant(s) a share "
                f"the {TARGET_POWER:.0%} power bound needs at least {fewest_plants()} even "
                "if every plant is detected (raise analysis.power.plants)"
            )
        share = self.detectable().get((n_a, n_b), math.nan)
        if math.isfinite(share):
            return (
                f"would detect a mixture of >= {share:.0%} of {self.donor}-like texts with "
                f"{TARGET_POWER:.0%} power"
            )
        top = max(self.plants["share"]) if len(self.plants) else 0
        return (
            f"would detect no planted mixture of {self.donor}-like texts up to {top:.0%} "
            f"with {TARGET_POWER:.0%} power"
        )


def smallest_detected(rates: pd.DataFrame, planted: str) -> float:
    """The smallest ``planted`` effect (> 0) of a size class detected, every larger one too.

    Detected: its power bound (``power_low`` of ``rates``) reaches :data:`TARGET_POWER`; NaN
    where the largest planted effect is not.
    """
    part = rates[rates[planted] > 0].sort_values(planted)
    failing = np.flatnonzero(~(part["power_low"] >= TARGET_POWER).to_numpy())
    first = int(failing[-1]) + 1 if len(failing) else 0
    return float(part[planted].iloc[first]) if first < len(part) else math.nan


def fewest_plants() -> int:
    """The fewest plants whose 95% Clopper-Pearson lower bound can reach :data:`TARGET_POWER`."""
    n = 1
    while scipy_stats.binomtest(n, n).proportion_ci(0.95).low < TARGET_POWER:
        n += 1
    return n


def _plant_sides(
    n_source: int, n_donor: int, n_a: int, n_b: int, seed: int, plant: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Indices of one plant: side ``a``, side ``b`` (source), donor texts, replacement order."""
    rng = rng_for(seed, "plant", n_a, n_b, plant)
    order = rng.permutation(n_source)
    return (
        order[:n_a],
        order[n_a : n_a + n_b],
        rng.permutation(n_donor)[:n_b],
        rng.permutation(n_b),
    )


def _between(shares: Sequence[float], found: float, step: float) -> list[float]:
    """The ``step`` grid strictly between the planted share below ``found`` and ``found``."""
    if not math.isfinite(found):
        return []
    below = max([s for s in shares if s < found - 1e-9], default=0.0)
    count = round((found - below) / step)
    return [round(below + step * i, 10) for i in range(1, count) if below + step * i < found - 1e-9]


@dataclass(frozen=True)
class _Plants:
    """The plants of one size class: the same draws at every share a plant is given."""

    source: np.ndarray
    donor: np.ndarray
    size: tuple[int, int, int]
    planted: tuple[int, int]
    settings: PowerSettings
    statistic: PairStatistic

    def rows(self, shares: Sequence[float], tick: Callable[[], object]) -> list[dict[str, float]]:
        """One row per plant and share: its test's p."""
        n_a, n_b, m = self.size
        planted_a, planted_b = self.planted
        out = []
        for plant in range(self.settings.plants):
            a, b, mixed_in, replaced = _plant_sides(
                len(self.source), len(self.donor), planted_a, planted_b, self.settings.seed, plant
            )
            for share in shares:
                k = round(share * planted_b)
                side_b = self.source[b].copy()
                side_b[replaced[:k]] = self.donor[mixed_in[:k]]
                matrix = pooled_form(np.vstack([self.source[a], side_b]), self.statistic)
                rng = rng_for(self.settings.seed, "plant-test", n_a, n_b, plant, f"{share:g}")
                relabellings = self.settings.relabellings
                observed, null = pair_statistic_null(matrix, planted_a, relabellings, rng)
                p = permutation_p(observed, null)
                values = (n_a, n_b, m, k / planted_b, plant, planted_a, planted_b, p)
                out.append(dict(zip(_PLANT_COLUMNS, values, strict=True)))
                tick()
        return out


def plant_power(
    source: np.ndarray,
    donor: np.ndarray,
    classes: Sequence[tuple[int, int, int]],
    settings: PowerSettings,
    *,
    statistic: PairStatistic,
    alpha: float,
    names: tuple[str, str] = ("source", "donor"),
    progress: bool = True,
) -> PowerResult:
    """The test of record on every plant of every size class.

    ``source``, ``donor``: sentence vectors of the groups' distinct texts, ``names`` their names;
    ``classes``: ``(n_a, n_b, m)`` per size class, the level ``alpha / m``. A class larger than
    the source or the donor can give is planted at the largest sizes that fit, in the same ratio
    (``planted_a``, ``planted_b``: a lower bound of its power).

    Raises:
        SampleSizeError: the source cannot give two pseudo-groups of two texts at some class.
    """
    shares = [0.0, *settings.shares]
    rows = []
    fitted = {}
    for n_a, n_b, _ in classes:
        scale = min(1.0, len(source) / (n_a + n_b), len(donor) / n_b)
        fitted[(n_a, n_b)] = (int(n_a * scale), int(n_b * scale))
        if min(fitted[(n_a, n_b)]) < 2:
            raise SampleSizeError(
                f"power plants of {n_a} + {n_b} texts need source and donor texts; "
                f"{names[0]} has {len(source)}, {names[1]} {len(donor)}: name larger "
                "groups in analysis.power.source and analysis.power.donor"
            )

    def result(found: list[dict[str, float]]) -> PowerResult:
        frame = pd.DataFrame(found, columns=_PLANT_COLUMNS)
        return PowerResult(frame, alpha, statistic, settings.relabellings, *names)

    total = len(classes) * settings.plants * len(shares)
    with progress_bar(total=total, desc="power plants", disable=not progress) as bar:
        for n_a, n_b, m in classes:
            run = _Plants(source, donor, (n_a, n_b, m), fitted[(n_a, n_b)], settings, statistic)
            done = run.rows(shares, bar.update)
            if settings.refine_step is not None:
                found = result(done).detectable()[(n_a, n_b)]
                finer = _between(shares, found, settings.refine_step)
                done += run.rows(finer, lambda: None)
            rows += done
    return result(rows)
