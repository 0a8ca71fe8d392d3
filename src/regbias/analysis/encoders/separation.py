"""Two encoders on the same texts: how far apart each puts the groups, and their difference.

The separation ``delta^2 = |mu_a - mu_b|^2 / ((tr Sigma_a + tr Sigma_b) / 2)``, its numerator
the U-statistic ``|xbar_a - xbar_b|^2 - tr S_a / n_a - tr S_b / n_b``; one bootstrap of every
group's texts for every pair and encoder gives the paired difference its re-centred interval
and p (docs/method.md, "Comparing encoders on the same texts").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.analysis.multiplicity import adjust_p
from regbias.analysis.pairs.embedding import EmbeddingTestSettings
from regbias.analysis.pairs.pairwise import P_ADJUSTED, PRIMARY_FAMILY, holm_per_family
from regbias.data.sampling import rng_for
from regbias.interrupt import check_stop

#: A difference at most this share of the larger separation (in size) is a tie: p = 1.
TIE = 1e-9


@dataclass(frozen=True)
class ContrastPair:
    """One pair as the contrast sees it: its sides as indices into each group's texts."""

    group_a: str
    group_b: str
    family: str
    side_a: np.ndarray
    side_b: np.ndarray


def contrast_pairs(
    groups: Mapping[str, Sequence[str]], settings: EmbeddingTestSettings, references: Sequence[str]
) -> tuple[dict[str, list[str]], list[ContrastPair]]:
    """The test of record's pairs (:func:`plan_pairs`: caps, shared texts left out), as indices.

    A group's texts are every text it brings to any of its pairs, in the group's order, so one
    bootstrap weight per text serves every pair the text is in.

    Returns:
        Each group's texts (groups in no testable pair left out), and every testable pair in
        the groups' order.
    """
    plans = [plan for plan in settings.plans(groups, references) if plan.testable]
    used: dict[str, set[str]] = {name: set() for name in groups}
    for plan in plans:
        used[plan.group_a].update(plan.side_a)
        used[plan.group_b].update(plan.side_b)
    texts = {
        name: [t for t in dict.fromkeys(groups[name]) if t in used[name]]
        for name in groups
        if used[name]
    }
    where = {g: {t: i for i, t in enumerate(kept)} for g, kept in texts.items()}
    pairs = []
    for plan in plans:
        side_a = np.array([where[plan.group_a][t] for t in plan.side_a], dtype=np.int64)
        side_b = np.array([where[plan.group_b][t] for t in plan.side_b], dtype=np.int64)
        pairs.append(ContrastPair(plan.group_a, plan.group_b, plan.family, side_a, side_b))
    return texts, pairs


def _side_moments(
    x: np.ndarray, squares: np.ndarray, weights: np.ndarray, totals: tuple, side: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted count, sum and sum of squared norms of a side: the group's minus the rest."""
    count, total, square = totals
    if len(side) == len(x):
        return count, total, square
    rest = np.setdiff1d(np.arange(len(x)), side)
    w = weights[:, rest]
    return count - w.sum(axis=1), total - w @ x[rest], square - w @ squares[rest]


def separation_replicates(
    vectors: Mapping[str, np.ndarray],
    pairs: Sequence[ContrastPair],
    weights: Mapping[str, np.ndarray],
) -> np.ndarray:
    """``(B, n_pairs)`` separations ``delta^2`` (the module) under ``B`` text weightings.

    Args:
        vectors: each group's ``(n_g, d)`` vectors, in its capped texts' order.
        pairs: the pairs (:func:`contrast_pairs`).
        weights: each group's ``(B, n_g)`` text weights (bootstrap counts; ones: the sample).
    """
    centre = np.concatenate([np.asarray(v, dtype=np.float64) for v in vectors.values()]).mean(0)
    moments: dict[str, tuple] = {}
    for name, raw in vectors.items():
        x = np.asarray(raw, dtype=np.float64) - centre
        squares = np.einsum("ij,ij->i", x, x)
        w = np.asarray(weights[name], dtype=np.float64)
        moments[name] = (x, squares, w, (w.sum(axis=1), w @ x, w @ squares))
    out = np.empty((len(next(iter(weights.values()))), len(pairs)))
    for j, pair in enumerate(pairs):
        stats = []
        for group, side in ((pair.group_a, pair.side_a), (pair.group_b, pair.side_b)):
            x, squares, w, totals = moments[group]
            n, total, square = _side_moments(x, squares, w, totals, side)
            mean = total / n[:, None]
            spread = (square - np.einsum("bd,bd->b", total, mean)) / (n - 1)
            stats.append((n, mean, spread))
        (n_a, mean_a, var_a), (n_b, mean_b, var_b) = stats
        gap = mean_a - mean_b
        numerator = np.einsum("bd,bd->b", gap, gap) - var_a / n_a - var_b / n_b
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j] = numerator / ((var_a + var_b) / 2)
    return out


