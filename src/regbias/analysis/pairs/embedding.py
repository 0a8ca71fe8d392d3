"""The test of record per pair: one permutation test on all distinct texts of both groups.

A relabelling splits the pooled sentence vectors at random into sides of the groups' sizes
(the statistics and their null: :mod:`regbias.analysis.pairs.embedding_null`); docs/method.md,
"Which pairs differ: the test of record", has the caps and the texts both groups hold.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from regbias.analysis.pairs.columns import RELABELLED, PairColumn, computed
from regbias.analysis.pairs.effect import pair_effect
from regbias.analysis.pairs.embedding_null import (
    PairStatistic,
    pooled_form,
    sequential_pair_null,
)
from regbias.analysis.pairs.pairwise import (
    UNTESTABLE,
    PairwiseTests,
    PairwiseWords,
    PlannedPair,
    holm_per_family,
    plan_pairs,
    size_class,
)
from regbias.analysis.pairs.sequential import check_stop_after, clear_point, stopping_words
from regbias.data.sampling import rng_for
from regbias.errors import ConfigError
from regbias.settings_reader import HANDED_DOWN, check_choices, check_draws

_WORDS = {
    "energy": "energy distance",
    "mmd": "MMD (Gaussian kernel, median width)",
    "mean": "squared mean difference",
}


@dataclass(frozen=True)
class EmbeddingTestSettings:
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
        stop_after: a pair's relabellings stop at this many as extreme as observed (its p is
            then sequential: :mod:`regbias.analysis.pairs.sequential`); None: all of them.
        stop_when_clear: a pair with none as extreme in its first ``N`` relabellings stops
            there, its p ``1 / (N + 1)`` at most a third of Holm's smallest threshold
            (:func:`~regbias.analysis.pairs.sequential.clear_point`).
    """

    enabled: bool
    statistic: PairStatistic
    relabellings: int
    cap: int | None
    quadratic_cap: int | None
    resamples: int
    seed: int = field(metadata=HANDED_DOWN)
    pairs_at_once: int | None = 1  # the YAML says null (one a core)
    stop_after: int | None = None
    stop_when_clear: bool = False

    def __post_init__(self) -> None:
        check_choices(self, "analysis.tests.embedding")
        check_stop_after("analysis.tests.embedding", self.stop_after)
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

    def plans(
        self, groups: Mapping[str, Sequence[str]], references: Sequence[str]
    ) -> list[PlannedPair]:
        """Every pair of ``groups`` as this test sees it (:func:`plan_pairs` at its cap)."""
        return plan_pairs(groups, references, cap=self.group_cap, seed=self.seed)

    def words(self) -> str:
        """The statistic in words, for the report."""
        return _WORDS[self.statistic]


#: The column of the effect interval's Monte Carlo sd (the larger of its two ends').
EFFECT_MC = "effect_ci_mc"
#: What the test of record could have detected, where its power plants did not run.
_NOT_MEASURED = (
    "What the test of record could have detected is not measured in this run: "
    "`regbias task=power` (or `analysis.power.enabled=true`) plants graded mixtures at these "
    "sizes and reports it."
)


@dataclass(frozen=True)
class EmbeddingPairTests(PairwiseTests):
    """The tests of record of every pair, with their families' adjusted verdicts.

    Attributes:
        settings: what was run (``alpha``: the level).
        table: one row per pair (:class:`~regbias.analysis.pairs.pairwise.PairwiseTests`), its own
            columns (:attr:`columns`): ``effect`` with ``effect_ci_low``/``effect_ci_high``
            (:mod:`regbias.analysis.pairs.effect`, at ``1 - alpha``) and their Monte Carlo sd
            ``effect_ci_mc``, ``z`` (in standard
            deviations of its null), ``statistic`` and ``detectable_share`` (NaN until power is
            measured).
        group_sizes: distinct texts per group before the cap.
    """

    settings: EmbeddingTestSettings
    alpha: float
    table: pd.DataFrame
    group_sizes: dict[str, int] = field(default_factory=dict)

    words: ClassVar[PairwiseWords] = PairwiseWords(
        title="Test of record",
        differ="differ",
        setting="analysis.tests.embedding.relabellings",
        not_measured=_NOT_MEASURED,
        metric="pair_test",
        headline="differing_pairs/",
    )
    columns: ClassVar[tuple[PairColumn, ...]] = (
        PairColumn(
            "effect",
            pairwise=True,
            logged=True,
            shown="effect",
            estimate="effect {effect:.3g} [{effect_ci_low}, {effect_ci_high}]",
        ),
        PairColumn("effect_ci_low", pairwise=True, shown="effect_ci_low", mc_sd=EFFECT_MC),
        PairColumn("effect_ci_high", pairwise=True, shown="effect_ci_high", mc_sd=EFFECT_MC),
        PairColumn(EFFECT_MC, pairwise=True),
        PairColumn("z", pairwise=True, logged=True, shown="z"),
        PairColumn("statistic"),
        PairColumn("detectable_share", pairwise=True, shown="detectable_share", optional=True),
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
            + f"{s.relabellings} relabellings{stopping_words(s.stop_after, self.clear_after)}, "
            f"Holm per family p <= {self.alpha:g}"
        )

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

    def with_power(
        self, detectable: Mapping[tuple[int, int], float], donor: str = ""
    ) -> EmbeddingPairTests:
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


