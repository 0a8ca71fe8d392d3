"""How each Sinkhorn problem of a run is solved: the settings, and their one-time resolution.

A run fixes epsilon, the annealing start, the solver (``auto``: exact or sinkhorn) and the
updates once, from every cloud it will solve (:func:`resolve_settings`). The result is a
:class:`ResolvedSinkhorn`; the solving functions take it as it is, so a sweep's jobs, its
noise floors all solve the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from regbias.errors import ConfigError
from regbias.settings_reader import check_choices

#: ``distance.sinkhorn.solver`` (see ``SinkhornSettings.solver``).
Solver = Literal["auto", "sinkhorn", "exact"]
#: ``distance.sinkhorn.updates`` (see ``SinkhornSettings.updates``).
Updates = Literal["auto", "log", "kernel"]

# ``updates: auto`` runs kernel updates where epsilon is at least this fraction of the mean
# pooled cost (the laptop's: 0.05). Below, float32 scalings overflow: on real token clouds of
# 4,000 points a kernel solve at 1% ended NaN after 40 iterations (and was redone in the log
# domain), at 2% it converged.
KERNEL_ABOVE = 0.02


@dataclass(frozen=True)
class SinkhornSettings:
    """How to solve each regularised transport problem.

    Attributes:
        epsilon: absolute regularisation in units of the cost ``|x - y|^2`` (the paper: 0.005);
            None derives it once per run as ``epsilon_relative`` x the mean pooled cost.
        epsilon_relative: fraction of the mean pooled cost used when ``epsilon`` is None.
        anneal: decay epsilon geometrically from a larger start (needed for small epsilon).
        anneal_init: start epsilon as a multiple of the target; None starts at
            ``anneal_start`` x the mean pooled cost (resolved once per run).
        anneal_start: see ``anneal_init`` (a fraction of the mean pooled cost).
        anneal_decay: factor applied to the multiple at every iteration (<= 1).
        threshold: convergence tolerance on the L1 marginal error.
        max_iterations: Sinkhorn iterations at most per solve.
        inner_iterations: iterations between two computations of the marginal error.
        updates: ``log`` (log-domain updates on the cost matrix: stable at any epsilon),
            ``kernel`` (scaling updates on the kernel ``exp(-C / eps)``, computed once and
            applied by matrix-vector products: 2.7x faster a divergence of 4,000-point clouds
            on a CPU; for a fixed epsilon and a dense cost only) or ``auto`` (kernel where the
            solve is dense, not annealed and epsilon is at least ``KERNEL_ABOVE`` x the mean
            pooled cost, else log). A kernel solve that ends with a point's kernel sum at 0,
            or that does not converge, is solved again with log updates.
        momentum: over-relaxation of the cross term's updates (1 < value < 2), or None for
            plain updates. Applied only where epsilon needs no annealing (``anneal_init``
            resolves to 1): 1.5 halves the iterations there, while over-relaxing an annealed
            solve stalls it on real token clouds. A solve it drives to a non-finite cost is
            never reported converged and is solved again without it.
        batch_size: rows of the cost computed at a time (online mode, memory O(n x batch));
            None keeps the dense cost matrix unless the clouds hold more than ``max_dense_points``.
        max_dense_points: points per side above which online mode is switched on.
        pad_multiple: clouds are padded to a multiple of this many points (one compile per size).
        solver: ``sinkhorn`` (entropic, OTT), ``exact`` (the epsilon -> 0 limit: POT's
            network simplex on the same cost; self terms are 0, epsilon is unused) or ``auto``
            (resolved once per run: ``exact`` where epsilon <= ``exact_below`` x the mean
            pooled cost and no cloud holds more than ``exact_max_points`` points, else
            ``sinkhorn``). At the paper's epsilon on MiniLM token clouds (4e-5 x the mean
            cost) the entropic value is within 5e-4 of the exact one, while Sinkhorn's
            marginal error stalls near 1e-2 for thousands of iterations.
        exact_below: see ``solver``.
        exact_max_points: see ``solver`` (network simplex time grows ~n^3).
        batch_pairs: solve all self terms, then all cross terms, of a repetition in one
            compiled call each (same values as one call per pair; vmapped on an accelerator).
    """

    epsilon: float | None
    epsilon_relative: float
    anneal: bool
    anneal_init: float | None
    anneal_start: float
    anneal_decay: float
    threshold: float
    max_iterations: int
    inner_iterations: int
    updates: Updates
    momentum: float | None
    batch_size: int | None
    max_dense_points: int
    pad_multiple: int
    solver: Solver
    exact_below: float
    exact_max_points: int
    batch_pairs: bool

    def __post_init__(self) -> None:
        if self.epsilon is not None and not 0 < self.epsilon < math.inf:
            raise ConfigError(
                f"sinkhorn epsilon must be a finite number > 0, got {self.epsilon}; set one "
                "(the paper: 0.005) or null to derive it from epsilon_relative"
            )
        check_choices(self, "distance.sinkhorn")  # updates and solver, also made in Python
        if self.updates == "kernel" and self.batch_size is not None:
            kernel_updates(self, dense=False, annealed=False)  # raises what to set
        checks = {
            "epsilon_relative": 0 < self.epsilon_relative < math.inf,
            "anneal_start": self.anneal_start > 0,
            "anneal_init": self.anneal_init is None or self.anneal_init >= 1,
            "anneal_decay": 0 < self.anneal_decay <= 1,
            "threshold": self.threshold > 0,
            "max_iterations": self.max_iterations >= self.inner_iterations >= 1,
            "batch_size": self.batch_size is None or self.batch_size >= 1,
            "pad_multiple": self.pad_multiple >= 1,
            "exact_below": self.exact_below >= 0,
            "momentum": self.momentum is None or 1.0 <= self.momentum < 2.0,
        }
        for name, valid in checks.items():
            if not valid:
                raise ConfigError(
                    f"sinkhorn {name}={getattr(self, name)!r} is out of range: anneal_start,"
                    " threshold > 0; 0 < epsilon_relative < inf; anneal_init >= 1 (a multiple of"
                    " epsilon) or null;"
                    " 0 < anneal_decay <= 1; max_iterations >= inner_iterations >= 1;"
                    " 1 <= momentum < 2 or null"
                )


def mean_pooled_cost(clouds: list[np.ndarray]) -> float:
    """Mean of ``|x_i - x_j|^2`` over all pairs of points of the pooled clouds.

    Uses the identity ``mean_ij |x_i - x_j|^2 = 2 (mean_i |x_i|^2 - |mean_i x_i|^2)``, exact and
    linear in the number of points.
    """
    total = sum(len(c) for c in clouds)
    if total == 0:
        raise ValueError("no points to compute a mean cost from")
    sum_sq = sum(float(np.sum(np.square(c, dtype=np.float64))) for c in clouds)
    mean = np.asarray(sum(np.sum(c, axis=0, dtype=np.float64) for c in clouds) / total)
    return 2.0 * (sum_sq / total - float(mean @ mean))


def kernel_updates(settings: SinkhornSettings, *, dense: bool, annealed: bool) -> bool:
    """Whether a solve runs kernel (scaling) updates; see ``SinkhornSettings.updates``."""
    if settings.updates == "kernel" and (annealed or not dense):
        raise ConfigError(
            "distance.sinkhorn.updates=kernel needs one fixed epsilon and a dense cost matrix: "
            "set anneal: false and batch_size: null, or updates: auto (kernel where possible)"
        )
    return settings.updates != "log" and dense and not annealed


@dataclass(frozen=True)
class ResolvedSinkhorn(SinkhornSettings):
    """Settings a run has fixed once (made by :func:`resolve_settings`, taken as they are).

    ``epsilon`` is a number, ``solver`` is ``sinkhorn`` or ``exact``, and a Sinkhorn solver's
    ``anneal_init`` is set wherever annealing is on. ``updates`` may still be ``auto``: kernel
    updates where a solve is dense and not annealed (epsilon is then at least
    :data:`KERNEL_ABOVE` x the mean cost).
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        unresolved = (
            self.epsilon is None
            or self.solver == "auto"
            or (self.solver == "sinkhorn" and self.anneal and self.anneal_init is None)
        )
        if unresolved:
            raise ValueError(f"ResolvedSinkhorn is made by resolve_settings, got {self}")


