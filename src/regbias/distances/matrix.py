"""A labelled, symmetric matrix of distances between groups, averaged over repetitions."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DistanceMatrix", "PER_JOB_FACTS"]

#: Config entries that describe one job's clouds or how its values were computed rather than
#: what was measured: the padded size follows the longest cloud drawn, and Sinkhorn's
#: ``updates`` (kernel or log, resolved from the job's mean cost) reach the same fixed point.
#: They may differ between pooled jobs.
PER_JOB_FACTS = frozenset({"n_points_padded", "updates"})


@dataclass(frozen=True)
class DistanceMatrix:
    """Mean and standard deviation over repetitions of a pairwise group distance.

    Attributes:
        name: what was measured, e.g. ``sinkhorn_long`` (:mod:`regbias.distances.plugin`).
        groups: group names, the order of rows and columns.
        mean: ``(K, K)`` mean over repetitions, zero diagonal.
        sd: ``(K, K)`` sample standard deviation over repetitions (ddof=1; 0 when R == 1).
        n_repetitions: how many repetitions the statistics cover.
        config: the settings that produced the values (epsilon, sizes, ...).
        floor: ``(K,)`` noise floor per group: the mean within-group distance between two
            disjoint draws of the group at the sizes of a between-group draw (None: not measured).
        floor_sd: ``(K,)`` standard deviation of those within-group distances.
        excluded: ``(K, K)`` count of repetitions left out of the mean per pair (a solve that
            did not converge); None when none were.
        repetitions: the ``(R, K, K)`` per-repetition matrices the statistics summarise (NaN
            where a repetition is left out), or None when only the summary is known; the
            robustness bootstrap resamples them.
    """

    name: str
    groups: list[str]
    mean: np.ndarray
    sd: np.ndarray
    n_repetitions: int
    config: dict[str, Any] = field(default_factory=dict)
    floor: np.ndarray | None = None
    floor_sd: np.ndarray | None = None
    excluded: np.ndarray | None = None
    repetitions: np.ndarray | None = None

    def excess(self) -> np.ndarray | None:
        """``(K, K)`` distance above the noise floor: ``d(a, b) - (floor(a) + floor(b)) / 2``."""
        if self.floor is None:
            return None
        excess = self.mean - (self.floor[:, None] + self.floor[None, :]) / 2
        np.fill_diagonal(excess, 0.0)
        return excess

    @classmethod
    def from_repetitions(
        cls, name: str, groups: list[str], values: np.ndarray, config: dict[str, Any] | None = None
    ) -> DistanceMatrix:
        """Summarise an ``(R, K, K)`` stack of per-repetition matrices.

        NaN entries (a repetition left out for one pair) are skipped in that pair's mean and sd.
        """
        values = np.asarray(values, dtype=np.float64)
        n = values.shape[0]
        if not np.isnan(values).any():
            mean, sd = mean_sd(values)
            return cls(name, list(groups), mean, sd, n, dict(config or {}), repetitions=values)
        counts = (~np.isnan(values)).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.nansum(values, axis=0) / counts
            squares = np.nansum((values - mean) ** 2, axis=0)
            sd = np.where(counts > 1, np.sqrt(squares / np.maximum(counts - 1, 1)), 0.0)
        return cls(name, list(groups), mean, sd, n, dict(config or {}), repetitions=values)

    @classmethod
    def pooled(cls, matrices: list[DistanceMatrix]) -> DistanceMatrix:
        """Combine matrices of the same groups measured in separate jobs (weights = repetitions).

        The per-repetition stacks are concatenated when every matrix has one.

        Raises:
            ValueError: the matrices cover other groups or were made with other settings
                (another epsilon, other draw sizes): pooling them would mix two measurements.
        """
        first = matrices[0]
        for other in matrices[1:]:
            if other.groups != first.groups:
                raise ValueError(f"cannot pool {first.groups} with {other.groups}")
            differing = sorted(
                k
                for k in set(first.config) | set(other.config)
                if k not in PER_JOB_FACTS and first.config.get(k) != other.config.get(k)
            )
            if differing:
                shown = ", ".join(
                    f"{k}: {first.config.get(k)!r} vs {other.config.get(k)!r}" for k in differing
                )
                raise ValueError(
                    f"cannot pool {first.name} matrices made with other settings ({shown})"
                )
        counts = np.array([m.n_repetitions for m in matrices], dtype=np.float64)
        total = counts.sum()
        mean = _weighted([m.mean for m in matrices], counts)
        # Pooled variance: within-job sums of squares plus between-job spread of the means.
        ss = sum(
            (c - 1) * m.sd**2 + c * (m.mean - mean) ** 2
            for c, m in zip(counts, matrices, strict=True)
        )
        sd = np.sqrt(ss / (total - 1)) if total > 1 else np.zeros_like(mean)
        floor, floor_sd = _pooled_floor(matrices, counts)
        return cls(
            first.name,
            first.groups,
            mean,
            sd,
            int(total),
            first.config,
            floor=floor,
            floor_sd=floor_sd,
            excluded=_summed([m.excluded for m in matrices]),
            repetitions=_stacked([m.repetitions for m in matrices]),
        )

    def value(self, group_a: str, group_b: str) -> float:
        """The mean distance of two groups, by name.

        Raises:
            ValueError: a group is not in the matrix.
        """
        i, j = self.groups.index(group_a), self.groups.index(group_b)
        return float(self.mean[i, j])

    def pair_indices(self) -> list[tuple[int, int]]:
        """Every unordered pair of groups as ``(i, j)`` with ``i < j``, in the groups' order."""
        k = len(self.groups)
        return [(i, j) for i in range(k) for j in range(i + 1, k)]

    def floor_spread(self) -> np.ndarray:
        """Each group's floor standard deviation (zeros where none was measured)."""
        return self.floor_sd if self.floor_sd is not None else np.zeros(len(self.groups))

    def pairs(self) -> pd.DataFrame:
        """One row per unordered pair: ``group_a, group_b, mean, sd``."""
        rows = [
            (self.groups[i], self.groups[j], self.mean[i, j], self.sd[i, j])
            for i, j in self.pair_indices()
        ]
        return pd.DataFrame(rows, columns=["group_a", "group_b", "mean", "sd"])

    def to_dict(self) -> dict[str, Any]:
        """The matrix as plain JSON values (what ``distances/<name>.json`` holds).

        Returns:
            ``name, groups, mean, sd, n_repetitions, config`` and those of ``floor,
            floor_sd, excluded, repetitions`` that are known, arrays as nested lists.
        """
        return {
            "name": self.name,
            "groups": self.groups,
            "mean": self.mean.tolist(),
            "sd": self.sd.tolist(),
            "n_repetitions": self.n_repetitions,
            "config": self.config,
            **{k: _listed(getattr(self, k)) for k in _EXTRA_KEYS if getattr(self, k) is not None},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DistanceMatrix:
        """The matrix :meth:`to_dict` wrote (absent optional arrays stay None).

        Raises:
            KeyError: ``groups``, ``mean``, ``sd`` or ``n_repetitions`` is missing.
        """
        return cls(
            name=data.get("name", "distance"),
            groups=list(data["groups"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            sd=np.asarray(data["sd"], dtype=np.float64),
            n_repetitions=int(data["n_repetitions"]),
            config=dict(data.get("config", {})),
            **{key: _array(data.get(key)) for key in _EXTRA_KEYS},
        )

    def to_frame(self) -> pd.DataFrame:
        """The mean matrix as a labelled frame (rows and columns = groups)."""
        return pd.DataFrame(self.mean, index=self.groups, columns=self.groups)


#: The optional arrays, in the order they are written (the largest last).
_EXTRA_KEYS = ("floor", "floor_sd", "excluded", "repetitions")


def mean_sd(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample sd (ddof=1; 0 for a single row) over the first axis of ``values``."""
    sd = values.std(axis=0, ddof=1) if len(values) > 1 else np.zeros(values.shape[1:])
    return values.mean(axis=0), sd


def _listed(value: np.ndarray) -> list[Any]:
    """JSON-ready nested lists; NaN becomes null."""
    return [
        _listed(v) if isinstance(v, np.ndarray) else (float(v) if np.isfinite(v) else None)
        for v in np.asarray(value, dtype=np.float64)
    ]


def _array(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    return np.array(value, dtype=np.float64)  # null -> nan


def _weighted(values: list[np.ndarray], counts: np.ndarray) -> np.ndarray:
    return sum(c * v for c, v in zip(counts, values, strict=True)) / counts.sum()


def _summed(values: list[np.ndarray | None]) -> np.ndarray | None:
    present = [v for v in values if v is not None]
    return functools.reduce(np.add, present) if present else None


def _stacked(values: list[np.ndarray | None]) -> np.ndarray | None:
    present = [v for v in values if v is not None]
    return np.concatenate(present) if len(present) == len(values) else None


def _pooled_floor(
    matrices: list[DistanceMatrix], counts: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Floors pooled like the means: weighted mean and pooled standard deviation."""
    floors = [m.floor for m in matrices if m.floor is not None]
    if len(floors) < len(matrices):
        return None, None
    floor = _weighted(floors, counts)
    ss = sum(
        (c - 1) * (m.floor_sd if m.floor_sd is not None else 0.0) ** 2 + c * (own - floor) ** 2
        for c, m, own in zip(counts, matrices, floors, strict=True)
    )
    total = counts.sum()
    return floor, np.sqrt(ss / (total - 1)) if total > 1 else np.zeros_like(floor)
