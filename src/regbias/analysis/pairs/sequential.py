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

A pair far below the level can stop early too (``clear_after``, :func:`clear_point`): one with
none as extreme as observed in its first ``N`` relabellings stops there. Its p and every other
pair's are then the exact null probability of an outcome at least as extreme, in the order
"none in the first ``N``", then fewer exceedances in all ``K``, then a later ``h``-th one
(:func:`ordered_p`): under the null the observed statistic's rank among the ``K + 1`` is
uniform and the exceedances' places a random arrangement, so ``P(p <= u) <= u`` still holds
exactly. A pair that stops clear has ``p = 1 / (N + 1)``; ``N`` is chosen so that this is a
third of the family's smallest Holm threshold, so stopping never costs a pair its verdict at
the level. Any other p moves up by at most the chance that ``N`` draws hold none of its
exceedances: to at least ``1 / (N + 1)``; 0.0014 to 0.00163 at ``N = 999`` of 9,999; 0.01 by
3e-8.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from regbias.errors import ConfigError

#: The fewest relabellings a pair draws before it may stop clear: p = 1/1000 at the coarsest.
CLEAR_AT_LEAST = 999


@dataclass(frozen=True)
class MonteCarloP:
    """A permutation p-value and how it was reached.

    Attributes:
        p: the p-value.
        drawn: relabellings drawn (``L`` where it stopped, else ``K``).
        exceedances: drawn relabellings at least as extreme as the observed statistic.
        stopped: it stopped at its ``h``-th exceedance (``p = h / L``).
        cleared: it stopped with none as extreme in its first ``N`` (``p = 1 / (N + 1)``).
    """

    p: float
    drawn: int
    exceedances: int
    stopped: bool
    cleared: bool = False


def sequential_null(
    blocks: Iterable[np.ndarray],
    extreme: Callable[[np.ndarray], np.ndarray],
    relabellings: int,
    stop_after: int | None,
    clear_after: int | None = None,
) -> tuple[np.ndarray, MonteCarloP]:
    """The relabelled values drawn, in order, and their p, stopping at ``stop_after`` extremes.

    Args:
        blocks: the relabelled statistics, block by block in draw order (a generator: blocks
            after the stop are never drawn); ``relabellings`` of them in all.
        extreme: which of a block's values are at least as extreme as the observed one.
        relabellings: ``K``, the most relabellings.
        stop_after: ``h`` (None: never stop, every relabelling).
        clear_after: ``N``: stop where the first ``N`` hold none as extreme (None: never;
            every p is then :func:`ordered_p`'s).

    Returns:
        The values drawn up to the stop (its ``h``-th extreme one included) and their p.
    """
    kept: list[np.ndarray] = []
    found = drawn = 0
    for block in blocks:
        hits = np.asarray(extreme(block), dtype=bool)
        if clear_after is not None and drawn < clear_after <= drawn + len(block):
            head = clear_after - drawn
            if found + int(hits[:head].sum()) == 0:
                kept.append(block[:head])
                return np.concatenate(kept), MonteCarloP(
                    1 / (clear_after + 1), clear_after, 0, True, True
                )
        if stop_after is not None and found + int(hits.sum()) >= stop_after:
            cut = int(np.flatnonzero(hits)[stop_after - found - 1]) + 1
            kept.append(block[:cut])
            drawn += cut
            p = ordered_p(drawn - 1, stop_after - 1, clear_after)
            return np.concatenate(kept), MonteCarloP(p, drawn, stop_after, True)
        found += int(hits.sum())
        drawn += len(block)
        kept.append(block)
    values = np.concatenate(kept) if kept else np.empty(0)
    p = ordered_p(relabellings, found, clear_after)
    return values, MonteCarloP(p, len(values), found, False)


def ordered_p(drawn: int, at_most: int, clear_after: int | None) -> float:
    """The null chance of ``at_most`` or fewer exceedances in ``drawn`` draws, or none in ``N``.

    Under the null the exceedances among ``m`` draws number ``0..m`` with equal chance and lie
    in a random arrangement, so ``P(G_m <= c) = (c + 1) / (m + 1)`` and, given ``G_m = j``,
    ``P(G_N = 0) = C(m - j, N) / C(m, N)``. ``clear_after`` None (or above ``drawn``): the
    first term alone, Besag and Clifford's ``h / L`` and the fixed-count ``(1 + g) / (1 + K)``.
    """
    m, c = drawn, at_most
    plain = (c + 1) / (m + 1)
    if clear_after is None or clear_after > m:
        return plain
    j = np.arange(c + 1, m - clear_after + 1, dtype=np.float64)
    if not len(j):
        return plain
    log_share = gammaln(m - j + 1) - gammaln(m - j - clear_after + 1)
    log_share += gammaln(m - clear_after + 1) - gammaln(m + 1)
    return min(1.0, plain + float(np.exp(log_share).sum()) / (m + 1))


def clear_point(families: Iterable[str], alpha: float, relabellings: int) -> int | None:
    """``N``: relabellings after which a pair with none as extreme stops (None: it never does).

    ``families``: each tested pair's family. ``N + 1 = ceil(3 m / alpha)`` for ``m`` the
    largest family's tested pairs, so a pair that stops there (``p = 1 / (N + 1)``) is below a
    third of Holm's smallest threshold ``alpha / m``; and at least 999, so no p is coarser than
    0.001 (999 at 15 pairs and 0.05; 4,499 at 0.01). None where that is ``K`` or more.
    """
    m = max(Counter(families).values(), default=0)
    if m < 1:
        return None
    point = max(CLEAR_AT_LEAST, math.ceil(3 * m / alpha) - 1)
    return point if point < relabellings else None


def check_stop_after(key: str, stop_after: int | None) -> None:
    """Refuse a ``stop_after`` below 1 (None: never stop)."""
    if stop_after is not None and stop_after < 1:
        raise ConfigError(
            f"{key}.stop_after must be >= 1 (or null: every relabelling); got {stop_after}"
        )


def stopping_words(stop_after: int | None, clear_after: int | None = None) -> str:
    """The stopping rules in words, after the relabellings' count ("" where it never stops)."""
    words = ""
    if stop_after is not None:
        h, error = stop_after, 1 / math.sqrt(stop_after)
        words = (
            f", stopping at {h} as extreme as observed (where it stops, p = {h} / drawn, "
            f"~{error:.0%})"
        )
    if clear_after is not None:
        words += f", or at {clear_after} with none (p = 1/{clear_after + 1})"
    return words
