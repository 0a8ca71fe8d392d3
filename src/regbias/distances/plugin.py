"""What a distance is: the contract the distance suite runs, one class per method.

A distance is one module and one YAML block. The module defines a frozen dataclass, a subclass
of :class:`Distance`, whose fields are the block's keys (``enabled`` always); the block, under
``distance.<key>`` in the config, names that class with ``_target_``::

    distance:
      toy:
        _target_: my_package.toy.ToyDistance
        enabled: true

The suite (:mod:`regbias.distances.suite`) runs every enabled block, in the config's order, on
the draw kinds it :attr:`~Distance.kinds` measures: ``short`` and ``long`` (token clouds of
single texts and of passages), ``sentence`` and ``lda`` (one pooled vector per text). Its
matrices (``<prefix>_<kind>``, or the bare prefix for a method of one kind) then reach the
pairwise table, the figures, the findings and MLflow like the shipped ones'.
"""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from regbias.distances.lda import LdaProjection
from regbias.distances.matrix import DistanceMatrix

if TYPE_CHECKING:
    from regbias.data.draws import DistanceDraws

__all__ = [
    "KINDS",
    "TOKEN_KINDS",
    "Distance",
    "DistanceInputs",
    "DistanceSuiteResult",
    "distance_label",
    "timed_step",
]

log = logging.getLogger(__name__)

#: The draw kinds whose texts are embedded as token clouds, and the kinds as pooled vectors.
TOKEN_KINDS = ("short", "long")
VECTOR_KINDS = ("sentence", "lda")
#: Every draw kind, with its words in a label ("the long-text Sinkhorn distance").
KINDS = {
    "short": "short-text",
    "long": "long-text",
    "sentence": "sentence-vector",
    "lda": "passage-vector",
}

_REGISTRY: dict[str, type[Distance]] = {}


@contextmanager
def timed_step(timings: dict[str, float], name: str) -> Iterator[None]:
    """Wall seconds of one step of the suite, logged and added to ``timings[name]``."""
    start = time.perf_counter()
    yield
    timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
    log.info("%s took %.1f s", name, time.perf_counter() - start)


@dataclass
class DistanceSuiteResult:
    """What distances measured: matrices, and the extras some of them report.

    Attributes:
        matrices: one :class:`DistanceMatrix` per name.
        diagnostics: per matrix, a table of solver diagnostics per repetition (Sinkhorn's).
        epsilon: the Sinkhorn epsilon every pair used, where Sinkhorn ran.
        lda_projection: the LDA projection of repetition 0, where LDA ran.
        sensitivity: per matrix, a table of values across epsilons (Sinkhorn's).
        timings: wall seconds per step.
    """

    matrices: dict[str, DistanceMatrix] = field(default_factory=dict)
    diagnostics: dict[str, pd.DataFrame] = field(default_factory=dict)
    epsilon: float | None = None
    lda_projection: LdaProjection | None = None
    sensitivity: dict[str, pd.DataFrame] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def add(self, other: DistanceSuiteResult) -> None:
        """Take in what another distance measured (a name measured twice is an error)."""
        twice = sorted(set(self.matrices) & set(other.matrices))
        if twice:
            raise ValueError(f"two distances produce the matrices {twice}")
        self.matrices |= other.matrices
        self.diagnostics |= other.diagnostics
        self.sensitivity |= other.sensitivity
        self.epsilon = other.epsilon if other.epsilon is not None else self.epsilon
        if other.lda_projection is not None:
            self.lda_projection = other.lda_projection
        for step, seconds in other.timings.items():
            self.timings[step] = self.timings.get(step, 0.0) + seconds


