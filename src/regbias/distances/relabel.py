"""Joint relabellings of two groups' drawn texts: the null distribution of every pair test.

A pair test asks whether two groups' texts are exchangeable. Its statistic is the sweep's
estimate of the pair's distance, the mean over every repetition of every job. Repetitions are
not independent (a small group's matched pool is all of its texts in every repetition), so
relabelling each repetition on its own would give a null that is too narrow. Instead the
exchangeable units are corpus texts and one relabelling is applied to all repetitions at once:

- relabelling ``k`` gives every corpus text a key ``u_k(text)`` in [0, 1), a hash of the text,
  a sweep-level seed and ``k`` (:func:`text_keys`): the same text has the same key in every
  repetition of every job, wherever it was drawn;
- a drawn item (a tweet, a passage, a document) takes the mean key of the texts it joins
  (:func:`unit_keys`); in each repetition the items of both groups are pooled and the ``n_a``
  with the smallest keys form side ``a`` (:func:`side_masks`), so within one repetition the
  split is uniform over all splits of the pooled items;
- the ``k``-th null statistic is the mean over the repetitions of the relabelled distances, and
  ``p = (1 + #{T*_k >= T}) / (1 + K)`` (:func:`joint_p_values`). A relabelled value that is
  not finite (a solve that failed) counts as at least as extreme: the test stays conservative.

Jobs add up their sums (:class:`NullSums`), so a sweep's test pools its jobs exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "NullSums",
    "RELATIVE_TIE_TOLERANCE",
    "joint_p_values",
    "repetition_keys",
    "side_masks",
    "text_keys",
    "unit_keys",
]

#: Relabelled statistics within this relative distance below the observed one count as ties
#: (at least as extreme): float rounding must not turn a tie into a smaller p.
RELATIVE_TIE_TOLERANCE = 1e-12

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _text_hashes(texts: Sequence[str]) -> np.ndarray:
    digests = [hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest() for t in texts]
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64)


def _splitmix64(values: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, elementwise on uint64 (wraps as the algorithm intends)."""
    with np.errstate(over="ignore"):
        z = (values + np.uint64(0x9E3779B97F4A7C15)) & _MASK
        z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
        z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
        return z ^ (z >> np.uint64(31))


def text_keys(texts: Sequence[str], seed: int, n_relabellings: int) -> np.ndarray:
    """``(n_relabellings, len(texts))`` keys in [0, 1): one row per relabelling.

    A key depends only on the text, ``seed`` and the row, never on where the text was drawn,
    so every repetition and job of a sweep relabels a text the same way.
    """
    hashes = _text_hashes(texts)
    base = _splitmix64(
        np.array([seed % (1 << 64)], dtype=np.uint64) ^ np.uint64(0x5EED5EED5EED5EED)
    )
    rows = np.arange(n_relabellings, dtype=np.uint64)[:, None]
    with np.errstate(over="ignore"):
        mixed = _splitmix64(_splitmix64(hashes[None, :] ^ base) + rows * np.uint64(0x632BE5AB))
    return (mixed >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def unit_keys(units: Sequence[tuple[str, ...]], seed: int, n_relabellings: int) -> np.ndarray:
    """``(n_relabellings, len(units))`` keys of drawn items: the mean key of their texts.

    Items of one draw share no text, so their keys are independent and exchangeable; an item
    that shares texts with an item of another repetition gets a correlated key, so the two
    tend to fall on the same side, as they would under a relabelling of the texts themselves.
    """
    lengths = np.array([len(u) for u in units], dtype=np.int64)
    if len(units) == 0:
        return np.zeros((n_relabellings, 0))
    if np.any(lengths == 0):
        raise ValueError("a drawn item joins no text")
    keys = text_keys([t for unit in units for t in unit], seed, n_relabellings)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.add.reduceat(keys, starts, axis=1) / lengths


def repetition_keys(
    sizes: dict[str, int],
    units: dict[str, list[tuple[str, ...]]] | None,
    repetition: int,
    seed: int,
    n_relabellings: int,
) -> dict[str, np.ndarray]:
    """Per group, the ``(n_relabellings, n)`` keys of one repetition's drawn items.

    Args:
        sizes: items per group in the repetition, in draw order.
        units: the corpus texts each item joins; None treats every item as a text of its own,
            new in every repetition (callers without corpus texts: tests, bare arrays).
        repetition: the repetition's index (names the items when ``units`` is None).
        seed: the sweep-level seed.
        n_relabellings: relabellings ``K``.

    Raises:
        ValueError: ``units`` names another number of items than ``sizes``.
    """
    keys = {}
    for group, n in sizes.items():
        named = (
            [(f"{repetition}/{group}/{i}",) for i in range(n)] if units is None else units[group]
        )
        if len(named) != n:
            raise ValueError(f"group {group!r}: {len(named)} units for {n} drawn items")
        keys[group] = unit_keys(named, seed, n_relabellings)
    return keys


def side_masks(keys_a: np.ndarray, keys_b: np.ndarray) -> np.ndarray:
    """``(K, n_a + n_b)`` booleans, True for the items relabelled into side ``a``.

    Items are ``a``'s then ``b``'s, as in the pooled order; in each row the ``n_a`` items with
    the smallest keys form side ``a`` (ties broken by position).
    """
    pooled = np.concatenate([keys_a, keys_b], axis=1)
    order = np.argsort(pooled, axis=1, kind="stable")
    masks = np.zeros(pooled.shape, dtype=bool)
    np.put_along_axis(masks, order[:, : keys_a.shape[1]], True, axis=1)
    return masks


@dataclass
class NullSums:
    """Relabelled statistics of one distance summed over the repetitions they cover.

    Attributes:
        sums: ``(K, G, G)``, entry ``[k, i, j]`` the sum over the counted repetitions of the
            ``k``-th relabelled distance of groups ``i`` and ``j`` (NaN: some relabelled value
            was not finite; it counts as extreme).
    """

    sums: np.ndarray

    @classmethod
    def zeros(cls, n_relabellings: int, n_groups: int) -> NullSums:
        """Empty sums for ``n_relabellings`` relabellings of ``n_groups`` groups."""
        return cls(np.zeros((n_relabellings, n_groups, n_groups)))

    def add(self, i: int, j: int, values: np.ndarray) -> None:
        """Add one repetition's ``(K,)`` relabelled values of the pair ``(i, j)``."""
        values = np.where(np.isfinite(values), values, np.nan)
        self.sums[:, i, j] += values
        self.sums[:, j, i] = self.sums[:, i, j]


def joint_p_values(repetitions: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Permutation p per pair of the mean over repetitions against the joint relabellings.

    Args:
        repetitions: ``(R, G, G)`` observed per-repetition distances, NaN where a repetition is
            left out of a pair's mean.
        null: ``(K, G, G)`` sums of the relabelled distances over the same repetitions.

    Returns:
        ``(G, G)`` p-values ``(1 + #{T*_k >= T}) / (1 + K)``; NaN on the diagonal and where a
        pair has no counted repetition.
    """
    counts = np.isfinite(repetitions).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.nansum(repetitions, axis=0) / counts
        relabelled = null / counts
        below = relabelled < observed - RELATIVE_TIE_TOLERANCE * np.abs(observed)
    extreme = (~below).sum(axis=0)  # NaN compares False: a failed relabelling is extreme
    p = (1 + extreme) / (1 + null.shape[0])
    p = np.where(counts > 0, p, np.nan)
    np.fill_diagonal(p, np.nan)
    return p
