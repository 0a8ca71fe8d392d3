"""Stage I evaluation: repeated per-group metrics, performance gaps and performance dcor."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from regbias.console import progress_bar as tqdm
from regbias.data.draws import evaluation_draws
from regbias.data.sampling import SizePolicy
from regbias.errors import ConfigError, DataError
from regbias.performance.table import COLUMNS

BINARY_METRICS = (
    "accuracy",
    "roc_auc",
    "precision_pos",
    "recall_pos",
    "precision_neg",
    "recall_neg",
    "f1",
)
MULTILABEL_METRICS = ("subset_accuracy", "micro_precision", "micro_recall", "micro_f1")
KEYS = ["model", "seed", "fold", "group", "metric"]


class EvaluatedModel(Protocol):
    """What evaluation reads from a trained model (``regbias.performance.folds.FoldModel`` fits)."""

    seed: int
    fold: int
    predictions: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]

    @property
    def name(self) -> str:
        """The model's name, unique across a sweep (``seed3/fold0``)."""
        ...


def _check_labels(y_true: np.ndarray, prob: np.ndarray, ndim: int) -> tuple[np.ndarray, ...]:
    y_true, prob = np.asarray(y_true), np.asarray(prob, dtype=np.float64)
    kind = "binary" if ndim == 1 else "multilabel"
    if y_true.ndim != ndim or y_true.shape != prob.shape:
        raise DataError(
            f"{kind} evaluation needs labels and probabilities of the same {ndim}-d shape, "
            f"got {y_true.shape} and {prob.shape}"
        )
    outside = np.setdiff1d(np.unique(y_true), [0, 1])
    if outside.size:
        raise DataError(
            f"labels must be 0 or 1, found {outside[:5].tolist()}: map the corpus labels "
            "to 0/1 (Sentiment140's 4 means positive) before evaluating"
        )
    if not np.all((prob >= 0.0) & (prob <= 1.0)):
        raise DataError("predicted probabilities must lie in [0, 1] (no NaN)")
    return y_true.astype(np.int64), prob


def binary_metrics(
    y_true: np.ndarray, prob: np.ndarray, threshold: float = 0.5
) -> dict[str, float]:
    """Binary classification metrics, a text positive where ``prob`` exceeds ``threshold``.

    Returns:
        ``accuracy``, ``roc_auc`` (NaN with a warning when ``y_true`` holds a single class),
        ``precision_pos``, ``recall_pos``, ``precision_neg``, ``recall_neg`` and ``f1``
        (of the positive class). The recall of a class the sample lacks (and ``f1`` without
        positives) is NaN: undefined, it leaves the correlations; a precision with no text
        predicted in its class counts as 0.

    Raises:
        DataError: labels outside {0, 1}, mismatched shapes or probabilities outside [0, 1].
    """
    y_true, prob = _check_labels(y_true, prob, ndim=1)
    if y_true.size == 0:
        raise DataError("cannot evaluate an empty group")
    y_pred = (prob > threshold).astype(np.int64)
    if np.unique(y_true).size < 2:
        warnings.warn(
            f"ROC AUC is undefined for a sample with a single class ({int(y_true[0])}): NaN",
            RuntimeWarning,
            stacklevel=2,
        )
        auc = float("nan")
    else:
        auc = float(roc_auc_score(y_true, prob))
    side = {"y_true": y_true, "y_pred": y_pred, "zero_division": 0}
    has = {label: bool((y_true == label).any()) for label in (0, 1)}
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "roc_auc": auc,
        "precision_pos": float(precision_score(**side, pos_label=1)),
        "recall_pos": _if(has[1], lambda: recall_score(**side, pos_label=1)),
        "precision_neg": float(precision_score(**side, pos_label=0)),
        "recall_neg": _if(has[0], lambda: recall_score(**side, pos_label=0)),
        "f1": _if(has[1], lambda: f1_score(**side, pos_label=1)),
    }


def _if(defined: bool, value: Callable[[], float]) -> float:
    """A metric's value, or NaN where the sample lacks the class it is about (undefined)."""
    return float(value()) if defined else float("nan")


