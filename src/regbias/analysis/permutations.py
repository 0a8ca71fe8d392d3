"""The Mantel permutation null shared by every correlation test over group pairs.

The rows of a pair table are not independent (every group appears in K-1 pairs), so the null
relabels the groups of one matrix, rows and columns together: all ``K!`` relabellings when few
enough, else seeded random ones, the identity first. Here once: the relabellings, the rank
correlations under them, permutation p-values and the Westfall-Young maxT adjustment.

An undefined permuted statistic (NaN) counts as at least as extreme as the observed one:
conservative, it can only raise a p-value.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.console import progress_bar
from regbias.interrupt import check_stop

#: The columns naming a row's two groups in every pair table.
PAIR_COLUMNS = ["group_a", "group_b"]
#: Largest number of group permutations enumerated exactly (8 groups: 8! = 40320).
EXACT_LIMIT = math.factorial(8)
#: Rank statistics take few distinct values; permuted values equal to the observed one must
#: count as "at least as extreme" even when float rounding differs in the last bits.
TIE_TOLERANCE = 1e-12
#: Which permuted statistics are "at least as extreme": ``|s*| >= |s|``, ``s* >= s``, ``s* <= s``.
Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[Alternative, ...] = ("two-sided", "greater", "less")
_CHUNK = 4096
_CONCORDANCES_PER_STEP = 1 << 24


def groups_in_order(frame: pd.DataFrame) -> list[str]:
    """A pair table's groups in order of first appearance (their indices in the relabellings)."""
    pairs = frame[PAIR_COLUMNS].to_numpy(dtype=object)
    return list(dict.fromkeys(pairs.ravel().tolist()))