@dataclass(frozen=True)
class DistanceInputs:
    """What a job hands every distance: its draws, their embeddings, the seeds.

    Attributes:
        draws: the job's draws (``draws.texts[kind][repetition][group]``: texts; ``twins`` the
            disjoint twin draws that give noise floors; ``units`` the corpus texts a drawn
            item joins).
        tokens: token vectors ``(n_tokens, dim)`` per text of the ``short`` and ``long`` draws.
        pooled: one pooled vector per text of the ``sentence`` and ``lda`` draws.
        seed: the job's seed (splits, halves).
        exclude_unconverged: leave a repetition out of a mean when one of its solves failed.
    """

    draws: DistanceDraws
    tokens: Mapping[str, np.ndarray]
    pooled: Mapping[str, np.ndarray]
    seed: int
    exclude_unconverged: bool

    def kinds(self) -> list[str]:
        """The draw kinds drawn for this job."""
        return [k for k in KINDS if k in self.draws.texts]

    def per_text(self, kind: str, *, twins: bool = False) -> list[dict[str, list[np.ndarray]]]:
        """Per repetition and group, one array per text: token vectors, or a pooled ``(1, d)``."""
        reps = (self.draws.twins if twins else self.draws.texts)[kind]
        return [{g: [self._vectors(kind, t) for t in ts] for g, ts in rep.items()} for rep in reps]

    def clouds(self, kind: str, *, twins: bool = False) -> list[dict[str, np.ndarray]]:
        """Per repetition and group, one point cloud: its texts' vectors stacked."""
        return [
            {g: np.concatenate(texts) for g, texts in rep.items()}
            for rep in self.per_text(kind, twins=twins)
        ]

    def has_twins(self, kind: str) -> bool:
        """Whether ``kind`` has twin draws (noise floors were asked for)."""
        return kind in self.draws.twins

    def _vectors(self, kind: str, text: str) -> np.ndarray:
        return self.tokens[text] if kind in TOKEN_KINDS else self.pooled[text][None, :]


class Distance(abc.ABC):
    """A distance between groups: a frozen dataclass subclass whose fields are its YAML keys.

    Class attributes a subclass sets:
        prefix: what its matrices are named after (``sinkhorn``: ``sinkhorn_short``, ...).
        title: its name in words, for the report (``Sinkhorn distance``).
        kinds: the draw kinds it measures on (of :data:`KINDS`), one matrix each.
    """

    prefix: ClassVar[str]
    title: ClassVar[str]
    kinds: ClassVar[tuple[str, ...]]
    #: Every distance's block sets it: compute its matrices at all.
    enabled: bool

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "prefix") and not getattr(cls.measure, "__isabstractmethod__", False):
            _REGISTRY[cls.prefix] = cls

    @classmethod
    def matrix_name(cls, kind: str) -> str:
        """The matrix this distance computes on a draw kind (the bare prefix for one kind)."""
        return cls.prefix if len(cls.kinds) == 1 else f"{cls.prefix}_{kind}"

    def names(self, kinds: Sequence[str]) -> list[str]:
        """The matrices it computes when ``kinds`` are drawn (none when disabled)."""
        return [self.matrix_name(k) for k in self.kinds if k in kinds] if self.enabled else []

    @classmethod
    def label(cls, name: str) -> str:
        """A matrix of this distance in words: "long-text Sinkhorn distance"."""
        for kind in cls.kinds:
            if cls.matrix_name(kind) == name:
                return cls.title if len(cls.kinds) == 1 else f"{KINDS[kind]} {cls.title}"
        return name

    def draw_sizes(self) -> dict[str, tuple[int, str]]:
        """Draws this distance sizes itself, by kind: the size and the field that sets it."""
        return {}

    def check_groups(self, n_groups: int) -> None:  # noqa: B027 (optional, no-op by default)
        """Raise ConfigError, saying what to set, if it cannot measure ``n_groups`` groups."""

    def meta(self) -> dict[str, Any]:
        """Facts of its settings for a job's ``study.json`` (how it was measured)."""
        return {}

    def needs_calibration(self) -> bool:
        """Whether it fixes settings once per sweep, from a calibration draw (:meth:`calibrate`)."""
        return False

    def calibrate(self, inputs: DistanceInputs) -> Distance:
        """These settings with what a calibration draw fixes for the whole sweep (none here)."""
        return self

    @abc.abstractmethod
    def measure(self, inputs: DistanceInputs) -> DistanceSuiteResult:
        """Its matrices on the job's draws of :attr:`kinds` (those drawn: ``inputs.kinds()``)."""


def distance_label(name: str) -> str:
    """A matrix name in words, by the distance class whose matrices carry that name."""
    for cls in _REGISTRY.values():
        if name == cls.prefix or name.startswith(f"{cls.prefix}_"):
            words = cls.label(name)
            if words != name:
                return words
    return name.replace("_", " ")
