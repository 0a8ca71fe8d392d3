"""A sweep's per-text performance, pooled over its models, and its two-stage bootstrap.

A text's score is what the sweep's models said of it, averaged over the models that scored it
(docs/method.md, "Performance gaps"): binary, one component (correctness); multilabel, three
(true positive, false positive and false negative topics). A group's metric is a function of
its texts' summed components: accuracy ``c / n``, micro-F1 ``2 tp / (2 tp + fp + fn)``. The
bootstrap draws the models, then the texts within each group and label stratum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.performance.text_scores import COUNTS, THRESHOLD, model_columns

__all__ = [
    "TEXT_METRICS",
    "PerfTexts",
    "Side",
    "group_metric_replicates",
    "group_metrics",
    "metric_of",
    "percentile_interval",
    "pool_text_tables",
    "resampled_sums",
    "side_metric",
]

#: The metrics the per-text scores give, by task: binary accuracy; multilabel micro metrics.
TEXT_METRICS = {
    "binary": ("accuracy",),
    "multilabel": ("micro_f1", "micro_precision", "micro_recall"),
}


def pool_text_tables(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Several jobs' per-text tables as one: a row per group and text, every model's columns."""
    if len(tables) == 1:
        return tables[0]
    stacked = pd.concat(tables, ignore_index=True)
    return stacked.groupby(["group", "key"], sort=False).first().reset_index()


