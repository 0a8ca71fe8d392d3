"""The test of record per pair: one permutation test on all distinct texts of both groups.

A relabelling splits the pooled sentence vectors at random into sides of the groups' sizes
(the statistics and their null: :mod:`regbias.analysis.tests.embedding_null`); docs/method.md,
"Which pairs differ: the test of record", has the caps and the texts both groups hold.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from regbias.analysis.tests.effect import pair_effect
from regbias.analysis.tests.embedding_null import (
    PairStatistic,
    pair_statistic_null,
    permutation_p,
    pooled_form,
)
from regbias.analysis.tests.pairwise import (
    DIFFERS,
    FAMILY,
    P_ADJUSTED,
    PRIMARY_FAMILY,
    SECONDARY_FAMILY,
    P,
    PairwiseTests,
    PairwiseWords,
    holm_per_family,
)
from regbias.data.sampling import rng_for
from regbias.errors import ConfigError
from regbias.settings_reader import HANDED_DOWN, check_choices, check_draws

_WORDS = {
    "energy": "energy distance",
    "mmd": "MMD (Gaussian kernel, median width)",
    "mean": "squared mean difference",
}


@dataclass(frozen=True)
class PairTestSettings:
    """``analysis.tests.embedding``: the test of record of every pair of groups.

    Attributes:
        enabled: run it (at the end of a sweep, or in a single run).
        statistic: ``energy``, ``mmd`` or ``mean`` (see the module).
        relabellings: relabellings per pair (the smallest p is ``1 / (1 + relabellings)``).
        cap: the most texts a group brings (None: all its distinct texts).
        quadratic_cap: the most texts a group brings to ``energy`` and ``mmd`` (quadratic in
            the texts; the smaller cap applies); ``mean`` ignores it.
        resamples: bootstrap resamples of each pair's effect (its interval; 0: none).
        seed: ``analysis.seed``, handed down (no key of this group): seed of the subsamples
            and the relabellings.
        pairs_at_once: pairs tested side by side (None: one a core; 1: one at a time); the
            numbers do not depend on it (each matrix product runs alone: ``BLAS_LOCK``).
    """

    enabled: bool
    statistic: PairStatistic
    relabellings: int
    cap: int | None
    quadratic_cap: int | None
    resamples: int
    seed: int = field(metadata=HANDED_DOWN)
    pairs_at_once: int | None = 1  # the YAML says null (one a core)

    def __post_init__(self) -> None:
        check_choices(self, "analysis.tests.embedding")
        draws = {"relabellings": self.relabellings, "resamples": self.resamples}
        check_draws("analysis.tests.embedding", **draws)
        caps = [c for c in (self.cap, self.quadratic_cap) if c is not None]
        if self.pairs_at_once is not None and self.pairs_at_once < 1:
            raise ConfigError(
                "analysis.tests.embedding.pairs_at_once must be >= 1 (or null: one a core); "
                f"got {self.pairs_at_once}"
            )
        if self.relabellings < 1 or any(c < 2 for c in caps):
            raise ConfigError(
                "analysis.tests.embedding.relabellings must be >= 1 and its cap and "
                f"quadratic_cap >= 2 (or null); got {self.relabellings}, {self.cap} and "
                f"{self.quadratic_cap}"
            )

    @property
    def group_cap(self) -> int | None:
        """The most texts a group brings to this statistic (None: all)."""
        caps = [self.cap] + ([self.quadratic_cap] if self.statistic != "mean" else [])
        given = [c for c in caps if c is not None]
        return min(given) if given else None

    def words(self) -> str:
        """The statistic in words, for the report."""
        return _WORDS[self.statistic]


#: What the test of record could have detected, where its power plants did not run.
_NOT_MEASURED = (
    "What the test of record could have detected is not measured in this run: "
    "`regbias task=power` (or `analysis.power.enabled=true`) plants graded mixtures at these "
    "sizes and reports it."
)


@dataclass(frozen=True)
class PairTests(PairwiseTests):
    """The tests of record of every pair, with their families' adjusted verdicts.

    Attributes:
        settings: what was run (``alpha``: the level).
        table: one row per pair (:class:`~regbias.analysis.tests.pairwise.PairwiseTests`), its own
            columns ``statistic``, ``z`` (in standard deviations of its null), ``effect`` with
            ``effect_ci_low``/``effect_ci_high`` (:mod:`regbias.analysis.tests.effect`, at
            ``1 - alpha``), ``detectable_share`` (NaN until power is measured) and
            ``untestable`` (why a pair has no p, "" where it is tested).
        group_sizes: distinct texts per group before the cap.
        section_columns: the columns of the report's table of the test, in order
            (``detectable_share`` follows them where power is measured).
        estimate_format: a differing pair's estimate in the findings, formatted with its row.
    """

    settings: PairTestSettings
    alpha: float
    table: pd.DataFrame
    group_sizes: dict[str, int] = field(default_factory=dict)

    words: ClassVar[PairwiseWords] = PairwiseWords(
        title="Test of record",
        differ="differ",
        claim="{found} of {n} {pairs} differ",
        verdictless="no verdict",
        setting="analysis.tests.embedding.relabellings",
        not_measured=_NOT_MEASURED,
        metric="pair_test",
        headline="differing_pairs/",
    )
    reason: ClassVar[str] = "untestable"
    pairwise_columns: ClassVar[tuple[str, ...]] = (
        *(FAMILY, "effect", "effect_ci_low", "effect_ci_high", "z", P, P_ADJUSTED, DIFFERS),
        "detectable_share",
    )
    metric_columns: ClassVar[tuple[str, ...]] = ("z", "effect", P_ADJUSTED)
    section_columns: ClassVar[tuple[str, ...]] = (
        *(FAMILY, "n_a", "n_b", "shared", "effect", "effect_ci_low", "effect_ci_high", "z"),
        *(P, P_ADJUSTED, DIFFERS),
    )
    estimate_format: ClassVar[str] = (
        "effect {effect:.3g} [{effect_ci_low:.3g}, {effect_ci_high:.3g}]"
    )
    settings_defaults: ClassVar[Mapping[str, object]] = {
        "quadratic_cap": None,
        "resamples": 0,
        "pairs_at_once": None,
    }
    renamed_settings: ClassVar[Mapping[str, str]] = {"effect_resamples": "resamples"}

    def method(self) -> str:
        """The statistic, the texts, the relabellings and the adjustment, in words."""
        s = self.settings
        return (
            f"{s.words()} of sentence vectors, all distinct texts"
            + (f" (at most {s.group_cap} a group), " if s.group_cap is not None else ", ")
            + f"{s.relabellings} relabellings, Holm per family p <= {self.alpha:g}"
        )

    def estimate(self, row: pd.Series) -> str:
        """``effect 0.0099 [0.009, 0.011]``: :attr:`estimate_format` of the pair's row."""
        return self.estimate_format.format(**row.to_dict())

    def power_measured(self) -> bool:
        """Whether any pair has a smallest detectable share (the power plants ran)."""
        return bool(np.isfinite(self.table["detectable_share"].astype(float)).any())

    def detectable(self, row: pd.Series, name: Callable[[str], str] = str) -> str:
        """The smallest mixture of the donor's texts detected with 80% power at these sizes."""
        share = float(row["detectable_share"])
        donor = name(row.get("power_donor", "") or "donor")
        if math.isfinite(share):
            return (
                f"at these sizes the test would detect a mixture of >= {share:.0%} of "
                f"{donor}-like texts with 80% power"
            )
        if self.power_measured():
            return (
                f"at these sizes no planted mixture of {donor}-like texts is detected with 80% "
                "power"
            )
        return ""

    def with_power(self, detectable: Mapping[tuple[int, int], float], donor: str = "") -> PairTests:
        """A copy whose ``detectable_share`` holds the smallest share detected with power.

        ``detectable``: that share by size class (:func:`size_classes`; NaN: none); ``donor``:
        the group whose texts were mixed in (``power_donor``, for the words).
        """
        table = self.table.copy()
        table["power_donor"] = donor
        table["detectable_share"] = [
            detectable.get((size_class(min(a, b)), size_class(max(a, b))), math.nan)
            for a, b in zip(table["n_a"], table["n_b"], strict=True)
        ]
        return replace(self, table=table)


