"""Bootstrap intervals of a correlation's rho and tau, from every source of measurement noise.

Every replicate resamples the seeds, each with all its models (the same for every metric), each
distance matrix's repetitions and, with per-text scores, the texts within group and label
stratum; the groups are fixed. The intervals are for the measured rho: a replicate carries the
noise twice, so the percentiles of its deviations from the replicates' own mean are moved to the
estimate (:func:`centred`; docs/method.md, "The primary's interval is for the measured rho").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.correlation.table import CORRELATION_KEYS
from regbias.analysis.pair_table import DISTANCE_PREFIX, GAP_PREFIX
from regbias.analysis.pairs.pooled_scores import (
    MIN_RESAMPLED,
    PerfTexts,
    group_metric_replicates,
    percentile_interval,
    training_units,
)
from regbias.analysis.ranks import kendall_rows, spearman_rows
from regbias.console import progress_bar
from regbias.distances.matrix import DistanceMatrix
from regbias.interrupt import check_stop

_SOURCE = {True: "repetitions", False: "models"}
#: The source of a gap column whose texts were resampled too.
_TEXTS_SOURCE = "models+evaluation texts"
#: Why a bare pair table (``task=analyze``) has no interval.
BARE_TABLE = "a bare pair table: task=analyze resamples no models or repetitions"
_NOTHING_RESAMPLED = "one model and one repetition: nothing to resample"


@dataclass(frozen=True)
class Units:
    """A column's resampling units: how many a replicate draws, and what they are."""

    count: int
    #: ``repetition``, ``seed`` (models nested in seeds) or ``model`` (a single seed's folds).
    kind: str

    def __str__(self) -> str:
        return f"{self.count} {self.kind}{'s' * (self.count != 1)}"


def resampling_units(
    table: pd.DataFrame, distances: Mapping[str, DistanceMatrix], per_model: pd.DataFrame | None
) -> dict[str, Units]:
    """The resampling units of each column of ``table`` that has measurements behind it.

    Returns:
        ``dist_<name>``: the matrix's repetitions; ``gap_<metric>``, ``dcor_<metric>``: the
        training units a replicate draws (:func:`training_units`: the seeds, or a single
        seed's models), whose texts, resampled within them, do not count
        (:data:`MIN_RESAMPLED`).
    """
    units = {
        f"{DISTANCE_PREFIX}{name}": Units(
            1 if m.repetitions is None else len(m.repetitions), "repetition"
        )
        for name, m in distances.items()
    }
    if per_model is not None and len(per_model):
        seeds = per_model[["seed", "fold"]].drop_duplicates()["seed"].to_numpy()
        kind = "seed" if len(np.unique(seeds)) > 1 else "model"
        drawn = Units(len(np.unique(training_units(seeds))), kind)
        for metric in pd.unique(per_model["metric"]):
            units |= {f"gap_{metric}": drawn, f"dcor_{metric}": drawn}
    return {c: n for c, n in units.items() if c in table}


def no_interval_note(columns: Sequence[str], units: Mapping[str, Units] | None) -> str:
    """Why a correlation of ``columns`` has no bootstrap interval ("" where it can have one).

    ``units``: :func:`resampling_units` of the table (None: a bare table, nothing measured).
    """
    if units is None:
        return BARE_TABLE
    found = [units.get(c, Units(1, "model")) for c in columns]
    if max(u.count for u in found) >= MIN_RESAMPLED:
        return ""
    if max(u.count for u in found) <= 1:
        return _NOTHING_RESAMPLED
    kinds = " or ".join(dict.fromkeys(f"{u.kind}s" for u in found if u.count > 1))
    said = ", ".join(map(str, found))
    return f"too few {kinds} for an interval ({said}; an interval needs {MIN_RESAMPLED} of one)"


