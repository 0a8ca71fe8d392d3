"""The classifiers' side: how often a rewrite into another variety changes what they predict.

Every model of the sweep scored each changed text three ways: as written, rewritten, and with
the matched control edit (``performance/rewrites.csv``, :func:`regbias.performance.text_scores.
rewrite_table`). Per source group and target variety:

- the **flip rate**: the share of (text, model) predictions the rewrite changes, and the
  control's beside it;
- the **accuracy change**: accuracy on the rewritten texts less that on the originals, and the
  control's;
- each with the two-stage interval of the accuracy intervals (the seeds drawn at Student-t
  weights, then the texts: :func:`~regbias.analysis.pairs.pooled_scores.unit_weights`), refused
  with fewer than :data:`~regbias.analysis.pairs.pooled_scores.MIN_RESAMPLED` seeds;
- a verdict that the rewrite changes accuracy beyond the control: sign flips over texts of each
  text's correctness difference averaged over the models, the rewrite against the text as
  written (two-sided) and against the control (one-sided in the direction of the change, its
  p doubled for choosing it); the verdict needs both (an intersection-union test, its p the
  larger), Holm over the sets. Each part is exact where its two versions are exchangeable for
  every model at once, as the performance test of record relabels whole texts with all their
  models' scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.counterfactual.settings import MIN_CHANGED, CounterfactualSettings
from regbias.analysis.counterfactual.sign_flip import Verdict, holm_rows, sign_flip_p
from regbias.analysis.pairs.pooled_scores import (
    MIN_RESAMPLED,
    draw_counts,
    percentile_interval,
    training_units,
    unit_weights,
)
from regbias.data.sampling import rng_for
from regbias.performance.text_scores import THRESHOLD, model_columns, model_of

#: The three versions of a changed text in ``performance/rewrites.csv``.
VERSIONS = ("original", "variety", "control")


@dataclass(frozen=True)
class Interval:
    """A value with its interval (NaN ends: none)."""

    value: float
    low: float = math.nan
    high: float = math.nan


@dataclass(frozen=True)
class ClassifierFlip:
    """One rewrite set's effect on the classifiers' predictions.

    Attributes:
        source, target: the group rewritten and the variety it is rewritten into.
        texts: changed texts that every version of was scored.
        models: the models that scored them.
        flips, control_flips: the share of predictions the rewrite (the control) changes.
        change, control_change: the accuracy change the rewrite (the control) makes.
        verdict: the rewrite's accuracy change against none (``moved``, two-sided) and against
            the control's in the same direction (``beyond``); its p the larger, Holm over the
            sets.
        note: why there is no test or interval ("" where there is).
    """

    source: str
    target: str
    texts: int
    models: int
    flips: Interval
    control_flips: Interval
    change: Interval
    control_change: Interval
    verdict: Verdict
    note: str = ""

    @property
    def name(self) -> str:
        """``source>target``."""
        return f"{self.source}>{self.target}"


def classifier_flips(
    table: pd.DataFrame,
    settings: CounterfactualSettings,
    *,
    seed: int,
    resamples: int,
    confidence: float,
    alpha: float,
) -> list[ClassifierFlip]:
    """Every rewrite set's flips and accuracy changes (:class:`ClassifierFlip`), in order."""
    models = model_columns(table, "prob")
    rows = []
    for (source, target), part in table.groupby(["group", "target"], sort=False):
        versions = {v: part[part["version"] == v].set_index("key") for v in VERSIONS}
        keys = versions["original"].index
        probs = [versions[v].reindex(keys)[list(models.values())].to_numpy(float) for v in VERSIONS]
        scored = np.isfinite(probs[0]) & np.isfinite(probs[1]) & np.isfinite(probs[2])
        labels = versions["original"]["label"].to_numpy(dtype=np.int64)[:, None]
        rows.append(
            _flip_row(
                str(source),
                str(target),
                probs,
                labels,
                scored,
                list(models),
                settings,
                seed,
                resamples,
                confidence,
            )
        )
    return holm_rows(rows, alpha)


def _flip_row(
    source: str,
    target: str,
    probs: list[np.ndarray],
    labels: np.ndarray,
    scored: np.ndarray,
    models: list[str],
    settings: CounterfactualSettings,
    seed: int,
    resamples: int,
    confidence: float,
) -> ClassifierFlip:
    keep = scored.any(axis=1)
    original, variety, control = (p[keep] > THRESHOLD for p in probs)
    labels, seen = labels[keep], scored[keep]
    correct = [(x == labels.astype(bool)).astype(np.float64) for x in (original, variety, control)]
    values = {
        "flips": (variety != original).astype(np.float64),
        "control_flips": (control != original).astype(np.float64),
        "change": correct[1] - correct[0],
        "control_change": correct[2] - correct[0],
    }
    n = int(keep.sum())
    rng = rng_for(seed, "counterfactual-classifier", source, target)
    units = training_units(np.array([model_of(m)[0] for m in models]))
    note = ""
    if n < MIN_CHANGED:
        note = f"{n} changed texts: too few for a test or an interval (at least {MIN_CHANGED})"
    elif len(np.unique(units)) < MIN_RESAMPLED:
        note = (
            f"no intervals: {len(np.unique(units))} training units are too few to resample "
            f"(at least {MIN_RESAMPLED} seeds)"
        )
    change = beyond = math.nan
    if n >= MIN_CHANGED:
        moved = _per_text(correct[1] - correct[0], seen)
        paired = _per_text(correct[1] - correct[2], seen)
        change, beyond = change_p(moved, paired, settings.relabellings, rng)
    intervals = {k: Interval(_mean(v, seen)) for k, v in values.items()}
    if not note and resamples > 0:
        weights = unit_weights(units, resamples, rng)
        texts = draw_counts(n, resamples, rng)
        for key, v in values.items():
            draws = _replicates(v, seen, weights, texts)
            intervals[key] = Interval(intervals[key].value, *percentile_interval(draws, confidence))
    return ClassifierFlip(
        source, target, n, len(models), **intervals, verdict=Verdict(change, beyond), note=note
    )


def change_p(
    moved: np.ndarray, paired: np.ndarray, relabellings: int, rng: np.random.Generator
) -> tuple[float, float]:
    """The two parts of the verdict: ``moved`` away from 0, and ``paired`` the same way.

    ``moved``: each text's correctness change by the rewrite (averaged over its models);
    ``paired``: the rewrite's correctness less the control's. The second is one-sided in the
    direction of the change, doubled for choosing it. The verdict's p is the larger.
    """
    change = sign_flip_p(moved, relabellings, rng, "two-sided")
    side = sign_flip_p(paired, relabellings, rng, "less" if moved.mean() < 0 else "greater")
    return change, min(1.0, 2 * side)


def _per_text(values: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Each text's value averaged over the models that scored it."""
    return np.where(seen, values, 0.0).sum(axis=1) / np.maximum(seen.sum(axis=1), 1)


def _mean(values: np.ndarray, seen: np.ndarray) -> float:
    return float(_per_text(values, seen).mean()) if len(values) else math.nan


def _replicates(
    values: np.ndarray, seen: np.ndarray, weights: np.ndarray, texts: np.ndarray
) -> np.ndarray:
    """``(B,)`` the mean in draws of the models (``weights``) and then of the texts."""
    masked = np.where(seen, values, 0.0)
    per_text = (weights @ masked.T) / np.maximum(weights @ seen.T.astype(np.float64), 1e-12)
    return np.einsum("bn,bn->b", texts, per_text) / texts.shape[1]
