"""A sweep's per-text performance, pooled over its models, and its two-stage bootstrap.

A text's score is its components averaged over the models that scored it: binary, correctness;
multilabel, true positive, false positive and false negative topics. A group's metric is a
function of its texts' summed components. The bootstrap draws the seeds (:func:`unit_weights`),
then the texts within group and label stratum (docs/method.md, "Performance gaps").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.performance.text_scores import COUNTS, THRESHOLD, model_columns, model_of

#: The metrics the per-text scores give, by task: binary accuracy; multilabel micro metrics.
TEXT_METRICS = {
    "binary": ("accuracy",),
    "multilabel": ("micro_f1", "micro_precision", "micro_recall"),
}

#: The units a replicate draws (a distance's repetitions; the seeds, models nested in them, or
#: a single seed's models) that at least one of a correlation's two columns must have for any
#: interval, the primary's and the table's alike: 2 units have 3 distinct resamples, one of
#: them the data itself, and 3 or 4 too few for a 95% interval; 5 have 126. Evaluation texts
#: are resampled within the units and never count: with 2 seeds the texts' spread is not the
#: spread of a repeat of the study.
MIN_RESAMPLED = 5


#: A rewrite score table's row: group, target variety, version, text.
REWRITE_KEYS = ("group", "target", "version", "key")


def pool_text_tables(
    tables: Sequence[pd.DataFrame], keys: Sequence[str] = ("group", "key")
) -> pd.DataFrame:
    """Several jobs' per-text tables as one: a row per ``keys``, every model's columns."""
    if len(tables) == 1:
        return tables[0]
    stacked = pd.concat(tables, ignore_index=True)
    return stacked.groupby(list(keys), sort=False).first().reset_index()


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

    @property
    def positions(self) -> np.ndarray:
        """Every text's position, its strata's in order (none: an empty array)."""
        return np.concatenate(self.rows) if self.rows else np.zeros(0, dtype=np.int64)


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

    def model_replicates(self, n_bootstrap: int, rng: np.random.Generator) -> ModelDraws:
        """``B`` draws of the training procedure's models (:func:`unit_weights`) as text scores."""
        seeds = np.array([model_of(m)[0] for m in self.models])
        unit = training_units(seeds)
        relative = unit_weights(unit, n_bootstrap, rng).astype(np.float32)
        seen = np.isfinite(self.values[:, :, 0])
        share = (seen / np.maximum(seen.sum(axis=1, keepdims=True), 1)).astype(np.float32)
        sums = np.empty((n_bootstrap, len(self.keys), self.values.shape[2]), dtype=np.float32)
        for j in range(self.values.shape[2]):
            sums[:, :, j] = relative @ (np.nan_to_num(self.values[:, :, j]) * share).T
        units_seen = seen.astype(np.int64) @ (unit[:, None] == np.unique(unit)[None, :])
        return ModelDraws(sums, relative @ share.T, ~(units_seen > 0).all(axis=1))


def training_units(seeds: np.ndarray) -> np.ndarray:
    """Each model's training unit (``0..K-1``): its seed, or the model itself if one seed.

    A seed draws the training sample its folds share, so its models are one unit of the
    procedure; with a single seed only its folds can be told apart.
    """
    units = seeds if len(np.unique(seeds)) > 1 else np.arange(len(seeds))
    return np.unique(units, return_inverse=True)[1]