def _z(observed: float, null: np.ndarray) -> float:
    sd = float(np.std(null))
    return (observed - float(np.mean(null))) / sd if sd > 0 else math.nan


def embedding_pair_tests(
    groups: Mapping[str, Sequence[str]],
    vectors: Callable[[list[str]], np.ndarray],
    settings: EmbeddingTestSettings,
    *,
    references: Sequence[str] = (),
    alpha: float = 0.05,
    progress: Callable[[str], None] | None = None,
    kind: type[EmbeddingPairTests] = EmbeddingPairTests,
) -> EmbeddingPairTests:
    """The test of record of every pair of ``groups``, Holm-adjusted within each family.

    ``groups``: every group's texts (duplicates count once); ``vectors``: ``(n, d)`` sentence
    vectors of texts, in order; ``references``: their pairs form the secondary family;
    ``progress``: called with each pair's name once it is tested; ``kind``: the class whose
    declared columns are computed (its ``compute`` functions, of the sides' vectors).
    """
    plans = settings.plans(groups, references)
    tested = [plan.family for plan in plans if plan.testable]
    clear = clear_point(tested, alpha, settings.relabellings) if settings.stop_when_clear else None
    texts = list(dict.fromkeys(t for plan in plans for t in (*plan.side_a, *plan.side_b)))
    every = np.asarray(vectors(texts))
    where = {t: i for i, t in enumerate(texts)}
    rows = []
    for plan, found in zip(
        plans, _tested(plans, every, where, settings, alpha, clear), strict=True
    ):
        own = computed(kind.columns, _sides(plan, every, where) if plan.testable else None)
        rows.append({**plan.row(), **found, **own})
        if progress is not None:
            progress(f"{plan.group_a}-{plan.group_b}")
    testable = pd.Series([plan.testable for plan in plans], dtype=bool)
    table = holm_per_family(pd.DataFrame(rows), alpha, testable)
    table[UNTESTABLE] = [plan.untestable for plan in plans]
    sizes = {g: len(dict.fromkeys(ts)) for g, ts in groups.items()}
    return kind(settings, alpha, table, sizes)


def _tested(
    plans: Sequence[PlannedPair],
    every: np.ndarray,
    where: Mapping[str, int],
    settings: EmbeddingTestSettings,
    alpha: float,
    clear: int | None,
) -> Iterator[dict[str, float]]:
    """Each plan's test, in order, one pair at a time or side by side (``pairs_at_once``)."""
    workers = settings.pairs_at_once or _cores()
    if workers == 1:
        for plan in plans:
            yield _test(plan, every, where, settings, 1 - alpha, clear)
        return
    # Pairs side by side: their draws, partitions and bootstrap counts (one thread each; NumPy
    # releases the GIL) run in parallel, each BLAS product alone (BLAS_LOCK), so the numbers are
    # those of one pair at a time. Each pair has its own random streams.
    with ThreadPoolExecutor(workers) as pool:
        tested = [
            pool.submit(_test, plan, every, where, settings, 1 - alpha, clear) for plan in plans
        ]
        try:
            for result in tested:
                yield result.result()
        except BaseException:  # a stop or a failure: the pairs not started are not run
            pool.shutdown(cancel_futures=True)
            raise


def _sides(
    plan: PlannedPair, every: np.ndarray, where: Mapping[str, int]
) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """The pair's sides' sentence vectors, gathered when called."""
    return lambda: (every[[where[t] for t in plan.side_a]], every[[where[t] for t in plan.side_b]])


def _cores() -> int:
    """The cores this process may use."""
    if hasattr(os, "sched_getaffinity"):  # Linux
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _test(
    plan: PlannedPair,
    every: np.ndarray,
    where: Mapping[str, int],
    settings: EmbeddingTestSettings,
    confidence: float,
    clear: int | None = None,
) -> dict[str, float]:
    if not plan.testable:
        keys = ["statistic", "z", "effect", "effect_ci_low", "effect_ci_high", EFFECT_MC, "p"]
        return dict.fromkeys([*keys, RELABELLED], math.nan)
    rows = [where[t] for t in plan.side_a] + [where[t] for t in plan.side_b]
    form = pooled_form(every[rows], settings.statistic)
    rng = rng_for(settings.seed, "pair-test", plan.group_a, plan.group_b)
    observed, null, p = sequential_pair_null(
        form, len(plan.side_a), settings.relabellings, rng, settings.stop_after, clear
    )
    n_a = len(plan.side_a)
    found = pair_effect(
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
        "effect": found.effect,
        "effect_ci_low": found.low,
        "effect_ci_high": found.high,
        EFFECT_MC: found.mc_sd,
        "p": p.p,
        RELABELLED: p.drawn,
    }
