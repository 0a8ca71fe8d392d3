"""Which pairs differ: the shape every pairwise test of record shares.

Each pair gets a p-value; region pairs and pairs with a reference group are two families, Holm
within each (docs/method.md, "Which pairs differ: the test of record"); an untestable pair has
no p and is in no family. :class:`PairwiseTests` holds that shape once; a test declares its
own columns (:mod:`regbias.analysis.pairs.columns`) and words, and the report renders every
such test alike (:mod:`regbias.report.record`). The pairs are planned here for both tests
(:func:`plan_pairs`: the texts both groups hold left out, the caps).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self

import numpy as np
import pandas as pd

from regbias.analysis.multiplicity import adjust_p
from regbias.analysis.pairs.columns import HEAD, TAIL, PairColumn, declared, renamed
from regbias.analysis.pairs.sequential import clear_point
from regbias.data.sampling import rng_for
from regbias.numbers import monte_carlo_text
from regbias.serial import structure, unstructure

#: The declared families: pairs of two regions, and pairs with a reference group.
PRIMARY_FAMILY = "regions"
SECONDARY_FAMILY = "reference"
FAMILIES = (PRIMARY_FAMILY, SECONDARY_FAMILY)

#: Columns every pairwise test's table has (all: :data:`~regbias.analysis.pairs.columns.HEAD`,
#: ``TAIL``): the pair, its family, the p-value, Holm's within the family, the verdict, and
#: why a pair is untestable.
GROUP_A = "group_a"
GROUP_B = "group_b"
FAMILY = "family"
P = "p"
P_ADJUSTED = "p_adjusted"
DIFFERS = "differs"
UNTESTABLE = "untestable"


class _Relabelled(Protocol):
    """A test's settings: at least its relabellings per pair."""

    @property
    def relabellings(self) -> int:
        """Relabellings per pair."""
        ...

    @property
    def stop_when_clear(self) -> bool:
        """Whether a pair with none as extreme early on stops (:func:`clear_point`)."""
        ...


@dataclass(frozen=True)
class PairwiseWords:
    """How the report names a pairwise test (plain words; the report escapes group names).

    Attributes:
        title: the test's name at the head of a finding (``Test of record``).
        differ: a family's count of differing pairs, ``3 <differ>`` (``differ``).
        setting: the setting that raises the relabellings.
        not_measured: the finding said where the test's power is not measured (a test may fill
            in its metric: :meth:`PairwiseTests.not_measured`).
        metric: the prefix of its MLflow metrics and of its pairwise columns.
        headline: the prefix of its headline counts, ``<headline><family>``.
    """

    title: str
    differ: str
    setting: str
    not_measured: str
    metric: str
    headline: str


def holm_per_family(table: pd.DataFrame, alpha: float, testable: pd.Series) -> pd.DataFrame:
    """``table`` (``family``, ``p``) with ``p_adjusted`` (Holm per family), ``differs`` appended.

    A row not ``testable`` is in no family (NaN adjusted p) and does not differ.
    """
    table = table.copy()
    table[P_ADJUSTED] = np.nan
    tested = testable.to_numpy(dtype=bool)
    for family in FAMILIES:
        members = (table[FAMILY] == family).to_numpy() & tested
        if members.any():
            table.loc[members, P_ADJUSTED] = adjust_p(table.loc[members, P].to_numpy(), "holm")
    table[DIFFERS] = tested & (table[P_ADJUSTED].to_numpy() <= alpha)
    return table


