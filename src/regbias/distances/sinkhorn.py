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

import logging
import math
import warnings
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from ott.geometry import costs, epsilon_scheduler, geometry, pointcloud
from ott.problems.linear import linear_problem
from ott.solvers.linear import acceleration, sinkhorn

from regbias.console import progress_bar as tqdm
from regbias.distances.exact import exact_ot, exact_ot_many
from regbias.distances.jax_compat import ensure_online_mode
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError
from regbias.interrupt import check_stop

__all__ = [
    "DivergenceResult",
    "SinkhornSettings",
    "SolveDiagnostics",
    "derive_epsilon",
    "divergences",
    "mean_pooled_cost",
    "resolve_settings",
    "sinkhorn_divergence",
    "sinkhorn_matrix",
    "solve_ot",
]

logger = logging.getLogger(__name__)

# Where annealing starts when ``anneal_init`` is None, as a fraction of the mean pooled cost:
# large enough that the first iterations see a smooth problem, small enough not to waste them.
# At 0.05 (= the laptop's epsilon_relative) a plain solve converges in ~60 iterations on real
# token clouds, so the laptop's epsilon needs no annealing and the paper's saves ~70 of ~950.
ANNEAL_START_FRACTION = 0.05

TERMS = ("xy", "xx", "yy")
SOLVERS = ("auto", "sinkhorn", "exact")
UPDATES = ("auto", "log", "kernel")

# ``updates: auto`` runs kernel updates where epsilon is at least this fraction of the mean
# pooled cost (the laptop's: 0.05). Below, float32 scalings overflow: on real token clouds of
# 4,000 points a kernel solve at 1% ended NaN after 40 iterations (and was redone in the log
# domain), at 2% it converged.
KERNEL_ABOVE = 0.02

# Bytes of cost matrices one batched call may hold (dense mode: ~3 n^2 float32 per problem).
BATCH_BYTES = 1 << 30


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

    epsilon: float | None = 0.005
    epsilon_relative: float = 0.05
    anneal: bool = True
    anneal_init: float | None = None
    anneal_start: float = ANNEAL_START_FRACTION
    anneal_decay: float = 0.99
    threshold: float = 1e-3
    max_iterations: int = 10_000
    inner_iterations: int = 10
    updates: str = "auto"
    momentum: float | None = 1.5
    batch_size: int | None = None
    max_dense_points: int = 8192
    pad_multiple: int = 256
    solver: str = "auto"
    exact_below: float = 1e-3
    exact_max_points: int = 5000
    batch_pairs: bool = True

    def __post_init__(self) -> None:
        if self.epsilon is not None and not self.epsilon > 0:
            raise ConfigError(
                f"sinkhorn epsilon must be > 0, got {self.epsilon}; set a positive value "
                "(the paper: 0.005) or null to derive it from epsilon_relative"
            )
        if self.updates not in UPDATES:
            raise ConfigError(
                f"sinkhorn updates={self.updates!r} is unknown: use one of {', '.join(UPDATES)}"
            )
        if self.updates == "kernel" and self.batch_size is not None:
            _kernel_updates(self, dense=False, annealed=False)  # raises what to set
        if self.solver not in SOLVERS:
            raise ConfigError(
                f"sinkhorn solver={self.solver!r} is unknown: use one of {', '.join(SOLVERS)}"
            )
        checks = {
            "epsilon_relative": self.epsilon_relative > 0,
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
                    " epsilon_relative, threshold > 0; anneal_init >= 1 (a multiple of epsilon)"
                    " or null;"
                    " 0 < anneal_decay <= 1; max_iterations >= inner_iterations >= 1;"
                    " 1 <= momentum < 2 or null"
                )


@dataclass(frozen=True)
class SolveDiagnostics:
    """One regularised transport solve: its cost and how the solver got there."""

    cost: float
    converged: bool
    iterations: int
    error: float


@dataclass(frozen=True)
class DivergenceResult:
    """A debiased Sinkhorn divergence and the diagnostics of its three terms."""

    divergence: float
    xy: SolveDiagnostics
    xx: SolveDiagnostics
    yy: SolveDiagnostics


