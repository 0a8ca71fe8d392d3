"""Energy distance between groups' token clouds, with its floors.

The energy distance of two point clouds (Szekely and Rizzo 2004) is

    E(x, y) = 2 mean |x_i - y_j| - mean |x_i - x_j| - mean |y_i - y_j|

(V-statistics: every point paired with every point, itself included, as ``dcor``'s
``energy_distance`` computes it). It is the large-epsilon end of the Sinkhorn divergence
family of cost ``|x - y|`` (Feydy et al. 2019); the distances are summed block by block, one
block per pair of drawn texts, so every pair of a repetition is one quadratic form of the
pooled blocks. The clouds are the Sinkhorn clouds (every token vector of
a drawn text, uniform weights), so a pair's energy and Sinkhorn distances measure the same
draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from regbias.console import progress_bar as tqdm
from regbias.distances.matrix import DistanceMatrix, mean_sd
from regbias.distances.plugin import Distance, DistanceInputs, DistanceSuiteResult, timed_step
from regbias.interrupt import check_stop

# Rows of the point-distance matrix computed at a time (memory: rows x all points, float64).
_ROWS = 1024


def block_sums(texts: Sequence[np.ndarray]) -> np.ndarray:
    """``(m, m)`` sums of Euclidean distances between the points of every two texts.

    Entry ``[u, v]`` is ``sum over points p of texts[u] and q of texts[v] of |p - q|``. The
    points are centred and their Gram products taken in float32 (the distances' relative
    error stays near 1e-6; the sums accumulate in float64), in row chunks of :data:`_ROWS`
    points against the points at or after them: memory stays bounded and the symmetric half
    is not computed twice.
    """
    points, starts = _stacked(texts)
    points = (points - points.mean(axis=0)).astype(np.float32)
    norms = np.einsum("ij,ij->i", points, points)
    owner = np.repeat(np.arange(len(texts)), np.diff(np.append(starts, len(points))))
    sums = np.zeros((len(texts), len(texts)))
    for start in range(0, len(points), _ROWS):
        chunk, rest = points[start : start + _ROWS], points[start:]
        squared = norms[start : start + _ROWS, None] + norms[None, start:] - 2.0 * (chunk @ rest.T)
        distances = np.sqrt(np.maximum(squared, 0.0), dtype=np.float32)
        # The chunk's own square holds each pair twice: keep its upper triangle only.
        distances[:, : len(chunk)] = np.triu(distances[:, : len(chunk)], 1)
        first = owner[start]
        cuts = np.searchsorted(owner[start:], np.arange(first, len(texts)))
        by_text = np.add.reduceat(distances, cuts, axis=1, dtype=np.float64)
        rows = owner[start : start + len(chunk)]
        np.add.at(sums, (rows,), np.pad(by_text, ((0, 0), (first, 0))))
        check_stop()  # a safe point between chunks
    return sums + sums.T


def _stacked(texts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """All points in one float64 array and the row where each text starts."""
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    if len(texts) == 0 or np.any(lengths == 0):
        raise ValueError("every text of an energy distance needs at least one point")
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.concatenate([np.asarray(t, dtype=np.float64) for t in texts]), starts


def energy_from_blocks(blocks: np.ndarray, counts: np.ndarray, first: int) -> float:
    """Energy distance between the first ``first`` texts behind ``blocks`` and the others.

    Args:
        blocks: ``(m, m)`` block sums of the pooled texts (:func:`block_sums`).
        counts: ``(m,)`` points per text.
        first: how many of the texts, in order, make the first cloud.
    """
    s = np.zeros((1, len(counts)))
    s[0, :first] = 1.0
    n_a = s @ counts
    n_b = counts.sum() - n_a
    row = s @ blocks
    within_a = np.einsum("km,km->k", row, s)
    cross = row.sum(axis=1) - within_a
    within_b = blocks.sum() - 2.0 * cross - within_a
    return float((2.0 * cross / (n_a * n_b) - within_a / n_a**2 - within_b / n_b**2)[0])


def energy_distance(x: Sequence[np.ndarray], y: Sequence[np.ndarray]) -> float:
    """The energy distance of two clouds given as lists of texts' token vectors."""
    pooled = [*x, *y]
    counts = np.array([len(t) for t in pooled], dtype=np.float64)
    return energy_from_blocks(block_sums(pooled), counts, len(x))