class PairwiseTests(ABC):
    """A pairwise test of record: one row per pair of groups, Holm-adjusted per family.

    A subclass is a frozen dataclass with these fields and class variables.

    Attributes:
        settings: what was run.
        alpha: the level of the adjusted verdicts.
        table: one row per pair, in pair order, with the columns of :meth:`schema`:
            ``group_a, group_b, family, n_a, n_b, shared``, the test's own :attr:`columns`,
            ``p``, ``p_adjusted``, ``differs`` and ``untestable`` (why a pair has no p, ""
            where it is tested). A column the table lacks takes its declared default.
        words: how the report names the test.
        columns: the test's own columns, each declared once (:class:`PairColumn`).
        renamed_columns: an older file's name of a column, with its name now.
        settings_defaults: settings an older file may lack, with their values then.
        renamed_settings: an older file's name of a setting, with its name now.
    """

    settings: _Relabelled
    alpha: float
    table: pd.DataFrame
    words: ClassVar[PairwiseWords]
    columns: ClassVar[tuple[PairColumn, ...]]
    renamed_columns: ClassVar[Mapping[str, str]] = {}
    settings_defaults: ClassVar[Mapping[str, object]] = {}
    renamed_settings: ClassVar[Mapping[str, str]] = {}

    def __post_init__(self) -> None:
        """The table in its declared shape (an older or hand-built one gains what it lacks).

        A table without ``untestable`` (an older file) says "no p" where p is NaN.
        """
        table = renamed(self.table, self.renamed_columns)
        if UNTESTABLE not in table and P in table:
            table = table.assign(
                **{UNTESTABLE: np.where(np.isfinite(table[P].astype(float)), "", "no p")}
            )
        object.__setattr__(self, "table", declared(table, self.schema()))

    @classmethod
    def schema(cls) -> tuple[PairColumn, ...]:
        """Every column of the table, in order: the shared head, the test's own, the tail."""
        return (*HEAD, *cls.columns, *TAIL)

    @classmethod
    def pairwise_columns(cls) -> list[str]:
        """The columns the study's pairwise table takes, as ``<metric>_<column>``."""
        return [c.name for c in cls.schema() if c.pairwise]

    @classmethod
    def metric_columns(cls) -> list[str]:
        """The columns MLflow logs per pair, as ``<metric>/<a>__<b>/<column>``."""
        return [c.name for c in cls.schema() if c.logged]

    def testable(self) -> pd.Series:
        """Per row, whether the pair was tested (its ``untestable`` is empty)."""
        return self.table[UNTESTABLE].fillna("").astype(str) == ""

    def family(self, name: str) -> pd.DataFrame:
        """The tested rows of one family, in pair order: Holm's family (``m`` is its length)."""
        return self.table[(self.table[FAMILY] == name) & self.testable()]

    def untestable(self, family: str | None = None) -> pd.DataFrame:
        """The pairs no test could be run on (of one family, or of all), with their reasons."""
        rows = self.table[~self.testable()]
        return rows if family is None else rows[rows[FAMILY] == family]

    def differing(self, family: str = PRIMARY_FAMILY) -> pd.DataFrame:
        """The pairs of a family that differ, smallest adjusted p first."""
        rows = self.family(family)
        return rows[rows[DIFFERS].astype(bool)].sort_values([P_ADJUSTED, P], kind="stable")

    @property
    def clear_after(self) -> int | None:
        """``N``: a pair with none as extreme in its first ``N`` relabellings stopped there."""
        if not self.settings.stop_when_clear:
            return None
        families = self.table.loc[self.testable(), FAMILY]
        return clear_point(families, self.alpha, self.settings.relabellings)

    @property
    def smallest_p(self) -> float:
        """The smallest p a pair can have: ``1 / (1 + relabellings)``, ``1 / (1 + N)`` cleared."""
        return 1.0 / (1 + (self.clear_after or self.settings.relabellings))

    def smallest_holm_p(self, family: str) -> float:
        """The smallest Holm p a pair of the family can have: ``m`` times :attr:`smallest_p`."""
        return min(1.0, len(self.family(family)) * self.smallest_p)

    def can_reject(self, family: str = PRIMARY_FAMILY) -> bool:
        """Whether Holm over the family's tested pairs can reach the level at this resolution."""
        m = len(self.family(family))
        return m > 0 and m * self.smallest_p <= self.alpha

    @property
    def differs(self) -> bool:
        """Whether any pair is shown to differ, in either family."""
        return any(self.can_reject(f) and len(self.differing(f)) for f in FAMILIES)

    @abstractmethod
    def method(self) -> str:
        """The test in words: its statistic, units, relabellings and adjustment."""

    def estimate(self, row: pd.Series) -> str:
        """A differing pair's estimate in words: each declared column's ``estimate`` format.

        A column with a Monte Carlo sd enters the format as text, to the digit it supports.
        """
        values = row.to_dict()
        for column in self.columns:
            if column.mc_sd:
                value, sd = values.get(column.name), values.get(column.mc_sd)
                values[column.name] = monte_carlo_text(value, sd)
        return ", ".join(c.estimate.format(**values) for c in self.columns if c.estimate)

    def detectable(self, row: pd.Series, name: Callable[[str], str] = str) -> str:
        """What the test detects at the ``row``'s sizes ("" where it is not measured).

        ``name`` writes a group's name (the report escapes it for Markdown).
        """
        return ""

    def power_measured(self) -> bool:
        """Whether what the test could detect is measured (its power plants ran)."""
        return False

    def not_measured(self) -> str:
        """The finding said where the test's power is not measured (its words' by default)."""
        return self.words.not_measured

    def own_metrics(self) -> dict[str, float]:
        """The test's metrics beyond its pairs' (e.g. each group's value)."""
        return {}

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (:meth:`from_dict` reads it back; tables as lists of records)."""
        return dict(unstructure(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The tests written by :meth:`to_dict` (a field an older file lacks takes its default).

        An older file's settings are read under their names now, the ones it lacks at their
        values then (:attr:`renamed_settings`, :attr:`settings_defaults`).
        """
        values = dict(data)
        if isinstance(values.get("settings"), Mapping):
            given = {cls.renamed_settings.get(k, k): v for k, v in values["settings"].items()}
            values["settings"] = {**cls.settings_defaults, **given}
        return structure(values, cls)


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
        """The pair's first columns of every pairwise test's table (:data:`HEAD`)."""
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
    groups: Mapping[str, Sequence[str]],
    references: Sequence[str],
    *,
    cap: int | None = None,
    seed: int = 0,
) -> list[PlannedPair]:
    """Every pair of ``groups`` in order, with the texts both groups hold left out.

    ``cap``: the most texts a group brings (None: all), subsampled by its name and ``seed``
    (:func:`cap_groups`). Asked of the whole groups, before any cap: against a region, a
    reference group loses every text of the region and is capped after that; in a pair of two
    regions (or two references) a text both hold leaves both sides. ``shared`` counts the texts
    so removed.
    """
    distinct = {name: list(dict.fromkeys(texts)) for name, texts in groups.items()}
    capped = cap_groups(distinct, cap, seed)
    names = list(capped)
    plans = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = frozenset(distinct[a]) & frozenset(distinct[b])
            side_a, side_b = capped[a], capped[b]
            if (a in references) != (b in references):
                if a in references:
                    side_a = _capped(distinct[a], cap, seed, a, shared)
                else:
                    side_b = _capped(distinct[b], cap, seed, b, shared)
                removed = len(shared)
            else:
                removed = len(shared & frozenset([*side_a, *side_b]))
                side_a = [t for t in side_a if t not in shared]
                side_b = [t for t in side_b if t not in shared]
            family = SECONDARY_FAMILY if a in references or b in references else PRIMARY_FAMILY
            plans.append(PlannedPair(a, b, family, side_a, side_b, removed))
    return plans