def size_class(n: int) -> int:
    """``n`` rounded down to two significant digits (1,840 -> 1,800): power is planted there."""
    if n < 100:
        return int(n)
    step = 10 ** (len(str(int(n))) - 2)
    return int(n) // step * step


def size_classes(plans: Sequence[PlannedPair]) -> list[tuple[int, int, int]]:
    """``(n_small, n_large, m)`` of every testable pair's size class, ``m`` its largest family."""
    families = Counter(plan.family for plan in plans)
    classes: dict[tuple[int, int], int] = {}
    for plan in plans:
        if not plan.testable:
            continue
        n_a, n_b = len(plan.side_a), len(plan.side_b)
        key = (size_class(min(n_a, n_b)), size_class(max(n_a, n_b)))
        classes[key] = max(classes.get(key, 0), families[plan.family])
    return [(a, b, m) for (a, b), m in sorted(classes.items())]


def pair_family(a: str, b: str, references: Sequence[str]) -> str:
    """``regions`` for a pair of two regions, ``reference`` where either is a reference group."""
    return SECONDARY_FAMILY if a in references or b in references else PRIMARY_FAMILY


def cap_groups(
    groups: Mapping[str, Sequence[str]], cap: int | None, seed: int
) -> dict[str, list[str]]:
    """Each group's distinct texts, one larger than ``cap`` subsampled by its name and ``seed``."""
    return {
        name: _capped(list(dict.fromkeys(texts)), cap, seed, name) for name, texts in groups.items()
    }