def multilabel_metrics(
    y_true: np.ndarray, prob: np.ndarray, threshold: float = 0.5
) -> dict[str, float]:
    """Multilabel metrics, a topic predicted where its ``prob`` exceeds ``threshold``.

    Returns:
        ``subset_accuracy`` (exact match), ``micro_precision``, ``micro_recall``, ``micro_f1``
        (recall and F1 are NaN for a sample without any topic label; a precision with no
        predicted topic counts as 0).

    Raises:
        DataError: labels outside {0, 1}, mismatched shapes or probabilities outside [0, 1].
    """
    y_true, prob = _check_labels(y_true, prob, ndim=2)
    if y_true.shape[0] == 0:
        raise DataError("cannot evaluate an empty group")
    y_pred = (prob > threshold).astype(np.int64)
    micro = {"y_true": y_true, "y_pred": y_pred, "average": "micro", "zero_division": 0}
    labelled = bool(y_true.any())
    return {
        "subset_accuracy": float(accuracy_score(y_true, y_pred)),
        "micro_precision": float(precision_score(**micro)),
        "micro_recall": _if(labelled, lambda: recall_score(**micro)),
        "micro_f1": _if(labelled, lambda: f1_score(**micro)),
    }


def metric_rows(
    model: EvaluatedModel,
    group: str,
    repetition: int,
    labels: np.ndarray,
    probs: np.ndarray,
    threshold: float,
) -> list[tuple]:
    """A :data:`COLUMNS` row per metric of ``model`` on ``group``'s ``labels`` ((n,) or (n, C))."""
    metric_fn = multilabel_metrics if labels.ndim == 2 else binary_metrics
    return [
        (model.name, model.seed, model.fold, group, repetition, metric, value, len(labels))
        for metric, value in metric_fn(labels, probs, threshold).items()
    ]


@dataclass
class _DrawBook:
    """Each group's evaluation draws, made once per (group, size) and shared by every model."""

    draw_size: int | None
    repetitions: int
    seed: int
    policy: SizePolicy
    given: dict[str, list[np.ndarray]]
    made: dict[tuple[str, int], list[np.ndarray]] = field(default_factory=dict)

    def draws(self, group: str, labels: np.ndarray) -> list[np.ndarray]:
        if group in self.given:
            return self.given[group]
        key = (group, len(labels))
        if key not in self.made:
            size = None if labels.ndim == 2 else self.draw_size  # multilabel: scored whole
            self.made[key] = evaluation_draws(
                group, len(labels), size, self.repetitions, self.seed, self.policy
            )
        return self.made[key]


def evaluate_groups(
    models: Sequence[EvaluatedModel],
    draw_size: int | None,
    repetitions: int,
    seed: int,
    policy: SizePolicy = "error",
    *,
    groups: Sequence[str] | None = None,
    threshold: float = 0.5,
    progress: bool = True,
    draws: Mapping[str, list[np.ndarray]] | None = None,
) -> pd.DataFrame:
    """Per-model, per-group metrics over repeated equal-size draws.

    Binary groups: ``repetitions`` draws of ``draw_size`` texts without replacement (the same
    draws for every model with the same group size). Multilabel groups (``(n, C)`` labels) are
    evaluated whole, as repetition 0.

    Args:
        models: trained models with ``name``, ``seed``, ``fold`` and per-group ``predictions``
            and ``labels`` (e.g. :class:`regbias.performance.folds.FoldModel`).
        draw_size: texts per draw; ``None`` evaluates every group whole.
        repetitions: number of draws per group.
        seed: seed of the draws.
        policy: for a group smaller than ``draw_size``: ``error`` raises
            :class:`SampleSizeError`; ``all`` evaluates the whole group once, with a warning.
        groups: groups to evaluate, in display order (default: the first model's groups).
        threshold: probability threshold.
        progress: show a progress bar over models x groups.
        draws: index sets per group, made in advance with :func:`evaluation_draws` (positions
            in the models' predictions for that group); groups not named here are drawn here.

    Returns:
        Long table ``model, seed, fold, group, repetition, metric, value, n_texts`` where
        ``n_texts`` is the number of texts each value was measured on.

    Raises:
        SampleSizeError: an undersized group under policy ``error``.
        ConfigError: an unknown policy, non-positive sizes or a group a model lacks.
        DataError: labels outside {0, 1}.
    """
    if policy not in ("error", "all"):
        raise ConfigError(f"small-group policy must be 'error' or 'all', not {policy!r}")
    if repetitions < 1 or (draw_size is not None and draw_size < 1):
        raise ConfigError("repetitions and draw_size must be positive")
    groups = list(groups) if groups is not None else list(models[0].predictions) if models else []
    rows: list[tuple] = []
    book = _DrawBook(draw_size, repetitions, seed, policy, dict(draws or {}))
    with tqdm(total=len(models) * len(groups), desc="evaluate", disable=not progress) as bar:
        for model in models:
            for group in groups:
                if group not in model.predictions or group not in model.labels:
                    raise ConfigError(f"model {model.name} has no predictions for group {group!r}")
                labels = np.asarray(model.labels[group])
                probs = np.asarray(model.predictions[group])
                for repetition, index in enumerate(book.draws(group, labels)):
                    drawn = labels[index], probs[index]
                    rows.extend(metric_rows(model, group, repetition, *drawn, threshold))
                bar.update()
    return pd.DataFrame(rows, columns=list(COLUMNS))