@jax.tree_util.register_pytree_node_class
class _Annealing(epsilon_scheduler.Epsilon):
    """OTT's epsilon schedule with the start multiple traced too, so runs share a compile."""

    def tree_flatten(self) -> tuple[tuple[Any, Any], dict[str, float]]:
        return (self.target, self.init), {"decay": self.decay}

    @classmethod
    def tree_unflatten(cls, aux_data: dict[str, float], children: tuple) -> _Annealing:
        return cls(*children, **aux_data)


@dataclass(frozen=True)
class _Solver:
    """The static part of a solve: changing it recompiles, changing epsilon does not."""

    anneal_decay: float
    threshold: float
    max_iterations: int
    inner_iterations: int
    batch_size: int | None
    symmetric: bool
    momentum: float | None = None
    kernel: bool = False


def mean_pooled_cost(clouds: list[np.ndarray]) -> float:
    """Mean of ``|x_i - x_j|^2`` over all pairs of points of the pooled clouds.

    Uses the identity ``mean_ij |x_i - x_j|^2 = 2 (mean_i |x_i|^2 - |mean_i x_i|^2)``, exact and
    linear in the number of points.
    """
    total = sum(len(c) for c in clouds)
    if total == 0:
        raise ValueError("no points to compute a mean cost from")
    sum_sq = sum(float(np.sum(np.square(c, dtype=np.float64))) for c in clouds)
    mean = sum(np.sum(c, axis=0, dtype=np.float64) for c in clouds) / total
    return 2.0 * (sum_sq / total - float(mean @ mean))


def derive_epsilon(draws: list[dict[str, np.ndarray]], relative: float) -> float:
    """Epsilon as ``relative`` x the mean squared distance between points of all draws pooled."""
    if not relative > 0:
        raise ConfigError(f"epsilon_relative must be > 0, got {relative}")
    return relative * mean_pooled_cost([c for draw in draws for c in draw.values()])


def resolve_settings(settings: SinkhornSettings, clouds: list[np.ndarray]) -> SinkhornSettings:
    """Fix the run's epsilon and annealing start from the pooled cost, if not given.

    Args:
        settings: the configured settings (``epsilon`` and ``anneal_init`` may be None).
        clouds: every point cloud of the run (the statistic is computed once, over all).

    Returns:
        Settings with ``epsilon`` and ``anneal_init`` set, the same for every pair of the run,
        ``solver`` resolved, and ``updates`` ``auto`` resolved to ``log`` where epsilon is
        below :data:`KERNEL_ABOVE` x the mean pooled cost.
    """
    annealing_known = settings.anneal_init is not None or not settings.anneal
    resolved = settings.solver != "auto" and settings.updates != "auto"
    if settings.epsilon is not None and annealing_known and resolved:
        return settings
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
    return replace(
        settings,
        epsilon=float(epsilon),
        anneal_init=float(anneal_init),
        solver=solver,
        updates=updates,
    )


@jax.tree_util.register_pytree_node_class
class _FixedKernel(geometry.Geometry):
    """A dense geometry whose kernel ``exp(-C / eps)`` is applied as computed, at one epsilon.

    OTT re-derives the kernel at every application (``K ** (eps_0 / eps)``, a pass of ``pow``
    over the matrix, so that epsilon may change between iterations) and applies its transpose
    by transposing it. At a fixed epsilon both are wasted: here an application is one
    matrix-vector product, and ``eps`` is ignored (only valid without annealing).
    """

    def apply_kernel(self, vec: jax.Array, eps: float | None = None, axis: int = 0) -> jax.Array:
        kernel = self.kernel_matrix
        return kernel @ vec if axis == 1 else vec @ kernel


def _log_geometry(
    x: jax.Array, y: jax.Array, epsilon: jax.Array, anneal_init: jax.Array, solver: _Solver
) -> geometry.Geometry:
    """The geometry of a log-domain solve (epsilon may be annealed).

    Online: OTT's point cloud, costs recomputed in row batches. Dense: the cost matrix computed
    once.
    """
    schedule = _Annealing(epsilon, init=anneal_init, decay=solver.anneal_decay)
    cost_fn = costs.SqEuclidean()
    if solver.batch_size is not None:
        return pointcloud.PointCloud(
            x, y, cost_fn=cost_fn, epsilon=schedule, scale_cost=1.0, batch_size=solver.batch_size
        )
    return geometry.Geometry(cost_matrix=cost_fn.all_pairs(x, y), epsilon=schedule)


