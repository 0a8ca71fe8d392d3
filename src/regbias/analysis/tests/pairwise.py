"""Which pairs differ: the shape every pairwise test of record shares.

Each pair gets a p-value; region pairs and pairs with a reference group are two families, Holm
within each (docs/method.md, "Which pairs differ: the test of record"); an untestable pair has
no p and is in no family. :class:`PairwiseTests` holds that shape once; a test adds its own
columns and words, and the report renders every such test alike (:mod:`regbias.report.record`).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self, get_args, get_origin, get_type_hints

import numpy as np
import pandas as pd

from regbias.analysis.multiplicity import adjust_p

#: The declared families: pairs of two regions, and pairs with a reference group.
PRIMARY_FAMILY = "regions"
SECONDARY_FAMILY = "reference"
FAMILIES = (PRIMARY_FAMILY, SECONDARY_FAMILY)

#: The columns every pairwise test's table has: the pair, its family, the sizes of its sides,
#: the texts left out as held by both, the p-value, Holm's within the family, the verdict.
GROUP_A = "group_a"
GROUP_B = "group_b"
FAMILY = "family"
N_A = "n_a"
N_B = "n_b"
SHARED = "shared"
P = "p"
P_ADJUSTED = "p_adjusted"
DIFFERS = "differs"


class _Relabelled(Protocol):
    """A test's settings: at least its relabellings per pair."""

    @property
    def relabellings(self) -> int:
        """Relabellings per pair."""
        ...


@dataclass(frozen=True)
class PairwiseWords:
    """How the report names a pairwise test (plain words; the report escapes group names).

    Attributes:
        title: the test's name at the head of a finding (``Test of record``).
        differ: a family's count of differing pairs, ``3 <differ>`` (``differ``).
        claim: the bottom line's clause, with ``{found}``, ``{n}`` and ``{pairs}``.
        verdictless: the bottom line's words where no verdict is possible (``no verdict``).
        setting: the setting that raises the relabellings.
        not_measured: the finding said where the test's power is not measured (a test may fill
            in its metric: :meth:`PairwiseTests.not_measured`).
        metric: the prefix of its MLflow metrics and of its pairwise columns.
        headline: the prefix of its headline counts, ``<headline><family>``.
    """

    title: str
    differ: str
    claim: str
    verdictless: str
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
        table: one row per pair, in pair order: ``group_a, group_b, family, n_a, n_b,
            shared``, the test's own columns, ``p``, ``p_adjusted``, ``differs``, and the
            column :attr:`reason` saying why a pair is untestable ("" where it is tested).
        words: how the report names the test.
        reason: the column of why a pair is untestable.
        pairwise_columns: the columns the study's pairwise table takes, as ``<metric>_<column>``.
        signed_columns: those whose sign flips with the pair's order.
        signed_interval: the interval (low, high) that flips with the order (None: none).
        metric_columns: the columns logged per pair as ``<metric>/<a>__<b>/<column>``.
        settings_defaults: settings an older file may lack, with their values then.
        renamed_settings: an older file's name of a setting, with its name now.
    """

    settings: _Relabelled
    alpha: float
    table: pd.DataFrame
    words: ClassVar[PairwiseWords]
    reason: ClassVar[str]
    pairwise_columns: ClassVar[tuple[str, ...]]
    signed_columns: ClassVar[tuple[str, ...]] = ()
    signed_interval: ClassVar[tuple[str, str] | None] = None
    metric_columns: ClassVar[tuple[str, ...]]
    settings_defaults: ClassVar[Mapping[str, object]] = {}
    renamed_settings: ClassVar[Mapping[str, str]] = {}

    def __post_init__(self) -> None:
        """A table without the reason column (an older file) gains it: "no p" where p is NaN."""
        if self.reason not in self.table:
            table = self.table.copy()
            finite = np.isfinite(table[P].astype(float))
            table[self.reason] = np.where(finite, "", "no p")
            object.__setattr__(self, "table", table)

    def testable(self) -> pd.Series:
        """Per row, whether the pair was tested (its reason is empty)."""
        return self.table[self.reason].fillna("").astype(str) == ""

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
    def smallest_p(self) -> float:
        """The smallest p a pair can have: ``1 / (1 + relabellings)``."""
        return 1.0 / (1 + self.settings.relabellings)

    def smallest_holm_p(self, family: str) -> float:
        """The smallest Holm p a pair of the family can have: ``m / (1 + relabellings)``."""
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

    @abstractmethod
    def estimate(self, row: pd.Series) -> str:
        """A differing pair's estimate with its interval, in words."""

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
        """A JSON-ready form (:meth:`from_dict` reads it back)."""
        out: dict[str, object] = {}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if isinstance(value, pd.DataFrame):
                value = value.to_dict(orient="records")
            elif dataclasses.is_dataclass(value) and not isinstance(value, type):
                value = dataclasses.asdict(value)
            out[field.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The tests written by :meth:`to_dict` (a field an older file lacks takes its default)."""
        hints = get_type_hints(cls)
        values = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            if field.name in data:
                values[field.name] = _read(hints[field.name], data[field.name], cls)
        return cls(**values)


def _read(hint: Any, value: Any, tests: type[PairwiseTests]) -> object:
    """A field's value read back from its JSON form, as its annotation says."""
    if hint is pd.DataFrame:
        return pd.DataFrame(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        renamed = {tests.renamed_settings.get(k, k): v for k, v in value.items()}
        return hint(**{**tests.settings_defaults, **renamed})
    if get_origin(hint) is dict:
        key, item = get_args(hint)
        return {key(k): item(v) for k, v in value.items()}
    return hint(value) if hint in (int, float, str) else value