def _values(settings: SinkhornSettings) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(SinkhornSettings)}


def unresolved(settings: SinkhornSettings) -> SinkhornSettings:
    """The same values as plain settings, to change and resolve again (another epsilon)."""
    return SinkhornSettings(**_values(settings))


def needs_calibration(settings: SinkhornSettings) -> bool:
    """Whether resolving ``settings`` needs clouds (something is left to derive from them)."""
    if isinstance(settings, ResolvedSinkhorn):
        return False
    if settings.solver == "exact" and settings.epsilon is not None:
        return False  # the exact limit uses neither annealing nor updates
    annealing_known = settings.anneal_init is not None or not settings.anneal
    chosen = settings.solver != "auto" and settings.updates != "auto"
    return not (settings.epsilon is not None and annealing_known and chosen)


def resolve_settings(
    settings: SinkhornSettings, clouds: list[np.ndarray] | None = None
) -> ResolvedSinkhorn:
    """Fix the run's epsilon, annealing start, solver and updates from the pooled cost.

    Args:
        settings: the configured settings (``epsilon`` and ``anneal_init`` may be None,
            ``solver`` and ``updates`` ``auto``), or already resolved ones (returned as they
            are).
        clouds: every point cloud of the run (the statistic is computed once, over all); may be
            None where nothing is left to derive (:func:`needs_calibration` is False).

    Returns:
        The same for every pair of the run: ``epsilon`` and ``anneal_init`` set, ``solver``
        resolved, and ``updates`` ``auto`` resolved to ``log`` where epsilon is below
        :data:`KERNEL_ABOVE` x the mean pooled cost.
    """
    if isinstance(settings, ResolvedSinkhorn):
        return settings
    values = _values(settings)
    if not needs_calibration(settings):
        return ResolvedSinkhorn(**values)
    if not clouds:
        raise ValueError("resolving these Sinkhorn settings needs the run's clouds")
    cost = mean_pooled_cost(clouds)
    epsilon = settings.epsilon or settings.epsilon_relative * cost
    anneal_init = settings.anneal_init
    if anneal_init is None:
        anneal_init = max(1.0, settings.anneal_start * cost / epsilon) if settings.anneal else 1.0
    solver = settings.solver
    if solver == "auto":
        small = epsilon <= settings.exact_below * cost
        few = max(len(c) for c in clouds) <= settings.exact_max_points
        solver = "exact" if small and few else "sinkhorn"
    updates = settings.updates
    if updates == "auto" and epsilon < KERNEL_ABOVE * cost:
        updates = "log"  # most of the kernel would underflow
    values |= {
        "epsilon": float(epsilon),
        "anneal_init": float(anneal_init),
        "solver": solver,
        "updates": updates,
    }
    return ResolvedSinkhorn(**values)