def _capped(
    distinct: list[str], cap: int | None, seed: int, name: str, drop: frozenset[str] = frozenset()
) -> list[str]:
    """The first ``cap`` of the group's seeded order that are not in ``drop``, in text order."""
    if cap is None or len(distinct) - len(drop) <= cap:
        return [t for t in distinct if t not in drop]
    order = rng_for(seed, "pair-test-cap", name).permutation(len(distinct))
    keep = np.sort([i for i in order if distinct[i] not in drop][:cap])
    return [distinct[i] for i in keep]


def _z(observed: float, null: np.ndarray) -> float:
    sd = float(np.std(null))
    return (observed - float(np.mean(null))) / sd if sd > 0 else math.nan


@dataclass(frozen=True)
class PlannedPair:
    """One pair as its test sees it: the texts of each side, none held by both."""

    group_a: str
    group_b: str
    family: str
    side_a: list[str]
    side_b: list[str]
    shared: int

    def row(self) -> dict[str, object]:
        """The pair's first columns of :attr:`PairTests.table`."""
        return {
            "group_a": self.group_a,
            "group_b": self.group_b,
            "family": self.family,
            "n_a": len(self.side_a),
            "n_b": len(self.side_b),
            "shared": self.shared,
        }

    @property
    def testable(self) -> bool:
        """Whether each side has at least two texts."""
        return min(len(self.side_a), len(self.side_b)) >= 2

    @property
    def untestable(self) -> str:
        """Why the pair is not tested, in words ("" where it is)."""
        if self.testable:
            return ""
        sides = f"{len(self.side_a)} and {len(self.side_b)} texts"
        if self.shared:
            sides += f" once the {self.shared} both hold are left out"
        return f"fewer than 2 texts a side ({sides})"


def plan_pairs(
    groups: Mapping[str, Sequence[str]], settings: PairTestSettings, references: Sequence[str]
) -> list[PlannedPair]:
    """Every pair of ``groups`` in order, with the texts both groups hold left out.

    Asked of the whole groups, before any cap: against a region, a reference group loses every
    text of the region and is capped after that; in a pair of two regions (or two references)
    a text both hold leaves both sides. ``shared`` counts the texts so removed.
    """
    distinct = {name: list(dict.fromkeys(texts)) for name, texts in groups.items()}
    cap = settings.group_cap
    capped = cap_groups(distinct, cap, settings.seed)
    names = list(capped)
    plans = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = frozenset(distinct[a]) & frozenset(distinct[b])
            side_a, side_b = capped[a], capped[b]
            if (a in references) != (b in references):
                if a in references:
                    side_a = _capped(distinct[a], cap, settings.seed, a, shared)
                else:
                    side_b = _capped(distinct[b], cap, settings.seed, b, shared)
                removed = len(shared)
            else:
                removed = len(shared & frozenset([*side_a, *side_b]))
                side_a = [t for t in side_a if t not in shared]
                side_b = [t for t in side_b if t not in shared]
            plans.append(PlannedPair(a, b, pair_family(a, b, references), side_a, side_b, removed))
    return plans