def bootstrap_p(replicates: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p of ``difference = 0`` per column: twice the smaller tail share.

    ``(1 + #{D* <= 0}) / (1 + B)`` or ``(1 + #{D* >= 0}) / (1 + B)``, doubled, at most 1.
    """
    finite = np.isfinite(replicates)
    b = finite.sum(axis=0)
    low = (1 + np.sum(np.where(finite, replicates <= 0, False), axis=0)) / (1 + b)
    high = (1 + np.sum(np.where(finite, replicates >= 0, False), axis=0)) / (1 + b)
    return np.minimum(1.0, 2 * np.minimum(low, high))


def _recentred(replicates: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """``replicates`` shifted per column so that their finite values' mean is ``estimate``."""
    finite = np.isfinite(replicates)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(finite, replicates, 0).sum(axis=0) / finite.sum(axis=0)
    return replicates - (mean - estimate)


def _tie_p(replicates: np.ndarray, estimate: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """:func:`bootstrap_p` of ``replicates``; 1 where ``|estimate|`` is a tie (:data:`TIE`)."""
    tied = np.abs(estimate) <= TIE * scale
    return np.where(tied, 1.0, bootstrap_p(replicates))


@dataclass(frozen=True)
class EncoderContrast:
    """The separations of two encoders on the same texts, and their paired difference.

    Attributes:
        first: the first encoder's label (``second``: the other's).
        table: one row per pair: ``group_a, group_b, family, n_a, n_b``, ``first`` and
            ``second`` (each encoder's separation), ``difference`` (first minus second),
            ``ci_low, ci_high``, ``p`` (two-sided bootstrap of the re-centred replicates; 1 for
            a tie, :data:`TIE`), ``p_holm`` (within the family) and ``differs``.
        mean: the same over the region pairs' mean (all pairs where there is none):
            ``pairs, first, second, difference, ci_low, ci_high, p``, ``p_adjusted`` (Holm
            over the sweep's encoder pairs) and ``differs``.
        confidence: the intervals' level (``alpha``: the verdicts'; ``n_bootstrap``: B).
    """

    first: str
    second: str
    table: pd.DataFrame
    mean: dict[str, float]
    confidence: float
    alpha: float
    n_bootstrap: int

    def sentence(self) -> str:
        """The answer in words: which encoder separates the groups more, or none shown."""
        m = self.mean
        level = f"{self.confidence:.0%}"
        numbers = (
            f"mean over {int(m['pairs'])} pairs: {m['first']:.3g} against {m['second']:.3g}, "
            f"difference {m['difference']:.3g}, {level} interval {m['ci_low']:.3g} to "
            f"{m['ci_high']:.3g}, adjusted p {m['p_adjusted']:.3g}"
        )
        if not math.isfinite(m["difference"]):
            return f"{self.first} against {self.second}: not comparable ({numbers})"
        if m["differs"]:
            more, less = (
                (self.first, self.second) if m["difference"] > 0 else (self.second, self.first)
            )
            return f"{more} separates the regions more than {less} ({numbers})"
        return f"{self.first} against {self.second}: no difference shown ({numbers})"


def contrast_encoders(
    groups: Mapping[str, Sequence[str]],
    vectors_of: Mapping[str, Callable[[list[str]], np.ndarray]],
    settings: EmbeddingTestSettings,
    *,
    references: Sequence[str] = (),
    n_bootstrap: int = 999,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
) -> list[EncoderContrast]:
    """Every pair of encoders compared on the test of record's texts (the module).

    ``groups`` and ``settings`` (its cap and seed choose the texts) are the test of record's,
    ``vectors_of`` each encoder's sentence vectors of texts by its label, ``n_bootstrap`` the
    replicates B. Returns one contrast per pair of encoders in the labels' order; the mean's
    ``p_adjusted`` is Holm over them.
    """
    capped, pairs = contrast_pairs(groups, settings, references)
    rng = rng_for(seed, "encoder-contrast")
    weights = {
        g: rng.multinomial(len(t), np.full(len(t), 1 / len(t)), n_bootstrap)
        for g, t in capped.items()
    }
    ones = {g: np.ones((1, len(t))) for g, t in capped.items()}
    observed, replicates = {}, {}
    for label, vectors in vectors_of.items():
        embedded = {g: np.asarray(vectors(list(t))) for g, t in capped.items()}
        observed[label] = separation_replicates(embedded, pairs, ones)[0]
        replicates[label] = separation_replicates(embedded, pairs, weights)
        check_stop()
    found = [
        _contrast(first, second, pairs, observed, replicates, confidence, alpha)
        for first, second in itertools.combinations(vectors_of, 2)
    ]
    adjusted: Sequence[float] = (
        adjust_p(np.array([c.mean["p"] for c in found]), "holm").tolist() if found else []
    )
    for contrast, p in zip(found, adjusted, strict=True):
        contrast.mean["p_adjusted"] = float(p)
        contrast.mean["differs"] = float(p <= alpha)
    return found


def _contrast(
    first: str,
    second: str,
    pairs: Sequence[ContrastPair],
    observed: Mapping[str, np.ndarray],
    replicates: Mapping[str, np.ndarray],
    confidence: float,
    alpha: float,
) -> EncoderContrast:
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    estimate = observed[first] - observed[second]
    difference = _recentred(replicates[first] - replicates[second], estimate)
    scale = np.maximum(np.abs(observed[first]), np.abs(observed[second]))
    table = pd.DataFrame(
        [(p.group_a, p.group_b, p.family, len(p.side_a), len(p.side_b)) for p in pairs],
        columns=["group_a", "group_b", "family", "n_a", "n_b"],
    )
    table["first"], table["second"] = observed[first], observed[second]
    table["difference"] = estimate
    low, high = np.nanquantile(difference, tails, axis=0) if len(pairs) else ([], [])
    table["ci_low"], table["ci_high"] = low, high
    table["p"] = _tie_p(difference, estimate, scale)
    every = pd.Series(True, index=table.index)
    table = holm_per_family(table, alpha, every).rename(columns={P_ADJUSTED: "p_holm"})
    regions = (table["family"] == PRIMARY_FAMILY).to_numpy()
    chosen = regions if regions.any() else np.ones(len(table), dtype=bool)
    mean_diff = difference[:, chosen].mean(axis=1)
    mean = {
        "pairs": float(chosen.sum()),
        "first": float(observed[first][chosen].mean()),
        "second": float(observed[second][chosen].mean()),
        "difference": float(estimate[chosen].mean()),
        "ci_low": float(np.nanquantile(mean_diff, tails[0])),
        "ci_high": float(np.nanquantile(mean_diff, tails[1])),
    }
    mean["p"] = float(_tie_p(mean_diff[:, None], estimate[chosen].mean(), scale[chosen].mean())[0])
    mean["p_adjusted"], mean["differs"] = mean["p"], float(mean["p"] <= alpha)
    return EncoderContrast(first, second, table, mean, confidence, alpha, len(mean_diff))