def pair_indices(frame: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A pair table's :func:`groups_in_order` and each row's two group indices among them."""
    groups = groups_in_order(frame)
    rank = {g: i for i, g in enumerate(groups)}
    index_a, index_b = (frame[c].map(rank).to_numpy(dtype=np.int64) for c in PAIR_COLUMNS)
    return groups, index_a, index_b


@lru_cache(maxsize=8)
def group_permutations(k: int, relabellings: int, seed: int, exact_limit: int) -> np.ndarray:
    """Read-only ``(n, k)`` relabellings of ``k`` groups, the identity first.

    All ``k!`` when ``k! <= exact_limit``, else ``relabellings`` seeded random ones after the
    identity. Row ``n`` maps group ``i`` to group ``perms[n, i]``.
    """
    identity = np.arange(k, dtype=np.int64)
    if math.factorial(k) <= exact_limit:
        # itertools yields the identity first.
        perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
    else:
        rng = np.random.default_rng(seed)
        perms = rng.permuted(np.tile(identity, (relabellings + 1, 1)), axis=1)
        perms[0] = identity
    perms.setflags(write=False)
    return perms


@lru_cache(maxsize=8)
def relabelled_pairs(
    a: tuple[int, ...],
    b: tuple[int, ...],
    relabellings: int,
    seed: int,
    exact_limit: int,
    *,
    inverse: bool,
) -> np.ndarray:
    """``(n_perm, m)`` pair indices under each relabelling of :func:`group_permutations`.

    ``a``, ``b``: each pair's group indices; every pair of the ``k = max(a, b) + 1`` groups must
    be present once. Relabelling a matrix by permutation n moves the value of pair
    ``moved[n, e]`` onto pair e. With ``inverse``, entry ``[n, f]`` is instead the pair that
    receives pair f's value (relabelling the performance matrix is then one matrix product).
    """
    k = max(*a, *b) + 1
    perms = group_permutations(k, relabellings, seed, exact_limit)
    pair_index = np.full((k, k), -1, dtype=np.int64)
    pair_index[a, b] = pair_index[b, a] = np.arange(len(a))
    moved = pair_index[perms[:, a], perms[:, b]]
    if inverse:
        source = np.broadcast_to(np.arange(len(a)), moved.shape)
        moved_back = np.empty_like(moved)
        np.put_along_axis(moved_back, moved, source, axis=1)
        moved = moved_back
    moved.setflags(write=False)
    return moved


def column_batches(
    frame: pd.DataFrame, distance: str, performance_columns: list[str]
) -> list[tuple[pd.DataFrame, list[str]]]:
    """Performance columns grouped by which pairs they share with ``distance`` (one null each).

    Returns:
        ``(data, columns)`` per set of shared pairs: ``data`` holds the pair columns, the
        distance and ``columns``, restricted to the pairs where all of them are present.
    """
    present = frame[performance_columns].notna().to_numpy() & frame[[distance]].notna().to_numpy()
    by_mask: dict[bytes, list[int]] = {}
    for j in range(len(performance_columns)):
        by_mask.setdefault(present[:, j].tobytes(), []).append(j)
    batches = []
    for members in by_mask.values():
        columns = [performance_columns[j] for j in members]
        data = frame.loc[present[:, members[0]], [*PAIR_COLUMNS, distance, *columns]]
        batches.append((data, columns))
    return batches


def _extremeness(values: np.ndarray, alternative: Alternative) -> np.ndarray:
    """Larger is more extreme; NaN becomes +inf (an undefined statistic counts as extreme)."""
    if alternative == "two-sided":
        out = np.abs(values)
    elif alternative == "greater":
        out = np.asarray(values, dtype=np.float64)
    elif alternative == "less":
        out = -np.asarray(values, dtype=np.float64)
    else:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return np.where(np.isnan(out), np.inf, out)


def permutation_p_values(null: np.ndarray, alternative: Alternative = "two-sided") -> np.ndarray:
    """Permutation p ``(1 + count) / len(null)`` of every column of ``null`` (row 0 observed).

    Exact enumeration counts the identity among its K! relabellings, random sampling adds it as
    the "+1": both are ``(1 + count) / len(null)``. NaN where the observed statistic is NaN.
    """
    null = np.asarray(null, dtype=np.float64)
    observed = null[0]
    threshold = _extremeness(observed, alternative) - TIE_TOLERANCE
    hits = (_extremeness(null[1:], alternative) >= threshold).sum(axis=0)
    return np.where(np.isfinite(observed), (1 + hits) / len(null), np.nan)


def permutation_p(null: np.ndarray, alternative: Alternative = "two-sided") -> float:
    """The permutation p of one statistic (:func:`permutation_p_values` of a 1-D ``null``)."""
    return float(permutation_p_values(np.asarray(null)[:, None], alternative)[0])


def maxt_adjusted_p(
    nulls: np.ndarray, alternative: Alternative = "two-sided", *, step_down: bool = True
) -> np.ndarray:
    """Westfall-Young maxT adjusted p-values of statistics that share their relabellings.

    Single-step: the share of relabellings whose most extreme statistic over all tests reaches
    test j's observed one; step-down (Westfall and Young 1993, Algorithm 2.8) takes the maximum
    only over the tests not more extreme than j, kept monotone in the observed order.

    ``nulls``: ``(n_perm, m)`` statistics of ``m`` tests, identity first; a test whose observed
    value is NaN is left out (NaN adjusted p).
    """
    nulls = np.asarray(nulls, dtype=np.float64)
    out = np.full(nulls.shape[1], np.nan)
    tested = np.flatnonzero(np.isfinite(nulls[0]))
    if not len(tested):
        return out
    extreme = _extremeness(nulls[:, tested], alternative)
    observed = extreme[0]
    order = np.argsort(-observed, kind="stable")  # most extreme first
    ranked = extreme[:, order]
    if step_down:
        # Successive maxima over the tests from rank i to the least extreme.
        ceiling = np.maximum.accumulate(ranked[:, ::-1], axis=1)[:, ::-1]
    else:
        ceiling = np.broadcast_to(ranked.max(axis=1, keepdims=True), ranked.shape)
    hits = (ceiling >= observed[order] - TIE_TOLERANCE).sum(axis=0)  # identity included
    adjusted = np.maximum.accumulate(hits / len(nulls))
    out[tested[order]] = adjusted
    return out


@dataclass(frozen=True)
class RankNull:
    """``(n_perm, P)`` Spearman's rho and Kendall's tau-b per relabelling (identity first)."""

    spearman: np.ndarray
    kendall: np.ndarray


def rank_correlation_null(
    x: np.ndarray,
    ys: np.ndarray,
    index_a: np.ndarray,
    index_b: np.ndarray,
    perms: np.ndarray,
) -> RankNull:
    """Spearman rho and Kendall tau-b of relabelled ``x`` with each ``ys[:, j]``.

    ``x[e]`` (``(m,)`` distances) and ``ys[e]`` (``(m, P)`` performance) belong to the pair
    ``(index_a[e], index_b[e])``; under a relabelling of ``perms`` entry ``e`` takes ``x`` of
    the pair ``(perm[index_a[e]], perm[index_b[e]])``, which equals the textbook Mantel test
    with the performance matrix permuted. A pair whose relabelled partner is missing is left
    out of that relabelling's statistic. Row 0 equals scipy's; NaN where a column is constant.
    """
    k = perms.shape[1]
    if len(x) == k * (k - 1) // 2:
        return _complete_null(x, ys, index_a, index_b, perms)
    return _masked_null(x, ys, index_a, index_b, perms)


def _complete_null(
    x: np.ndarray, ys: np.ndarray, index_a: np.ndarray, index_b: np.ndarray, perms: np.ndarray
) -> RankNull:
    """Every pair present: a relabelling only reorders the entries of ``x``.

    Ranks and tie counts are then invariant, so ranks are computed once and each
    permutation costs a gather and a product with all performance columns at once.
    """
    m, k = len(x), perms.shape[1]
    pair_index = np.full((k, k), -1, dtype=np.int64)
    pair_index[index_a, index_b] = pair_index[index_b, index_a] = np.arange(m)
    rank_x = scipy_stats.rankdata(x) - (m + 1) / 2
    rank_y = scipy_stats.rankdata(ys, axis=0) - (m + 1) / 2
    first, second = np.triu_indices(m, 1)
    sign_x = np.sign(x[:, None] - x[None, :]).ravel()
    sign_y = np.sign(ys[first] - ys[second])
    rho = np.empty((len(perms), ys.shape[1]))
    tau = np.empty((len(perms), ys.shape[1]))
    # A constant column gives 0 * inf = NaN: no correlation, which the caller reports.
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_scale = 1 / np.sqrt((rank_x**2).sum() * (rank_y**2).sum(axis=0))
        tau_scale = 1 / np.sqrt(np.abs(sign_x).sum() / 2 * np.abs(sign_y).sum(axis=0))
        size = _chunk_size(len(first))
        bar = progress_bar(total=len(perms), desc="permutation null", disable=len(perms) <= size)
        with bar:
            for start in range(0, len(perms), size):
                check_stop()  # a safe point between chunks of relabellings
                chunk = perms[start : start + size]
                moved = pair_index[chunk[:, index_a], chunk[:, index_b]]
                rho[start : start + len(chunk)] = (rank_x[moved] @ rank_y) * rho_scale
                concordance = sign_x[moved[:, first] * m + moved[:, second]]
                tau[start : start + len(chunk)] = (concordance @ sign_y) * tau_scale
                bar.update(len(chunk))
    return RankNull(rho, tau)


def _chunk_size(n_concordances: int) -> int:
    """Relabellings per step: at most :data:`_CHUNK`, and a bounded gather of concordances.

    With many groups (30: 94,395 pairs of pairs) a step of 4,096 relabellings would gather
    hundreds of millions of values at once and show no progress for minutes.
    """
    return max(1, min(_CHUNK, _CONCORDANCES_PER_STEP // max(n_concordances, 1)))


def _masked_null(
    x: np.ndarray, ys: np.ndarray, index_a: np.ndarray, index_b: np.ndarray, perms: np.ndarray
) -> RankNull:
    """Some pairs missing: each permutation keeps the entries whose relabelled pair exists.

    Ranks change with the kept entries, so both statistics are written with pairwise signs:
    the centred average rank of entry e is half the sum over kept f of sign(v_e - v_f), and
    tau-b is the sum of sign products over the root of the untied-pair counts.
    """
    m = len(x)
    x_matrix = np.full((perms.shape[1], perms.shape[1]), np.nan)
    x_matrix[index_a, index_b] = x
    x_matrix[index_b, index_a] = x
    sign_y = np.sign(ys.T[:, :, None] - ys.T[:, None, :])  # (P, m, m)
    rho = np.empty((len(perms), ys.shape[1]))
    tau = np.empty((len(perms), ys.shape[1]))
    step = _CHUNK // 4
    with np.errstate(invalid="ignore", divide="ignore"):
        for start in range(0, len(perms), step):
            check_stop()  # a safe point between chunks of relabellings
            chunk = perms[start : start + step]
            moved = x_matrix[chunk[:, index_a], chunk[:, index_b]]
            kept = np.isfinite(moved).astype(np.float64)
            sign_x = np.nan_to_num(np.sign(moved[:, :, None] - moved[:, None, :]))
            centred_x = sign_x.sum(axis=2)[:, None, :]  # (n, 1, m); zero where not kept
            centred_y = np.einsum("nf,pef->npe", kept, sign_y) * kept[:, None, :]
            untied_x = np.abs(sign_x).sum(axis=(1, 2))[:, None]
            untied_y = np.einsum("ne,pef,nf->np", kept, np.abs(sign_y), kept)
            rho[start : start + len(chunk)] = (centred_x * centred_y).sum(axis=2) / np.sqrt(
                (centred_x**2).sum(axis=2) * (centred_y**2).sum(axis=2)
            )
            products = sign_x.reshape(len(chunk), m * m) @ sign_y.reshape(-1, m * m).T
            tau[start : start + len(chunk)] = products / np.sqrt(untied_x * untied_y)
    return RankNull(rho, tau)
