"""Stage II: debiased Sinkhorn divergence between groups' embedding point clouds (OTT-JAX).

The divergence between point clouds ``x`` and ``y`` (uniform weights, cost ``|x - y|^2``) is

    S(x, y) = OT_eps(x, y) - 1/2 OT_eps(x, x) - 1/2 OT_eps(y, y),

with ``OT_eps`` the KL-regularised transport cost (OTT's ``reg_ot_cost``). One epsilon is used
for every pair of a run. Every cloud is padded with zero-weight points to a common, bucketed
size so that all solves of a run share one compiled program. At one fixed epsilon of at least
2% of the mean cost a dense solve runs kernel updates (the kernel computed once, then
matrix-vector products); annealed, online and smaller-epsilon solves, and kernel solves that
fail, run log-domain updates.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

import numpy as np
import pandas as pd

from regbias.console import ProgressBar
from regbias.console import progress_bar as tqdm
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.sinkhorn.exact import exact_ot_many
from regbias.distances.sinkhorn.settings import ResolvedSinkhorn, SinkhornSettings, resolve_settings
from regbias.distances.sinkhorn.solve import (
    SolveDiagnostics,
    check_cloud,
    exact_diagnostics,
    pad,
    padded_points,
    retry,
    solve_many,
    solve_ot,
)
from regbias.interrupt import check_stop

# Settings and single solves live in .settings and .solve; they are re-exported
# here, the one module a user of the divergence imports.

TERMS = ("xy", "xx", "yy")


@dataclass(frozen=True)
class DivergenceResult:
    """A debiased Sinkhorn divergence and the diagnostics of its three terms."""

    divergence: float
    xy: SolveDiagnostics
    xx: SolveDiagnostics
    yy: SolveDiagnostics


def _divergence(xy: SolveDiagnostics, xx: SolveDiagnostics, yy: SolveDiagnostics) -> float:
    return xy.cost - 0.5 * (xx.cost + yy.cost)


def sinkhorn_divergence(
    x: np.ndarray,
    y: np.ndarray,
    settings: SinkhornSettings,
    *,
    x_weights: np.ndarray | None = None,
    y_weights: np.ndarray | None = None,
) -> DivergenceResult:
    """Debiased Sinkhorn divergence ``OT(x, y) - OT(x, x) / 2 - OT(y, y) / 2``.

    Epsilon None is derived from the two clouds pooled; weights default to uniform.
    """
    settings = resolve_settings(settings, [np.asarray(x), np.asarray(y)])
    size = padded_points(max(len(x), len(y)), settings)
    xy = solve_ot(x, y, settings, (x_weights, y_weights), size=size)
    xx = solve_ot(x, x, settings, (x_weights, x_weights), symmetric=True, size=size)
    yy = solve_ot(y, y, settings, (y_weights, y_weights), symmetric=True, size=size)
    return DivergenceResult(_divergence(xy, xx, yy), xy, xx, yy)


def _check_draws(draws: list[dict[str, np.ndarray]]) -> list[str]:
    if not draws:
        raise ValueError("sinkhorn_matrix needs at least one repetition")
    groups = list(draws[0])
    if len(groups) < 2:
        raise ValueError(f"sinkhorn_matrix needs at least two groups, got {groups}")
    for r, draw in enumerate(draws):
        if list(draw) != groups:
            raise ValueError(f"repetition {r} has groups {list(draw)}, expected {groups}")
        for group, cloud in draw.items():
            check_cloud(np.asarray(cloud), f"{group!r} in repetition {r}")
    return groups


def _row(r: int, a: str, b: str, epsilon: float, terms: tuple[SolveDiagnostics, ...]) -> dict:
    row: dict[str, Any] = {"repetition": r, "group_a": a, "group_b": b}
    row["divergence"] = _divergence(*terms)
    row["epsilon"] = epsilon
    for term, diag in zip(TERMS, terms, strict=True):
        row.update({f"{term}_{key}": value for key, value in asdict(diag).items()})
    return row


def _row_epsilon(settings: ResolvedSinkhorn) -> float:
    """The epsilon a row was solved at: 0 in the exact limit."""
    # A resolved Sinkhorn solver's epsilon is a number (ResolvedSinkhorn checks it).
    return 0.0 if settings.solver == "exact" else float(cast(float, settings.epsilon))


def _warn_unconverged(
    r: int, label: str, diag: SolveDiagnostics, settings: SinkhornSettings
) -> None:
    if not diag.converged:
        what = "" if math.isfinite(diag.cost) else f"a non-finite cost ({diag.cost}), "
        warnings.warn(
            f"Sinkhorn did not converge for {label} in repetition {r}: {what}marginal error "
            f"{diag.error:.2e} vs threshold {settings.threshold:g} after {diag.iterations} "
            "iterations; it is left out of the means. Raise max_iterations, slow anneal_decay, "
            "drop momentum or raise epsilon",
            RuntimeWarning,
            stacklevel=3,
        )


def _repetition_batched(
    r: int, draw: dict[str, np.ndarray], settings: ResolvedSinkhorn, size: int, bar: ProgressBar
) -> list[dict[str, Any]]:
    """All pairs of one repetition: the K self terms in one call, the cross terms in another."""
    groups = list(draw)
    padded = {g: pad(np.asarray(c), None, size) for g, c in draw.items()}
    selves = solve_many([(*padded[g], *padded[g]) for g in groups], settings, size, symmetric=True)
    own = {
        g: retry((*padded[g], *padded[g]), settings, size, diag, symmetric=True)
        for g, diag in zip(groups, selves, strict=True)
    }
    for group in groups:
        _warn_unconverged(r, f"the self term of {group!r}", own[group], settings)
    bar.update(len(groups))
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    problems = [(*padded[a], *padded[b]) for a, b in pairs]
    cross = solve_many(problems, settings, size, symmetric=False)
    rows = []
    for (a, b), problem, xy in zip(pairs, problems, cross, strict=True):
        xy = retry(problem, settings, size, xy, symmetric=False)
        _warn_unconverged(r, f"pair {a!r}-{b!r}", xy, settings)
        rows.append(_row(r, a, b, _row_epsilon(settings), (xy, own[a], own[b])))
    bar.update(len(pairs))
    return rows


def _repetition_exact(r: int, draw: dict[str, np.ndarray], bar: Any) -> list[dict[str, Any]]:
    """All pairs of one repetition in the exact limit: self terms 0, cross terms on all cores."""
    groups = list(draw)
    bar.update(len(groups))  # the self terms: 0, the identity plan
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    results = exact_divergences([(draw[a], draw[b]) for a, b in pairs], bar.update)
    return [
        _row(r, a, b, 0.0, (result.xy, result.xx, result.yy))
        for (a, b), result in zip(pairs, results, strict=True)
    ]


def _repetition_rows(
    r: int, draw: dict[str, np.ndarray], settings: ResolvedSinkhorn, size: int, bar: Any
) -> list[dict[str, Any]]:
    """All pairs of one repetition; each self term solved once and shared by its pairs."""
    if settings.solver == "exact":
        return _repetition_exact(r, draw, bar)
    if settings.batch_pairs:
        return _repetition_batched(r, draw, settings, size, bar)
    own = {}
    for group, cloud in draw.items():
        own[group] = solve_ot(cloud, cloud, settings, symmetric=True, size=size)
        _warn_unconverged(r, f"the self term of {group!r}", own[group], settings)
        bar.update()
        check_stop()  # a safe point between solves
    groups = list(draw)
    rows = []
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            xy = solve_ot(draw[a], draw[b], settings, size=size)
            _warn_unconverged(r, f"pair {a!r}-{b!r}", xy, settings)
            rows.append(_row(r, a, b, _row_epsilon(settings), (xy, own[a], own[b])))
            bar.update()
            check_stop()
    return rows


def sinkhorn_matrix(
    draws: list[dict[str, np.ndarray]],
    settings: SinkhornSettings,
    name: str = "sinkhorn",
    *,
    progress: bool = True,
    exclude_unconverged: bool = False,
) -> tuple[DistanceMatrix, pd.DataFrame]:
    """Sinkhorn divergence between every pair of groups, over repetitions.

    Each group's self term is solved once per repetition and shared by its K - 1 pairs, so a
    repetition costs K + K(K-1)/2 solves. All clouds are padded to one size (one compile); with
    ``settings.batch_pairs`` the K self terms and the K(K-1)/2 cross terms of a repetition are
    each solved in one compiled call (vmapped on an accelerator, in sequence on a CPU).
    ``settings.solver`` ``exact`` (or ``auto`` resolving to it) solves the epsilon -> 0 limit
    with POT instead (table epsilon 0, self terms 0); the matrix's config names the solver.

    Args:
        draws: ``draws[r][group]`` = the ``(n_points, d)`` point cloud of ``group`` in
            repetition ``r``; every repetition holds the same groups in the same order.
        settings: solver settings; epsilon None is derived once from all clouds pooled.
        name: the matrix's name (``sinkhorn_short``, ``sinkhorn_long``).
        progress: show a progress bar over the solves.
        exclude_unconverged: leave a pair's repetition out of the mean when one of its three
            solves did not converge (counted in ``DistanceMatrix.excluded``). A non-finite
            divergence is always left out, whatever its flags say.

    Returns:
        The matrix (mean and sd over repetitions, zero diagonal) and a diagnostics table with
        one row per (repetition, group_a, group_b): divergence, epsilon, and the cost,
        converged, iterations and error of each term ``xy``, ``xx``, ``yy``.
    """
    groups = _check_draws(draws)
    clouds = [np.asarray(c) for draw in draws for c in draw.values()]
    settings = resolve_settings(settings, clouds)
    size = padded_points(max(len(c) for c in clouds), settings)  # one compiled solve
    k = len(groups)
    rows = []
    with tqdm(total=len(draws) * (k + k * (k - 1) // 2), desc=name, disable=not progress) as bar:
        for r, draw in enumerate(draws):
            rows += _repetition_rows(r, draw, settings, size, bar)
    table = pd.DataFrame(rows)
    values, excluded = _values(table, groups, len(draws), exclude_unconverged)
    config = asdict(settings) | {"n_points_padded": size}
    matrix = DistanceMatrix.from_repetitions(name, groups, values, config)
    if excluded.any():
        matrix = replace(matrix, excluded=excluded)
    return matrix, table


def usable(table: pd.DataFrame, exclude_unconverged: bool) -> np.ndarray:
    """Rows whose divergence may enter a mean: finite and, if asked, all terms converged."""
    ok = np.isfinite(table["divergence"].to_numpy(dtype=np.float64))
    if exclude_unconverged:
        flags = table[[f"{t}_converged" for t in TERMS]].to_numpy(dtype=bool)
        ok &= flags.all(axis=1)
    return ok


def _values(
    table: pd.DataFrame, groups: list[str], n_reps: int, exclude_unconverged: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The ``(R, K, K)`` stack (NaN where left out) and the ``(K, K)`` count left out."""
    k = len(groups)
    values, excluded = np.zeros((n_reps, k, k)), np.zeros((k, k))
    ok = usable(table, exclude_unconverged)
    for keep, row in zip(ok, table.itertuples(index=False), strict=True):
        i, j = groups.index(row.group_a), groups.index(row.group_b)
        value = row.divergence if keep else np.nan
        values[row.repetition, i, j] = values[row.repetition, j, i] = value
        if not keep:
            excluded[i, j] += 1
            excluded[j, i] += 1
    return values, excluded