def summarise(per_model: pd.DataFrame) -> pd.DataFrame:
    """Mean over repetitions per model, group and metric.

    Returns:
        ``model, seed, fold, group, metric, value`` (+ ``n_texts`` when present), groups and
        metrics in their order of appearance. NaN values (e.g. an undefined AUC) are skipped.
    """
    aggregations = {"value": ("value", "mean")}
    if "n_texts" in per_model:
        aggregations["n_texts"] = ("n_texts", "max")
    return per_model.groupby(KEYS, sort=False).agg(**aggregations).reset_index()


def _group_order(summary: pd.DataFrame, groups: Sequence[str] | None) -> list[str]:
    return list(groups) if groups is not None else list(pd.unique(summary["group"]))


def performance_gaps(summary: pd.DataFrame, groups: Sequence[str] | None = None) -> pd.DataFrame:
    """Performance gap of every pair of groups: |mean over models m(A) - mean over models m(B)|.

    ``summary`` is :func:`summarise`'s (one job's models or a sweep's); pairs follow ``groups``
    (default: order of appearance).

    Returns:
        ``group_a, group_b, metric, gap``.
    """
    order = _group_order(summary, groups)
    means = summary.groupby(["metric", "group"], sort=False)["value"].mean()
    rows = []
    for metric in pd.unique(summary["metric"]):
        by_group = means.loc[metric]
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                gap = abs(by_group.get(a, np.nan) - by_group.get(b, np.nan))
                rows.append((a, b, metric, float(gap)))
    return pd.DataFrame(rows, columns=["group_a", "group_b", "metric", "gap"])


def _pair_dcor(x: np.ndarray, y: np.ndarray, label: str) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        warnings.warn(
            f"distance correlation of {label} is undefined ({len(x)} models, or a constant "
            "vector): NaN",
            RuntimeWarning,
            stacklevel=3,
        )
        return float("nan")
    import dcor  # imported here: its numba start-up costs seconds that other users need not pay

    return float(dcor.distance_correlation(x, y))


def performance_dcor(summary: pd.DataFrame, groups: Sequence[str] | None = None) -> pd.DataFrame:
    """Performance dependence of every pair of groups: dcor of their per-model metric vectors.

    ``summary`` and ``groups`` as in :func:`performance_gaps`.

    Models are aligned by ``(seed, fold)``; models with a NaN for either group are left out.

    Returns:
        ``group_a, group_b, metric, dcor`` (distance correlation, not squared; NaN with a
        warning when fewer than 2 models remain or a vector is constant).
    """
    order = _group_order(summary, groups)
    rows = []
    for metric in pd.unique(summary["metric"]):
        table = summary[summary["metric"] == metric]
        wide = table.groupby(["seed", "fold", "group"])["value"].mean().unstack("group")
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                if a not in wide or b not in wide:
                    pair = pd.DataFrame(columns=[a, b], dtype=float)
                else:
                    pair = wide[[a, b]].dropna()
                x, y = pair[a].to_numpy(float), pair[b].to_numpy(float)
                rows.append((a, b, metric, _pair_dcor(x, y, f"{metric} {a}-{b}")))
    return pd.DataFrame(rows, columns=["group_a", "group_b", "metric", "dcor"])