def _kernel_geometry(
    x: jax.Array, y: jax.Array, a: jax.Array, b: jax.Array, epsilon: jax.Array
) -> tuple[_FixedKernel, jax.Array]:
    """The geometry of a kernel solve, on the reduced cost ``C_ij - r_i - s_j``.

    ``r`` are the row minima of ``C`` and ``s`` the column minima of ``C - r``, so every row and
    column of the reduced cost holds a 0: no point's kernel row or column underflows, however
    far it lies from the other cloud. The problem is the same (the plan is unchanged; the cost
    shifts by ``<a, r> + <b, s>``, the returned offset).

    Returns:
        The geometry and the offset.
    """
    cost = costs.SqEuclidean().all_pairs(x, y)
    rows = jnp.min(cost, axis=1)
    reduced = cost - rows[:, None]
    cols = jnp.min(reduced, axis=0)
    reduced = reduced - cols[None, :]
    kernel = jnp.exp(-reduced / epsilon)
    geom = _FixedKernel(cost_matrix=reduced, kernel_matrix=kernel, epsilon=epsilon)
    return geom, jnp.dot(a, rows) + jnp.dot(b, cols)


def _note_trace(solver: _Solver, shape: tuple[int, ...]) -> None:
    """Called once per compilation of a solve (tests count them)."""
    logger.debug("compiling a Sinkhorn solve for shape %s, %s", shape, solver)