def bootstrap_replicates(
    table: pd.DataFrame,
    distances: Mapping[str, DistanceMatrix],
    per_model: pd.DataFrame | None,
    n_bootstrap: int,
    seed: int,
    texts: PerfTexts | None = None,
) -> dict[str, np.ndarray]:
    """Bootstrap replicates ``(B, n_rows)`` of the pair table's columns that have a noise source.

    A matrix of ``distances`` with at least 2 repetitions gives ``dist_<name>``, the mean of R
    repetitions drawn with replacement (NaN entries skipped); each replicate draws the training
    units of ``per_model`` (:func:`training_units`: seeds, each with its models), the same for
    every metric, for ``gap_*`` and ``dcor_*``; with ``texts`` their metrics' gaps are resampled
    in two stages instead. A column without a noise source is absent (held at its value).
    """
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name, matrix in distances.items():
        column = f"{DISTANCE_PREFIX}{name}"
        stack = matrix.repetitions
        if column in table and stack is not None and len(stack) > 1:
            counts = rng.multinomial(len(stack), np.full(len(stack), 1 / len(stack)), n_bootstrap)
            flat = stack.reshape(len(stack), -1)
            finite = np.isfinite(flat)  # NaN: a repetition left out of that pair's mean
            with np.errstate(invalid="ignore", divide="ignore"):
                means = (counts @ np.where(finite, flat, 0.0)) / (counts @ finite)
            means = means.reshape(-1, *stack.shape[1:])
            out[column] = _pair_values(means, matrix.groups, table)
    if per_model is not None and len(per_model):
        out.update(_performance_replicates(per_model, table, n_bootstrap, rng))
    if texts is not None:
        out.update(_text_gap_replicates(texts, table, n_bootstrap, rng))
    return out


def table_groups(table: pd.DataFrame) -> list[str]:
    """The pair table's groups in order of appearance (``group_a`` first)."""
    return list(dict.fromkeys([*table["group_a"], *table["group_b"]]))