def unit_weights(unit: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """``(B, M)`` models' relative weights (1 in the data) in ``B`` draws of their units.

    A unit of share ``pi_u`` of the models weighs ``1 + c (e_u - sum_v pi_v e_v)``, ``e``
    standard normal and ``c = sqrt(K / chi2_{K-1})`` per draw: the weighted mean of the units'
    values then moves by Student's ``t_{K-1}`` times their standard error, as a t interval
    from ``K`` units must (docs/method.md, "Performance gaps"). One unit: all weights 1.
    """
    _, size = np.unique(unit, return_counts=True)
    k = len(size)
    if k < 2:
        return np.ones((n_bootstrap, len(unit)))
    normal = rng.standard_normal((n_bootstrap, k))
    scale = np.sqrt(k / rng.chisquare(k - 1, n_bootstrap))[:, None]
    relative = 1 + scale * (normal - normal @ (size / size.sum())[:, None])
    return relative[:, unit]


@dataclass(frozen=True)
class ModelDraws:
    """``B`` draws of the models, as each text's weight and weighted components.

    Attributes:
        sums: ``(B, N, d)`` a text's components averaged over the models that scored it, each
            model at its relative weight in the draw (so ``sums / weights`` is its score).
        weights: ``(B, N)`` the mean relative weight of the models that scored the text: 1 for
            a text every model scored; a held-out text carries its own model's unit's weight.
        nested: ``(N,)`` texts that the models of only some units scored (a model's held-out
            fold): carried by their units, never resampled again in the text stage.
    """

    sums: np.ndarray
    weights: np.ndarray
    nested: np.ndarray


#: Draws per block of the text stage (memory in cache, results as one product).
_BLOCK = 64
#: Counts per block of :func:`draw_counts` (a block's counts stay in cache while counted).
_COUNT_CELLS = 1 << 15


def draw_counts(n: int, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """``(B, n)`` float64: how often each of ``n`` texts is drawn in ``B`` resamples of ``n``.

    Each row counts ``n`` uniform integers (2-3 times faster than ``Generator.multinomial``'s
    ``n`` binomials), all drawn ``(B, n)`` in one stream, then counted a block of rows at a
    time: the same counts as one count of all, three times faster at 17,000 texts.
    """
    drawn = rng.integers(0, n, size=(n_bootstrap, n))
    counts = np.empty((n_bootstrap, n))
    step = max(1, _COUNT_CELLS // max(n, 1))
    for start in range(0, n_bootstrap, step):
        block = drawn[start : start + step]
        offset = block + (np.arange(len(block)) * n)[:, None]
        counts[start : start + len(block)] = np.bincount(
            offset.ravel(), minlength=len(block) * n
        ).reshape(len(block), n)
    return counts


def resampled_sums(
    draws: ModelDraws, side: Side, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A side's per-stratum weighted sums ``(B, S, d)`` and counts ``(B, S)``.

    The texts every unit scored are drawn with replacement within their stratum; a nested text
    (:attr:`ModelDraws.nested`) is carried once at its units' weight.
    """
    b = draws.sums.shape[0]
    sums = np.zeros((b, len(side.rows), draws.sums.shape[2]))
    counts = np.zeros((b, len(side.rows)))
    for s, rows in enumerate(side.rows):
        crossed, carried = rows[~draws.nested[rows]], rows[draws.nested[rows]]
        times = draw_counts(len(crossed), b, rng)
        # Blocks of draws, each text's scores taken in order: the same sums as one product
        # over all draws, a quarter of the time (no (B, n, d) copy of the draws' scores).
        for start in range(0, b, _BLOCK):
            block = slice(start, start + _BLOCK)
            taken = draws.sums[block].take(crossed, axis=1)
            sums[block, s] = np.einsum("bn,bnd->bd", times[block], taken)
            weights = draws.weights[block].take(crossed, axis=1)
            counts[block, s] = np.einsum("bn,bn->b", times[block], weights)
        sums[:, s] += draws.sums[:, carried].sum(axis=1, dtype=np.float64)
        counts[:, s] += draws.weights[:, carried].sum(axis=1, dtype=np.float64)
    return sums, counts


def group_metric_replicates(
    texts: PerfTexts, groups: Sequence[str], n_bootstrap: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Per metric, two-stage bootstrap replicates ``(B, G)`` of ``groups`` (no texts: NaN)."""
    draws = texts.model_replicates(n_bootstrap, rng)
    out = {m: np.full((n_bootstrap, len(groups)), np.nan) for m in texts.metrics}
    for g, group in enumerate(groups):
        if group not in texts.members:
            continue
        sums, counts = resampled_sums(draws, texts.group_side(group), rng)
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
    rows = side.positions
    return float(metric_of(metric, scores[rows].sum(axis=0), len(rows)))


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap ``values`` (NaN left out; NaN ends: none finite)."""
    if not np.isfinite(values).any():
        return math.nan, math.nan
    low, high = np.nanquantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)