def _solve_core(
    x: jax.Array,
    y: jax.Array,
    a: jax.Array,
    b: jax.Array,
    epsilon: jax.Array,
    anneal_init: jax.Array,
    solver: _Solver,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    _note_trace(solver, x.shape + y.shape)
    if not solver.kernel:
        geom = _log_geometry(x, y, epsilon, anneal_init, solver)
        return _summary(_sinkhorn(linear_problem.LinearProblem(geom, a=a, b=b), solver), solver)
    geom, offset = _kernel_geometry(x, y, a, b, epsilon)
    out = _sinkhorn(linear_problem.LinearProblem(geom, a=a, b=b), solver)
    cost, converged, iterations, error = _summary(out, solver)
    return cost + offset, converged & _no_underflow(geom, out, a, b), iterations, error


def _no_underflow(
    geom: _FixedKernel, out: sinkhorn.SinkhornOutput, a: jax.Array, b: jax.Array
) -> jax.Array:
    """Whether a kernel solve ended with no positive-weight point's kernel sum at 0.

    OTT divides by such a sum as if it were 1, which can leave a point's marginal wrong by
    its whole weight while the L1 error stays under the threshold: never trust that state.
    """
    u, v = jnp.exp(out.f / geom.epsilon), jnp.exp(out.g / geom.epsilon)
    rows = geom.apply_kernel(v, axis=1)
    cols = geom.apply_kernel(u, axis=0)
    return jnp.all((rows > 0) | (a == 0)) & jnp.all((cols > 0) | (b == 0))


def _sinkhorn(problem: linear_problem.LinearProblem, solver: _Solver) -> sinkhorn.SinkhornOutput:
    """OTT's Sinkhorn on ``problem`` with the solver's options."""
    options: dict[str, Any] = {}
    if solver.momentum is not None:
        options = {"momentum": acceleration.Momentum(start=0, value=solver.momentum)}
    if solver.symmetric:
        # Feydy et al. (2019) eq. 25: averaged parallel updates, the fixed point of OT(x, x).
        options = {
            "parallel_dual_updates": True,
            "momentum": acceleration.Momentum(start=0, value=0.5),
        }
    return sinkhorn.Sinkhorn(
        threshold=solver.threshold,
        max_iterations=solver.max_iterations,
        inner_iterations=solver.inner_iterations,
        lse_mode=not solver.kernel,
        **options,
    )(problem)


def _summary(
    out: sinkhorn.SinkhornOutput, solver: _Solver
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Cost, converged, iterations and last marginal error of a solve."""
    errors = out.errors.reshape(out.errors.shape[0], -1)[:, 0]
    last = jnp.maximum(jnp.sum(errors != -1) - 1, 0)
    error = errors[last]
    # OTT also stops (and flags converged) when the error turns non-finite: not a convergence.
    converged = out.converged & jnp.isfinite(error) & jnp.isfinite(out.reg_ot_cost)
    return out.reg_ot_cost, converged & (error < solver.threshold), out.n_iters, error


_solve_arrays = jax.jit(_solve_core, static_argnames=("solver",))


@partial(jax.jit, static_argnames=("solver", "lanes"))
def _solve_stack(
    xs: jax.Array,
    ys: jax.Array,
    a: jax.Array,
    b: jax.Array,
    epsilon: jax.Array,
    anneal_init: jax.Array,
    solver: _Solver,
    lanes: int,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """:func:`_solve_core` over a leading axis of padded clouds, in one compiled call.

    ``lanes`` problems at a time are vmapped. Vmapping a solve turns its loop's branches
    (the error check every ``inner_iterations``) into selects that run every iteration, and
    runs every lane until the slowest converges: worth it where one problem leaves an
    accelerator idle, not on a CPU (there ``lanes`` is 1: one problem after another).
    """

    def one(problem: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        return _solve_core(*problem, epsilon, anneal_init, solver)

    return jax.lax.map(one, (xs, ys, a, b), batch_size=lanes)


def _padded_size(n: int, multiple: int) -> int:
    return max(multiple, math.ceil(n / multiple) * multiple)


def _pad(cloud: np.ndarray, weights: np.ndarray | None, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pad a cloud to ``size`` points with zero-weight copies of its first point."""
    cloud = np.asarray(cloud, dtype=np.float32)
    n = cloud.shape[0]
    if weights is None:
        weights = np.full(n, 1.0 / n, dtype=np.float32)
    weights = np.asarray(weights, dtype=np.float32)
    extra = size - n
    padded = np.concatenate([cloud, np.repeat(cloud[:1], extra, axis=0)])
    return padded, np.concatenate([weights, np.zeros(extra, dtype=np.float32)])


def _check_cloud(cloud: np.ndarray, label: str) -> None:
    if cloud.ndim != 2 or cloud.shape[0] == 0:
        raise ValueError(f"point cloud {label} must have shape (n_points, dim), got {cloud.shape}")
    if not np.all(np.isfinite(cloud)):
        raise ValueError(f"point cloud {label} holds NaN or infinite values")


def _solver(settings: SinkhornSettings, n_points: int, *, symmetric: bool) -> _Solver:
    batch_size = settings.batch_size
    if batch_size is None and n_points > settings.max_dense_points:
        batch_size = 1024
    if batch_size is not None:
        ensure_online_mode()
    anneal = settings.anneal and not symmetric
    annealed = anneal and (settings.anneal_init is None or settings.anneal_init > 1.0)
    return _Solver(
        anneal_decay=settings.anneal_decay if anneal else 1.0,
        threshold=settings.threshold,
        max_iterations=settings.max_iterations,
        inner_iterations=settings.inner_iterations,
        batch_size=batch_size,
        symmetric=symmetric,
        momentum=None if symmetric or annealed else settings.momentum,
        kernel=_kernel_updates(settings, dense=batch_size is None, annealed=annealed),
    )


def _kernel_updates(settings: SinkhornSettings, *, dense: bool, annealed: bool) -> bool:
    """Whether a solve runs kernel (scaling) updates; see ``SinkhornSettings.updates``."""
    if settings.updates == "kernel" and (annealed or not dense):
        raise ConfigError(
            "distance.sinkhorn.updates=kernel needs one fixed epsilon and a dense cost matrix: "
            "set anneal: false and batch_size: null, or updates: auto (kernel where possible)"
        )
    return settings.updates != "log" and dense and not annealed


def solve_ot(
    x: np.ndarray,
    y: np.ndarray,
    settings: SinkhornSettings,
    weights: tuple[np.ndarray | None, np.ndarray | None] | None = None,
    *,
    symmetric: bool = False,
    size: int | None = None,
) -> SolveDiagnostics:
    """Solve one regularised transport problem ``OT_eps(x, y)`` (one term of a divergence).

    Args:
        x: ``(n, d)`` source points.
        y: ``(m, d)`` target points.
        settings: solver settings; ``epsilon`` None is derived from this pair alone (a run
            should call :func:`resolve_settings` once instead).
        weights: ``(a, b)`` point weights (each None = uniform); zeros are allowed.
        symmetric: ``x`` and ``y`` are the same measure (self term): symmetric updates.
        size: pad both clouds to this many points (default: the bucket of the larger one).

    Returns:
        The regularised cost with the solver's convergence diagnostics.
    """
    x, y = np.asarray(x), np.asarray(y)
    _check_cloud(x, "x")
    _check_cloud(y, "y")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"point clouds differ in dimension: {x.shape[1]} vs {y.shape[1]}")
    a, b = weights if weights is not None else (None, None)
    settings = resolve_settings(settings, [x, y])
    if settings.solver == "exact":
        return _exact_term(x, y, (a, b), symmetric=symmetric)
    size = size or _padded_size(max(len(x), len(y)), settings.pad_multiple)
    padded = (*_pad(x, a, size), *_pad(y, b, size))
    diag = _run_padded([padded], settings, size, symmetric=symmetric)[0]
    return _retry(padded, settings, size, diag, symmetric=symmetric)


def _exact_term(
    x: np.ndarray, y: np.ndarray, weights: tuple, *, symmetric: bool
) -> SolveDiagnostics:
    """One term in the exact limit; a self term is 0 (the identity plan), no solve needed."""
    if symmetric:
        return SolveDiagnostics(0.0, True, 0, 0.0)
    return _exact_diagnostics(*exact_ot(x, y, weights))


def _exact_diagnostics(cost: float, optimal: bool) -> SolveDiagnostics:
    return SolveDiagnostics(cost, optimal, 0, 0.0 if optimal else math.inf)


def _retry(
    padded: tuple[np.ndarray, ...],
    settings: SinkhornSettings,
    size: int,
    diag: SolveDiagnostics,
    *,
    symmetric: bool,
) -> SolveDiagnostics:
    """Solve a term again where a setting chosen for speed failed it, not the problem.

    Kernel updates that did not converge (or ended with a point's kernel sum at 0) are re-run
    with log updates; an over-relaxed cross term that ended non-finite is re-run without
    momentum.
    """
    if not diag.converged and _solver(settings, size, symmetric=symmetric).kernel:
        warnings.warn(
            f"Sinkhorn kernel updates at epsilon {settings.epsilon:.4g} did not converge "
            f"(marginal error {diag.error:.2e} after {diag.iterations} iterations, or a point's "
            "kernel sum underflowed to 0); solving again with log updates (updates: log skips "
            "the kernel attempt)",
            RuntimeWarning,
            stacklevel=3,
        )
        settings = replace(settings, updates="log")
        diag = _run_padded([padded], settings, size, symmetric=symmetric)[0]
    if math.isfinite(diag.cost) or settings.momentum is None or symmetric:
        return diag
    warnings.warn(
        f"Sinkhorn with momentum {settings.momentum} gave a non-finite cost ({diag.cost}) after "
        f"{diag.iterations} iterations; solving again without momentum (set momentum: null "
        "to avoid the second solve)",
        RuntimeWarning,
        stacklevel=3,
    )
    return _run_padded([padded], replace(settings, momentum=None), size, symmetric=False)[0]


def _run_padded(
    problems: list[tuple[np.ndarray, ...]],
    settings: SinkhornSettings,
    size: int,
    *,
    symmetric: bool,
) -> list[SolveDiagnostics]:
    """Solve padded problems ``(x, a, y, b)``: one compiled call, vmapped when several.

    Never reports a non-finite cost as converged (see :func:`_solve_core`).
    """
    solver = _solver(settings, size, symmetric=symmetric)
    # A self term starts near its optimum (the diagonal plan): annealing would only slow it.
    anneal_init = settings.anneal_init if settings.anneal and not symmetric else 1.0
    args = (jnp.float32(settings.epsilon), jnp.float32(anneal_init))
    with jax.default_matmul_precision("highest"):
        if len(problems) == 1:
            x, a, y, b = problems[0]
            outs = [np.atleast_1d(v) for v in _solve_arrays(x, y, a, b, *args, solver=solver)]
        else:
            x, a, y, b = (np.stack(parts) for parts in zip(*problems, strict=True))
            lanes = 1 if jax.default_backend() == "cpu" else len(problems)
            stack = _solve_stack(x, y, a, b, *args, solver=solver, lanes=lanes)
            outs = [np.asarray(v) for v in stack]
    return [
        SolveDiagnostics(float(c), bool(ok), int(it), float(err))
        for c, ok, it, err in zip(*outs, strict=True)
    ]


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

    Args:
        x: ``(n, d)`` point cloud of one group.
        y: ``(m, d)`` point cloud of the other group.
        settings: solver settings (epsilon None: derived from the two clouds pooled).
        x_weights: weights of ``x`` (default uniform).
        y_weights: weights of ``y`` (default uniform).

    Returns:
        The divergence and the diagnostics of its three terms.
    """
    settings = resolve_settings(settings, [np.asarray(x), np.asarray(y)])
    size = _padded_size(max(len(x), len(y)), settings.pad_multiple)
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
            _check_cloud(np.asarray(cloud), f"{group!r} in repetition {r}")
    return groups


def _row(r: int, a: str, b: str, epsilon: float, terms: tuple[SolveDiagnostics, ...]) -> dict:
    row: dict[str, Any] = {"repetition": r, "group_a": a, "group_b": b}
    row["divergence"] = _divergence(*terms)
    row["epsilon"] = epsilon
    for term, diag in zip(TERMS, terms, strict=True):
        row.update({f"{term}_{key}": value for key, value in asdict(diag).items()})
    return row


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


def _row_epsilon(settings: SinkhornSettings) -> float:
    """The epsilon a row was solved at: 0 in the exact limit."""
    return 0.0 if settings.solver == "exact" else float(settings.epsilon)


def _solve_many(
    problems: list[tuple[np.ndarray, ...]],
    settings: SinkhornSettings,
    size: int,
    *,
    symmetric: bool,
) -> list[SolveDiagnostics]:
    """Padded problems in as few vmapped calls as :data:`BATCH_BYTES` allows.

    Chunks are of equal width (the last one filled with copies of the first problem) so that
    every chunk shares one compiled program.
    """
    columns = settings.batch_size or size
    if settings.batch_size is None and size > settings.max_dense_points:
        columns = 1024
    per_problem = 3 * 4 * size * columns
    chunk = max(1, min(len(problems), BATCH_BYTES // per_problem))
    n_chunks = math.ceil(len(problems) / chunk)
    width = math.ceil(len(problems) / n_chunks)
    filled = problems + [problems[0]] * (n_chunks * width - len(problems))
    out: list[SolveDiagnostics] = []
    for start in range(0, len(filled), width):
        check_stop()  # a safe point between compiled calls
        out += _run_padded(filled[start : start + width], settings, size, symmetric=symmetric)
    return out[: len(problems)]


def _repetition_batched(
    r: int, draw: dict[str, np.ndarray], settings: SinkhornSettings, size: int, bar: tqdm
) -> list[dict[str, Any]]:
    """All pairs of one repetition: the K self terms in one call, the cross terms in another."""
    groups = list(draw)
    padded = {g: _pad(np.asarray(c), None, size) for g, c in draw.items()}
    selves = _solve_many([(*padded[g], *padded[g]) for g in groups], settings, size, symmetric=True)
    own = {
        g: _retry((*padded[g], *padded[g]), settings, size, diag, symmetric=True)
        for g, diag in zip(groups, selves, strict=True)
    }
    for group in groups:
        _warn_unconverged(r, f"the self term of {group!r}", own[group], settings)
    bar.update(len(groups))
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    problems = [(*padded[a], *padded[b]) for a, b in pairs]
    cross = _solve_many(problems, settings, size, symmetric=False)
    rows = []
    for (a, b), problem, xy in zip(pairs, problems, cross, strict=True):
        xy = _retry(problem, settings, size, xy, symmetric=False)
        _warn_unconverged(r, f"pair {a!r}-{b!r}", xy, settings)
        rows.append(_row(r, a, b, _row_epsilon(settings), (xy, own[a], own[b])))
    bar.update(len(pairs))
    return rows


def _repetition_exact(r: int, draw: dict[str, np.ndarray], bar: Any) -> list[dict[str, Any]]:
    """All pairs of one repetition in the exact limit: self terms 0, cross terms on all cores."""
    groups = list(draw)
    own = {g: _exact_term(c, c, (None, None), symmetric=True) for g, c in draw.items()}
    bar.update(len(groups))
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]

    def done() -> None:
        bar.update()
        check_stop()  # a safe point: problems not yet started are cancelled

    results = exact_ot_many([(draw[a], draw[b]) for a, b in pairs], done)
    rows = []
    for (a, b), (cost, optimal) in zip(pairs, results, strict=True):
        xy = _exact_diagnostics(cost, optimal)
        rows.append(_row(r, a, b, 0.0, (xy, own[a], own[b])))
    return rows


def _repetition_rows(
    r: int, draw: dict[str, np.ndarray], settings: SinkhornSettings, size: int, bar: Any
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
    size = padded_size(clouds, settings)
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


def padded_size(clouds: list[np.ndarray], settings: SinkhornSettings) -> int:
    """The one size every cloud of a run is padded to (one compiled solve)."""
    return padded_points(max(len(c) for c in clouds), settings)


def padded_points(n_points: int, settings: SinkhornSettings) -> int:
    """The size a cloud of ``n_points`` points is padded to (a multiple of ``pad_multiple``)."""
    return _padded_size(n_points, settings.pad_multiple)


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


def divergences(
    pairs: list[tuple[np.ndarray, np.ndarray]], settings: SinkhornSettings, size: int
) -> list[DivergenceResult]:
    """Divergences of many pairs of clouds at one padded size: self terms in one batched call,
    cross terms in another (the relabelled pairs of a test), each retried as
    :func:`solve_ot` retries.

    Args:
        pairs: ``(x, y)`` clouds, each at most ``size`` points.
        settings: the run's resolved settings (sinkhorn solver).
        size: the padded size.
    """
    if settings.solver == "exact":
        return [divergence_from(x, y, settings, size) for x, y in pairs]
    padded = [(_pad(np.asarray(x), None, size), _pad(np.asarray(y), None, size)) for x, y in pairs]
    selves = [(*p, *p) for pair in padded for p in pair]
    own = _solve_many(selves, settings, size, symmetric=True)
    own = [_retry(p, settings, size, d, symmetric=True) for p, d in zip(selves, own, strict=True)]
    cross = [(*x, *y) for x, y in padded]
    xys = _solve_many(cross, settings, size, symmetric=False)
    xys = [_retry(p, settings, size, d, symmetric=False) for p, d in zip(cross, xys, strict=True)]
    return [
        DivergenceResult(
            _divergence(xy, own[2 * i], own[2 * i + 1]), xy, own[2 * i], own[2 * i + 1]
        )
        for i, xy in enumerate(xys)
    ]


def divergence_from(
    x: np.ndarray,
    y: np.ndarray,
    settings: SinkhornSettings,
    size: int,
    x_self: SolveDiagnostics | None = None,
) -> DivergenceResult:
    """The divergence of ``x`` and ``y`` at a run's padded size, re-using ``x``'s self term."""
    xy = solve_ot(x, y, settings, size=size)
    xx = x_self or solve_ot(x, x, settings, symmetric=True, size=size)
    yy = solve_ot(y, y, settings, symmetric=True, size=size)
    return DivergenceResult(_divergence(xy, xx, yy), xy, xx, yy)
