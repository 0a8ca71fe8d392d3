"""A labelled, symmetric matrix of distances between groups, averaged over repetitions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DistanceMatrix"]


@dataclass(frozen=True)
class DistanceMatrix:
    """Mean and standard deviation over repetitions of a pairwise group distance.

    Attributes:
        name: what was measured (``sinkhorn_short``, ``sinkhorn_long``, ``lda``).
        groups: group names, the order of rows and columns.
        mean: ``(K, K)`` mean over repetitions, zero diagonal.
        sd: ``(K, K)`` sample standard deviation over repetitions (ddof=1; 0 when R == 1).
        n_repetitions: how many repetitions the statistics cover.
        config: the settings that produced the values (epsilon, sizes, ...).
        repetitions: the ``(R, K, K)`` per-repetition matrices the statistics summarise, or
            None when only the summary is known; the robustness bootstrap resamples them.
    """

    name: str
    groups: list[str]
    mean: np.ndarray
    sd: np.ndarray
    n_repetitions: int
    config: dict[str, Any] = field(default_factory=dict)
    repetitions: np.ndarray | None = None

    @classmethod
    def from_repetitions(
        cls, name: str, groups: list[str], values: np.ndarray, config: dict[str, Any] | None = None
    ) -> DistanceMatrix:
        """Summarise an ``(R, K, K)`` stack of per-repetition matrices."""
        values = np.asarray(values, dtype=np.float64)
        n = values.shape[0]
        sd = values.std(axis=0, ddof=1) if n > 1 else np.zeros(values.shape[1:])
        mean = values.mean(axis=0)
        return cls(name, list(groups), mean, sd, n, dict(config or {}), values)

    @classmethod
    def pooled(cls, matrices: list[DistanceMatrix]) -> DistanceMatrix:
        """Combine matrices of the same groups measured in separate jobs (weights = repetitions).

        The per-repetition stacks are concatenated when every matrix has one.
        """
        first = matrices[0]
        for other in matrices[1:]:
            if other.groups != first.groups:
                raise ValueError(f"cannot pool {first.groups} with {other.groups}")
        counts = np.array([m.n_repetitions for m in matrices], dtype=np.float64)
        total = counts.sum()
        mean = sum(c * m.mean for c, m in zip(counts, matrices, strict=False)) / total
        # Pooled variance: within-job sums of squares plus between-job spread of the means.
        ss = sum(
            (c - 1) * m.sd**2 + c * (m.mean - mean) ** 2
            for c, m in zip(counts, matrices, strict=True)
        )
        sd = np.sqrt(ss / (total - 1)) if total > 1 else np.zeros_like(mean)
        stacks = [m.repetitions for m in matrices]
        repetitions = None if any(s is None for s in stacks) else np.concatenate(stacks)
        return cls(first.name, first.groups, mean, sd, int(total), first.config, repetitions)

    def value(self, group_a: str, group_b: str) -> float:
        i, j = self.groups.index(group_a), self.groups.index(group_b)
        return float(self.mean[i, j])

    def pairs(self) -> pd.DataFrame:
        """One row per unordered pair: ``group_a, group_b, mean, sd``."""
        rows = []
        for i, a in enumerate(self.groups):
            for j in range(i + 1, len(self.groups)):
                rows.append((a, self.groups[j], self.mean[i, j], self.sd[i, j]))
        return pd.DataFrame(rows, columns=["group_a", "group_b", "mean", "sd"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields; ``repetitions`` comes last and only when known."""
        data = {
            "name": self.name,
            "groups": self.groups,
            "mean": self.mean.tolist(),
            "sd": self.sd.tolist(),
            "n_repetitions": self.n_repetitions,
            "config": self.config,
        }
        if self.repetitions is not None:
            data["repetitions"] = self.repetitions.tolist()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DistanceMatrix:
        return cls(
            name=data.get("name", "distance"),
            groups=list(data["groups"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            sd=np.asarray(data["sd"], dtype=np.float64),
            n_repetitions=int(data["n_repetitions"]),
            config=dict(data.get("config", {})),
            repetitions=(
                None
                if data.get("repetitions") is None
                else np.asarray(data["repetitions"], dtype=np.float64)
            ),
        )

    def to_frame(self) -> pd.DataFrame:
        """The mean matrix as a labelled frame (rows and columns = groups)."""
        return pd.DataFrame(self.mean, index=self.groups, columns=self.groups)

    def save(self, directory: Path) -> list[Path]:
        """Write ``<name>.json`` and ``<name>.csv`` (the mean, labelled) into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        json_path = directory / f"{self.name}.json"
        json_path.write_text(json.dumps(self.to_dict(), indent=2))
        csv_path = directory / f"{self.name}.csv"
        self.to_frame().to_csv(csv_path)
        return [json_path, csv_path]