def record_tests(
    groups: Mapping[str, Sequence[str]],
    vectors: Callable[[list[str]], np.ndarray],
    settings: PairTestSettings,
    *,
    references: Sequence[str] = (),
    alpha: float = 0.05,
    progress: Callable[[str], None] | None = None,
) -> PairTests:
    """The test of record of every pair of ``groups``, Holm-adjusted within each family.

    ``groups``: every group's texts (duplicates count once); ``vectors``: ``(n, d)`` sentence
    vectors of texts, in order; ``references``: their pairs form the secondary family;
    ``progress``: called with each pair's name once it is tested.
    """
    plans = plan_pairs(groups, settings, references)
    texts = list(dict.fromkeys(t for plan in plans for t in (*plan.side_a, *plan.side_b)))
    every = np.asarray(vectors(texts))
    where = {t: i for i, t in enumerate(texts)}
    rows = []
    for plan, found in zip(plans, _tested(plans, every, where, settings, alpha), strict=True):
        rows.append({**plan.row(), **found})
        if progress is not None:
            progress(f"{plan.group_a}-{plan.group_b}")
    testable = pd.Series([plan.testable for plan in plans], dtype=bool)
    table = holm_per_family(pd.DataFrame(rows), alpha, testable)
    table["detectable_share"] = np.nan
    table["untestable"] = [plan.untestable for plan in plans]
    sizes = {g: len(dict.fromkeys(ts)) for g, ts in groups.items()}
    return PairTests(settings, alpha, table, sizes)


def _tested(
    plans: Sequence[PlannedPair],
    every: np.ndarray,
    where: Mapping[str, int],
    settings: PairTestSettings,
    alpha: float,
) -> Iterator[dict[str, float]]:
    """Each plan's test, in order, one pair at a time or side by side (``pairs_at_once``)."""
    workers = settings.pairs_at_once or _cores()
    if workers == 1:
        for plan in plans:
            yield _test(plan, every, where, settings, 1 - alpha)
        return
    # Pairs side by side: their draws, partitions and bootstrap counts (one thread each; NumPy
    # releases the GIL) run in parallel, each BLAS product alone (BLAS_LOCK), so the numbers are
    # those of one pair at a time. Each pair has its own random streams.
    with ThreadPoolExecutor(workers) as pool:
        tested = [pool.submit(_test, plan, every, where, settings, 1 - alpha) for plan in plans]
        try:
            for result in tested:
                yield result.result()
        except BaseException:  # a stop or a failure: the pairs not started are not run
            pool.shutdown(cancel_futures=True)
            raise


def _cores() -> int:
    """The cores this process may use."""
    if hasattr(os, "sched_getaffinity"):  # Linux
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _test(
    plan: PlannedPair,
    every: np.ndarray,
    where: Mapping[str, int],
    settings: PairTestSettings,
    confidence: float,
) -> dict[str, float]:
    if not plan.testable:
        keys = ("statistic", "z", "effect", "effect_ci_low", "effect_ci_high", "p")
        return dict.fromkeys(keys, math.nan)
    rows = [where[t] for t in plan.side_a] + [where[t] for t in plan.side_b]
    form = pooled_form(every[rows], settings.statistic)
    rng = rng_for(settings.seed, "pair-test", plan.group_a, plan.group_b)
    observed, null = pair_statistic_null(form, len(plan.side_a), settings.relabellings, rng)
    n_a = len(plan.side_a)
    effect, low, high = pair_effect(
        every[rows[:n_a]],
        every[rows[n_a:]],
        settings.statistic,
        resamples=settings.resamples,
        confidence=confidence,
        rng=rng_for(settings.seed, "pair-effect", plan.group_a, plan.group_b),
    )
    return {
        "statistic": observed,
        "z": _z(observed, null),
        "effect": effect,
        "effect_ci_low": low,
        "effect_ci_high": high,
        "p": permutation_p(observed, null),
    }
