"""Sequential Monte Carlo p-values: a pair's relabellings stop after ``h`` as extreme as observed.

Besag and Clifford (1991, Biometrika 78, 301-304): draw relabellings one at a time and stop at
the ``h``-th whose statistic is at least as extreme as the observed one; stopped at draw ``L``,
``p = h / L``. A pair that never reaches ``h`` in its ``K`` relabellings gets the usual
``(1 + g) / (1 + K)`` of its ``g`` exceedances. Either way ``P(p <= u) <= u`` under the null at
every value ``p`` can take, so the p-value is as valid as the fixed-``K`` one. A pair far
above the level stops early (at ``p = 0.5``, after about ``2 h`` draws); a pair below
``h / K`` draws every relabelling and its p is the fixed-``K`` one, bit for bit (the draws
are the same stream, only cut). A stopped p is an estimate with ``h`` exceedances: its Monte
Carlo relative standard error is about ``sqrt((1 - p) / h)``, at most ``1 / sqrt(h)``
(:func:`stopping_words` says so beside the relabellings' count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from regbias.errors import ConfigError


@dataclass(frozen=True)
class MonteCarloP:
    """A permutation p-value and how it was reached.

    Attributes:
        p: the p-value.
        drawn: relabellings drawn (``L`` where it stopped, else ``K``).
        exceedances: drawn relabellings at least as extreme as the observed statistic.
        stopped: it stopped at its ``h``-th exceedance (``p = h / L``).
    """

    p: float
    drawn: int
    exceedances: int
    stopped: bool


def sequential_null(
    blocks: Iterable[np.ndarray],
    extreme: Callable[[np.ndarray], np.ndarray],
    relabellings: int,
    stop_after: int | None,
) -> tuple[np.ndarray, MonteCarloP]:
    """The relabelled values drawn, in order, and their p, stopping at ``stop_after`` extremes.

    Args:
        blocks: the relabelled statistics, block by block in draw order (a generator: blocks
            after the stop are never drawn); ``relabellings`` of them in all.
        extreme: which of a block's values are at least as extreme as the observed one.
        relabellings: ``K``, the most relabellings.
        stop_after: ``h`` (None: never stop, every relabelling).

    Returns:
        The values drawn up to the stop (its ``h``-th extreme one included) and their p.
    """
    kept: list[np.ndarray] = []
    found = 0
    for block in blocks:
        hits = np.asarray(extreme(block), dtype=bool)
        if stop_after is not None and found + int(hits.sum()) >= stop_after:
            cut = int(np.flatnonzero(hits)[stop_after - found - 1]) + 1
            kept.append(block[:cut])
            drawn = sum(len(b) for b in kept)
            return np.concatenate(kept), MonteCarloP(stop_after / drawn, drawn, stop_after, True)
        found += int(hits.sum())
        kept.append(block)
    values = np.concatenate(kept) if kept else np.empty(0)
    return values, MonteCarloP((1 + found) / (1 + relabellings), len(values), found, False)


def check_stop_after(key: str, stop_after: int | None) -> None:
    """Refuse a ``stop_after`` below 1 (None: never stop)."""
    if stop_after is not None and stop_after < 1:
        raise ConfigError(
            f"{key}.stop_after must be >= 1 (or null: every relabelling); got {stop_after}"
        )


def stopping_words(stop_after: int | None) -> str:
    """The stopping rule in words, after the relabellings' count ("" where it never stops)."""
    if stop_after is None:
        return ""
    h, error = stop_after, 1 / math.sqrt(stop_after)
    return (
        f", stopping at {h} as extreme as observed (where it stops, p = {h} / drawn, ~{error:.0%})"
    )