def _pair_positions(sizes: list[int], a: int, b: int) -> np.ndarray:
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return np.concatenate(
        [np.arange(starts[a], starts[a + 1]), np.arange(starts[b], starts[b + 1])]
    )


def _repetition(texts: dict[str, list[np.ndarray]]) -> np.ndarray:
    """One repetition's ``(G, G)`` energy distances."""
    groups = list(texts)
    pooled = [t for g in groups for t in texts[g]]
    blocks = block_sums(pooled)
    counts = np.array([len(t) for t in pooled], dtype=np.float64)
    sizes = [len(texts[g]) for g in groups]
    values = np.zeros((len(groups), len(groups)))
    for a in range(len(groups)):
        for b in range(a + 1, len(groups)):
            where = _pair_positions(sizes, a, b)
            energy = energy_from_blocks(blocks[np.ix_(where, where)], counts[where], sizes[a])
            values[a, b] = values[b, a] = energy
    return values


def _floors(
    main: list[dict[str, list[np.ndarray]]], twins: list[dict[str, list[np.ndarray]]]
) -> tuple[np.ndarray, np.ndarray]:
    """Per group, mean and sd over repetitions of the main-vs-twin energy distance."""
    pairs = zip(main, twins, strict=True)
    return mean_sd(
        np.array([[energy_distance(rep[g], twin[g]) for g in rep] for rep, twin in pairs])
    )


def energy_matrix(
    texts: list[dict[str, list[np.ndarray]]],
    *,
    name: str = "energy",
    twins: list[dict[str, list[np.ndarray]]] | None = None,
    progress: bool = True,
) -> DistanceMatrix:
    """Energy distance between every pair of groups' token clouds, over repetitions.

    ``texts[r][group]`` holds one ``(n_tokens, d)`` array per drawn text; ``twins`` (disjoint draws
    of the same sizes) give the noise floors.
    """
    groups = list(texts[0])
    values = []
    with tqdm(total=len(texts), desc=name, disable=not progress) as bar:
        for r, rep in enumerate(texts):
            if list(rep) != groups:
                raise ValueError(f"repetition {r} has groups {list(rep)}, expected {groups}")
            values.append(_repetition(rep))
            bar.update()
    config = {"statistic": "energy"}
    matrix = DistanceMatrix.from_repetitions(name, groups, np.stack(values), config)
    floor = floor_sd = None
    if twins is not None:
        floor, floor_sd = _floors(texts, twins)
    return replace(matrix, floor=floor, floor_sd=floor_sd)


@dataclass(frozen=True, kw_only=True)
class EnergyDistance(Distance):
    """``distance.energy``: the energy distance of the short and long clouds and of sentences.

    Attributes:
        enabled: compute ``energy_short``, ``energy_long`` and ``energy_sentence`` (where
            ``distance.sentences`` draws sentence vectors).
    """

    prefix = "energy"
    title = "energy distance"
    kinds = ("short", "long", "sentence")

    enabled: bool

    def measure(self, inputs: DistanceInputs) -> DistanceSuiteResult:
        """One matrix per drawn kind, with floors where the draws have twins."""
        result = DistanceSuiteResult()
        for kind in (k for k in self.kinds if k in inputs.kinds()):
            name = self.matrix_name(kind)
            twins = inputs.per_text(kind, twins=True) if inputs.has_twins(kind) else None
            with timed_step(result.timings, name):
                result.matrices[name] = energy_matrix(inputs.per_text(kind), name=name, twins=twins)
        return result