def self_costs(table: pd.DataFrame) -> dict[tuple[int, str], SolveDiagnostics]:
    """Each group's self term per repetition, read back from a diagnostics table."""
    out: dict[tuple[int, str], SolveDiagnostics] = {}
    for row in table.itertuples(index=False):
        for term, group in (("xx", row.group_a), ("yy", row.group_b)):
            out[(row.repetition, group)] = SolveDiagnostics(
                getattr(row, f"{term}_cost"),
                bool(getattr(row, f"{term}_converged")),
                int(getattr(row, f"{term}_iterations")),
                getattr(row, f"{term}_error"),
            )
    return out


def exact_divergences(
    pairs: list[tuple[np.ndarray, np.ndarray]], on_result: Callable[[], None] | None = None
) -> list[DivergenceResult]:
    """Exact-limit divergences of many pairs: the cross terms on all cores, self terms 0.

    ``on_result`` (a progress bar) is called after each result, and a stop checked there.
    """

    def done() -> None:
        if on_result is not None:
            on_result()
        check_stop()  # a safe point: problems not yet started are cancelled

    zero = exact_diagnostics(0.0, True)
    results = exact_ot_many(pairs, done)
    return [
        DivergenceResult(cost, exact_diagnostics(cost, optimal), zero, zero)
        for cost, optimal in results
    ]


def divergence_from(
    x: np.ndarray,
    y: np.ndarray,
    settings: ResolvedSinkhorn,
    size: int,
    x_self: SolveDiagnostics | None = None,
) -> DivergenceResult:
    """The divergence of ``x`` and ``y`` at a run's padded size, re-using ``x``'s self term."""
    xy = solve_ot(x, y, settings, size=size)
    xx = x_self or solve_ot(x, x, settings, symmetric=True, size=size)
    yy = solve_ot(y, y, settings, symmetric=True, size=size)
    return DivergenceResult(_divergence(xy, xx, yy), xy, xx, yy)