def _text_gap_replicates(
    texts: PerfTexts,
    table: pd.DataFrame,
    n_bootstrap: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Two-stage replicates of the texts' ``gap_<metric>``."""
    columns = [m for m in texts.metrics if f"{GAP_PREFIX}{m}" in table]
    if not columns or len(texts.models) < 2:
        return {}
    groups = table_groups(table)
    metrics = group_metric_replicates(texts, groups, n_bootstrap, rng)
    return {
        f"{GAP_PREFIX}{m}": _pair_values(
            np.abs(metrics[m][:, :, None] - metrics[m][:, None, :]), groups, table
        )
        for m in columns
    }


def _pair_values(matrices: np.ndarray, groups: list[str], table: pd.DataFrame) -> np.ndarray:
    """``(B, n_rows)`` entries of ``(B, K, K)`` matrices at the table's pairs; NaN if unknown."""
    index = {g: i for i, g in enumerate(groups)}
    a = table["group_a"].map(index).to_numpy(dtype=np.float64)
    b = table["group_b"].map(index).to_numpy(dtype=np.float64)
    known = np.isfinite(a) & np.isfinite(b)
    out = np.full((len(matrices), len(table)), np.nan)
    ia, ib = a[known].astype(np.int64), b[known].astype(np.int64)
    out[:, known] = matrices[:, ia, ib]
    return out


def _performance_replicates(
    per_model: pd.DataFrame, table: pd.DataFrame, n_bootstrap: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    # One row per model (seed, fold), one column per (metric, group): the mean over draws.
    wide = per_model.pivot_table(
        index=["seed", "fold"], columns=["metric", "group"], values="value", aggfunc="mean"
    )
    unit = training_units(wide.index.get_level_values("seed").to_numpy())
    k = unit.max() + 1 if len(unit) else 0
    if k < 2:
        return {}
    # The training units (seeds) drawn with replacement, each carrying all its models.
    weights = rng.multinomial(k, np.full(k, 1 / k), n_bootstrap)[:, unit].astype(np.float64)
    out = {}
    for metric in pd.unique(per_model["metric"]):
        values = wide[metric]
        groups = [str(g) for g in values.columns]
        matrix = values.to_numpy(dtype=np.float64)
        finite = np.isfinite(matrix)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (weights @ np.where(finite, matrix, 0.0)) / (weights @ finite)
        if f"gap_{metric}" in table:
            gaps = np.abs(means[:, :, None] - means[:, None, :])
            out[f"gap_{metric}"] = _pair_values(gaps, groups, table)
        if f"dcor_{metric}" in table and finite.all():  # else dcor drops models per pair: fixed
            out[f"dcor_{metric}"] = _pair_values(weighted_dcor(matrix, weights), groups, table)
    return out


def weighted_dcor(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(B, G, G)`` distance correlation of every pair of columns, per row of model weights.

    ``values``: ``(n_models, G)`` one metric per model and group; ``weights``: ``(B, n_models)``.
    Integer weights (bootstrap counts) give the V-statistic dcor of the resampled models, as
    ``dcor.distance_correlation`` computes it. Not squared; NaN where a group is constant.
    """
    n, g = values.shape
    a = np.abs(values.T[:, :, None] - values.T[:, None, :]).reshape(g, n * n)  # (G, n*n)
    total = weights.sum(axis=1)  # W
    # Double-centring is linear, so sum_ij w_i w_j A^g_ij a^h_ij expands to S - 2 W T + W^2 m m.
    row = np.einsum("bj,gij->bgi", weights, a.reshape(g, n, n)) / total[:, None, None]
    grand = np.einsum("bgi,bi->bg", row, weights) / total[:, None]
    pair_weights = (weights[:, :, None] * weights[:, None, :]).reshape(len(weights), n * n)
    products = (a[:, None, :] * a[None, :, :]).reshape(g * g, n * n)
    s = (pair_weights @ products.T).reshape(-1, g, g)
    t = np.einsum("bi,bgi,bhi->bgh", weights, row, row)
    w = total[:, None, None]
    dcov2 = (s - 2 * w * t) / w**2 + grand[:, :, None] * grand[:, None, :]
    dcov2 = np.maximum(dcov2, 0.0)  # rounding below zero where the true value is 0
    variance = np.diagonal(dcov2, axis1=1, axis2=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.sqrt(variance[:, :, None] * variance[:, None, :])
        return np.where(scale > 0, np.sqrt(dcov2 / scale), np.nan)


def bootstrap_intervals(
    table: pd.DataFrame,
    found: pd.DataFrame,
    replicates: Mapping[str, np.ndarray],
    confidence: float,
    units: Mapping[str, Units] | None = None,
    texts: PerfTexts | None = None,
) -> pd.DataFrame:
    """Intervals of Spearman's rho and Kendall's tau-b for the measured rho (:func:`centred`).

    Per row of the correlation table ``found``, from :func:`bootstrap_replicates` of ``table``
    (a column absent there is held at its value); ``units``: :func:`resampling_units` (None:
    every resampled column counts); ``texts`` name the gaps' source.

    Returns:
        One row per correlation: ``bootstrap_sources`` (the resampled columns' kinds),
        ``bootstrap_note`` (why there is no interval, "" where there is one) and
        ``spearman_ci_low, spearman_ci_high, kendall_ci_low, kendall_ci_high``.
    """
    rows = []
    pairs = found[CORRELATION_KEYS].itertuples(index=False)
    for distance, performance in progress_bar(pairs, total=len(found), desc="bootstrap intervals"):
        check_stop()  # a safe point between correlations
        kept = table[[distance, performance]].notna().all(axis=1).to_numpy()
        sources = [_source(c, texts) for c in (distance, performance) if c in replicates]
        row = {"distance": distance, "performance": performance}
        row["bootstrap_sources"] = "+".join(sources)
        note = "" if units is None else no_interval_note((distance, performance), units)
        row["bootstrap_note"] = note = _unresampled(note, bool(sources), kept)
        x, y = (_replicates_of(table, c, replicates, kept) for c in (distance, performance))
        observed = [_replicates_of(table, c, {}, kept) for c in (distance, performance)]
        for name, statistic in (("spearman", spearman_rows), ("kendall", kendall_rows)):
            low = high = np.nan
            if not note:
                estimate = float(statistic(*observed)[0])
                low, high = centred_interval(statistic(x, y), estimate, confidence)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = low, high
        rows.append(row)
    return pd.DataFrame(rows)


def _unresampled(note: str, resampled: bool, kept: np.ndarray) -> str:
    """``note``, or why an interval still cannot be made ("" where it can)."""
    if note or not resampled:
        return note or _NOTHING_RESAMPLED
    return "fewer than 3 pairs with both values" if kept.sum() < 3 else ""


def _source(column: str, texts: PerfTexts | None) -> str:
    if texts is not None and column in {f"{GAP_PREFIX}{m}" for m in texts.metrics}:
        return _TEXTS_SOURCE
    return _SOURCE[column.startswith(DISTANCE_PREFIX)]


def _replicates_of(
    table: pd.DataFrame, column: str, replicates: Mapping[str, np.ndarray], kept: np.ndarray
) -> np.ndarray:
    if column in replicates:
        return replicates[column][:, kept]
    return table[column].to_numpy(dtype=np.float64)[kept][None, :]


def centred(values: np.ndarray, estimate: float) -> np.ndarray:
    """Bootstrap ``values`` moved to centre on ``estimate``: ``estimate + (values - mean(values))``.

    A replicate adds the noise a second time, so the replicates' rhos centre below the estimate
    (further towards 0); their deviations from their own mean stand for the estimate's about
    the measured rho it estimates. Percentiles of the moved values are the interval (a
    percentile bootstrap, its bias from the second helping of noise removed), which holds the
    estimate; a two-sided bootstrap p of them is its test. They are not reflected (the basic
    bootstrap): a rho's skew follows its level, so reflecting it turns the skew the wrong way
    (docs/method.md, "Performance gaps").
    """
    with np.errstate(invalid="ignore"):
        return estimate + (values - np.nanmean(values))


def centred_interval(
    values: np.ndarray, estimate: float, confidence: float, bound: float = 1.0
) -> tuple[float, float]:
    """The interval at ``confidence`` for the measured rho (:func:`centred`).

    Within ``[-bound, bound]``: 1 for a rho, 2 for a difference of two.
    """
    if not np.isfinite(values).any() or not np.isfinite(estimate):
        return np.nan, np.nan
    low, high = percentile_interval(centred(values, estimate), confidence)
    return max(low, -bound), min(high, bound)


@dataclass(frozen=True)
class RhoReplicates:
    """One correlation's rho over a set of pairs, bootstrapped.

    Attributes:
        estimate: the rho of the pairs as measured.
        values: ``(B,)`` the replicates' rho.
        note: why there is no interval ("" where there is one; ``values`` are NaN then).
    """

    estimate: float
    values: np.ndarray
    note: str = ""

    def interval(self, confidence: float) -> tuple[float, float]:
        """The interval at ``confidence`` for the measured rho (:func:`centred_interval`)."""
        if self.note:
            return np.nan, np.nan
        return centred_interval(self.values, self.estimate, confidence)


def rho_replicates(
    table: pd.DataFrame,
    correlation: tuple[str, str],
    groups: Sequence[str],
    distances: Mapping[str, DistanceMatrix],
    per_model: pd.DataFrame | None,
    *,
    n_bootstrap: int,
    seed: int,
    texts: PerfTexts | None = None,
) -> RhoReplicates:
    """Rho's replicates of a ``(distance, performance)`` correlation over the pairs of ``groups``.

    The primary's interval: the same pairs as its rho (the regions'), not the all-groups row of
    the correlation table. ``distances``' repetitions, ``per_model``'s models and ``texts`` are
    resampled; two calls with the same seed on evidence of the same shapes draw the same
    resamples, so their replicates pair up row by row.
    """
    within = table["group_a"].isin(groups) & table["group_b"].isin(groups)
    pairs = table.loc[within, ["group_a", "group_b", *correlation]].reset_index(drop=True)
    name = correlation[0].removeprefix(DISTANCE_PREFIX)
    matrices = {name: distances[name]} if name in distances else {}
    replicates = bootstrap_replicates(pairs, matrices, per_model, n_bootstrap, seed, texts)
    kept = pairs[list(correlation)].notna().all(axis=1).to_numpy()
    x, y = (pairs[c].to_numpy(dtype=np.float64)[kept][None] for c in correlation)
    estimate = float(spearman_rows(x, y)[0]) if kept.sum() else np.nan
    resampled = any(c in replicates for c in correlation)
    units = resampling_units(pairs, matrices, per_model)
    note = _unresampled(no_interval_note(correlation, units), resampled, kept)
    if not (note or np.isfinite(estimate)):
        note = "the rho is undefined"
    if note:
        return RhoReplicates(estimate, np.full(n_bootstrap, np.nan), note)
    x, y = (_replicates_of(pairs, c, replicates, kept) for c in correlation)
    return RhoReplicates(estimate, spearman_rows(x, y))