def metric_of(metric: str, sums: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """A metric from summed text components ``(..., d)`` of ``n`` texts (NaN: undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "accuracy":
            return np.asarray(sums[..., 0] / n, dtype=np.float64)
        tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
        if metric == "micro_precision":
            value = tp / (tp + fp)
            return np.where(tp + fp > 0, value, 0.0)  # no topic predicted: 0, as sklearn
        if metric == "micro_recall":
            return tp / (tp + fn)
        if metric == "micro_f1":
            return 2 * tp / (2 * tp + fp + fn)
    raise ValueError(f"no per-text form for metric {metric!r}")


@dataclass(frozen=True)
class Side:
    """A side's texts: their positions in :attr:`PerfTexts.keys` per stratum, and the strata."""

    rows: tuple[np.ndarray, ...]
    strata: tuple[str, ...]

    @property
    def n(self) -> int:
        """Texts on the side."""
        return int(sum(len(r) for r in self.rows))


@dataclass(frozen=True)
class PerfTexts:
    """Every distinct text's per-model components, and which groups hold it.

    A text two groups label differently is two units, one per label (each group's scored with
    its own label): ``keys`` then repeats its key.

    Attributes:
        task: ``binary`` or ``multilabel``.
        keys: the distinct units' text keys.
        strata: each unit's label stratum (binary ``"0"``/``"1"``; multilabel its topics).
        values: ``(N, M, d)`` each model's components of each unit; NaN: not scored.
        models: the ``M`` models' names.
        members: per group, the positions of its texts in ``keys``, in table order.
    """

    task: str
    keys: np.ndarray
    strata: np.ndarray
    values: np.ndarray
    models: list[str]
    members: dict[str, np.ndarray]

    @classmethod
    def of(cls, texts: pd.DataFrame) -> PerfTexts:
        """The pooled per-text table (:func:`pool_text_tables`) as arrays."""
        probs = model_columns(texts, "prob")
        task = "binary" if probs else "multilabel"
        # A unit per text and label: a text two groups label differently is scored with each
        # group's own label.
        unit = texts.groupby(["key", "label"], sort=False).ngroup().to_numpy()
        distinct = texts[~pd.Series(unit).duplicated().to_numpy()]
        keys = distinct["key"].to_numpy()
        strata = distinct["label"].astype(str).to_numpy()
        if task == "binary":
            models = list(probs)
            prob = distinct[list(probs.values())].to_numpy(dtype=np.float64)
            label = pd.to_numeric(distinct["label"]).to_numpy(dtype=np.float64)[:, None]
            correct = ((prob > THRESHOLD) == (label > 0.5)).astype(np.float64)
            values = np.where(np.isnan(prob), np.nan, correct)[:, :, None]
        else:
            columns = {kind: model_columns(texts, kind) for kind in COUNTS}
            models = list(columns["tp"])
            values = np.stack(
                [distinct[[columns[k][m] for m in models]].to_numpy(np.float64) for k in COUNTS],
                axis=2,
            )
        groups = texts["group"].astype(str).to_numpy()
        members = {str(g): unit[groups == g] for g in dict.fromkeys(groups)}
        return cls(task, keys, strata, values, models, members)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics these texts give (:data:`TEXT_METRICS`)."""
        return TEXT_METRICS[self.task]

    @property
    def primary_metric(self) -> str:
        """The metric the performance test compares: accuracy, or micro-F1 (multilabel)."""
        return self.metrics[0]

    def scores(self) -> np.ndarray:
        """``(N, d)`` each text's components averaged over the models that scored it (or NaN)."""
        finite = np.isfinite(self.values)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(finite, self.values, 0.0).sum(axis=1) / finite.sum(axis=1)

    def side(self, rows: np.ndarray) -> Side:
        """The texts at ``rows`` grouped by stratum (strata in sorted order)."""
        rows = np.asarray(rows, dtype=np.int64)
        # A text some model scored (its first component is known): no full rescoring per side.
        rows = rows[np.isfinite(self.values[rows, :, 0]).any(axis=1)]
        labels = self.strata[rows]
        names = sorted(set(labels.tolist()))
        return Side(tuple(rows[labels == s] for s in names), tuple(names))

    def group_side(self, group: str) -> Side:
        """A group's scored texts as a side."""
        return self.side(self.members[group])

    def model_replicates(self, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
        """``(B, N, d)`` float32 text scores of models drawn with replacement (NaN: none scored)."""
        m = len(self.models)
        weights = rng.multinomial(m, np.full(m, 1 / m), n_bootstrap).astype(np.float32)
        finite = np.isfinite(self.values)
        out = np.empty((n_bootstrap, len(self.keys), self.values.shape[2]), dtype=np.float32)
        for j in range(self.values.shape[2]):
            value = np.where(finite[:, :, j], self.values[:, :, j], 0.0).astype(np.float32)
            seen = finite[:, :, j].astype(np.float32)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, :, j] = (weights @ value.T) / (weights @ seen.T)
        return out


def resampled_sums(
    replicates: np.ndarray, side: Side, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A side's per-stratum sums ``(B, S, d)`` and counts ``(B, S)``, texts resampled in strata.

    A text whose replicate score is NaN (no drawn model scored it) is left out.
    """
    b = replicates.shape[0]
    sums = np.zeros((b, len(side.rows), replicates.shape[2]))
    counts = np.zeros((b, len(side.rows)))
    for s, rows in enumerate(side.rows):
        drawn = rng.integers(0, len(rows), size=(b, len(rows)))
        for j in range(replicates.shape[2]):
            values = np.take_along_axis(replicates[:, rows, j], drawn, axis=1)
            finite = np.isfinite(values)
            sums[:, s, j] = np.where(finite, values, 0.0).sum(axis=1, dtype=np.float64)
            if j == 0:
                counts[:, s] = finite.sum(axis=1)
    return sums, counts


def group_metric_replicates(
    texts: PerfTexts, groups: Sequence[str], n_bootstrap: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Per metric, two-stage bootstrap replicates ``(B, G)`` of ``groups`` (no texts: NaN)."""
    replicates = texts.model_replicates(n_bootstrap, rng)
    out = {m: np.full((n_bootstrap, len(groups)), np.nan) for m in texts.metrics}
    for g, group in enumerate(groups):
        if group not in texts.members:
            continue
        sums, counts = resampled_sums(replicates, texts.group_side(group), rng)
        for metric in texts.metrics:
            out[metric][:, g] = metric_of(metric, sums.sum(axis=1), counts.sum(axis=1))
    return out


def group_metrics(texts: PerfTexts, groups: Sequence[str]) -> Mapping[str, np.ndarray]:
    """Every group's metrics ``(G,)`` from its texts' scores (no resampling)."""
    scores = texts.scores()
    out = {m: np.full(len(groups), np.nan) for m in texts.metrics}
    for g, group in enumerate(groups):
        if group not in texts.members:
            continue
        side = texts.group_side(group)
        for metric in texts.metrics:
            out[metric][g] = side_metric(metric, scores, side)
    return out


def side_metric(metric: str, scores: np.ndarray, side: Side) -> float:
    """``metric`` of all a side's texts, from every text's ``(N, d)`` ``scores``."""
    rows = np.concatenate(side.rows) if side.rows else np.zeros(0, dtype=np.int64)
    return float(metric_of(metric, scores[rows].sum(axis=0), len(rows)))


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap ``values`` (NaN left out; NaN ends: none finite)."""
    if not np.isfinite(values).any():
        return math.nan, math.nan
    low, high = np.nanquantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)
