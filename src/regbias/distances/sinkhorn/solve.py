"""The OTT-JAX glue: one regularised transport problem ``OT_eps(x, y)``, solved and retried.

Geometries (dense log-domain, online point clouds, a fixed kernel on the reduced cost), the
epsilon schedule, the compiled solve and its vmapped stack, padding, and the retries that undo
a setting chosen for speed when it fails the problem (kernel updates, momentum). The exact
limit (POT) answers the same call with ``solver: exact``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
from ott.geometry import costs, epsilon_scheduler, geometry, pointcloud
from ott.problems.linear import linear_problem
from ott.solvers.linear import acceleration, sinkhorn

from regbias.distances.sinkhorn.exact import exact_ot
from regbias.distances.sinkhorn.jax_compat import ensure_online_mode
from regbias.distances.sinkhorn.settings import (
    ResolvedSinkhorn,
    SinkhornSettings,
    kernel_updates,
    resolve_settings,
)
from regbias.interrupt import check_stop

logger = logging.getLogger(__name__)

# Bytes of cost matrices one batched call may hold (dense mode: ~3 n^2 float32 per problem).
BATCH_BYTES = 1 << 30

# On a CPU the problems of a batched call run one after another and a signal waits for the
# call to end: a call holds at most this many cost entries (points^2 x problems), so that a
# stop is checked every few seconds (one 4,096-point problem's iterations, or 128 of 1,024).
CPU_CALL_ENTRIES = 1 << 27


@dataclass(frozen=True)
class SolveDiagnostics:
    """One regularised transport solve: its cost and how the solver got there."""

    cost: float
    converged: bool
    iterations: int
    error: float


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
    # OTT annotates init as a float; a traced scalar works too, and one compile then serves
    # every start multiple.
    schedule = _Annealing(epsilon, init=cast(float, anneal_init), decay=solver.anneal_decay)
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
    # A traced epsilon (OTT annotates a float): one compile serves every epsilon.
    geom = _FixedKernel(cost_matrix=reduced, kernel_matrix=kernel, epsilon=cast(float, epsilon))
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
        options = {"momentum": _momentum(solver.momentum)}
    if solver.symmetric:
        # Feydy et al. (2019) eq. 25: averaged parallel updates, the fixed point of OT(x, x).
        options = {"parallel_dual_updates": True, "momentum": _momentum(0.5)}
    return sinkhorn.Sinkhorn(
        threshold=solver.threshold,
        max_iterations=solver.max_iterations,
        inner_iterations=solver.inner_iterations,
        lse_mode=not solver.kernel,
        **options,
    )(problem)


def _momentum(value: float) -> acceleration.Momentum:
    """OTT's constant over-relaxation ``value``, from the first iteration on."""
    # OTT's decorator makes Momentum a dataclass, which mypy cannot see: no keywords for it.
    return acceleration.Momentum(start=0, value=value)  # type: ignore[call-arg]


def _summary(
    out: sinkhorn.SinkhornOutput, solver: _Solver
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Cost, converged, iterations and last marginal error of a solve."""
    if out.errors is None or out.reg_ot_cost is None:
        raise RuntimeError("OTT's Sinkhorn output lacks its errors or its cost")
    errors = out.errors.reshape(out.errors.shape[0], -1)[:, 0]
    last = jnp.maximum(jnp.sum(errors != -1) - 1, 0)
    error = errors[last]
    # OTT annotates converged as a bool and n_iters as an int: both are arrays in a solve.
    flagged, iterations = cast(jax.Array, out.converged), cast(jax.Array, out.n_iters)
    # OTT also stops (and flags converged) when the error turns non-finite: not a convergence.
    converged = flagged & jnp.isfinite(error) & jnp.isfinite(out.reg_ot_cost)
    return out.reg_ot_cost, converged & (error < solver.threshold), iterations, error


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

    def one(problem: tuple[jax.Array, jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, ...]:
        x, y, x_weights, y_weights = problem
        return _solve_core(x, y, x_weights, y_weights, epsilon, anneal_init, solver)

    return jax.lax.map(one, (xs, ys, a, b), batch_size=lanes)


def padded_points(n_points: int, settings: SinkhornSettings) -> int:
    """The size a cloud of ``n_points`` points is padded to (a multiple of ``pad_multiple``)."""
    multiple = settings.pad_multiple
    return max(multiple, math.ceil(n_points / multiple) * multiple)


def pad(cloud: np.ndarray, weights: np.ndarray | None, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pad a cloud to ``size`` points with zero-weight copies of its first point."""
    cloud = np.asarray(cloud, dtype=np.float32)
    n = cloud.shape[0]
    if weights is None:
        weights = np.full(n, 1.0 / n, dtype=np.float32)
    weights = np.asarray(weights, dtype=np.float32)
    extra = size - n
    if extra < 0:
        raise ValueError(f"a cloud of {n} points cannot be padded to {size}: pad to the largest")
    padded = np.concatenate([cloud, np.repeat(cloud[:1], extra, axis=0)])
    return padded, np.concatenate([weights, np.zeros(extra, dtype=np.float32)])


def check_cloud(cloud: np.ndarray, label: str) -> None:
    """Raise ValueError unless ``cloud`` is a non-empty ``(n, d)`` array of finite values."""
    if cloud.ndim != 2 or cloud.shape[0] == 0:
        raise ValueError(f"point cloud {label} must have shape (n_points, dim), got {cloud.shape}")
    if not np.all(np.isfinite(cloud)):
        raise ValueError(f"point cloud {label} holds NaN or infinite values")


def solver_for(settings: SinkhornSettings, n_points: int, *, symmetric: bool) -> _Solver:
    """The static solver of a problem padded to ``n_points`` (self term if ``symmetric``)."""
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
        kernel=kernel_updates(settings, dense=batch_size is None, annealed=annealed),
    )


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

    ``epsilon`` None is derived from this pair alone (a run resolves its settings once instead:
    :func:`resolve_settings`); ``weights`` ``(a, b)`` default to uniform and may hold zeros;
    ``symmetric`` (a self term) takes symmetric updates; ``size`` (default: the bucket of the larger
    cloud) pads both. Returns the regularised cost with the solver's convergence diagnostics.
    """
    x, y = np.asarray(x), np.asarray(y)
    check_cloud(x, "x")
    check_cloud(y, "y")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"point clouds differ in dimension: {x.shape[1]} vs {y.shape[1]}")
    a, b = weights if weights is not None else (None, None)
    settings = resolve_settings(settings, [x, y])
    if settings.solver == "exact":
        return _exact_term(x, y, (a, b), symmetric=symmetric)
    size = size or padded_points(max(len(x), len(y)), settings)
    padded = (*pad(x, a, size), *pad(y, b, size))
    diag = run_padded([padded], settings, size, symmetric=symmetric)[0]
    return retry(padded, settings, size, diag, symmetric=symmetric)


def _exact_term(
    x: np.ndarray, y: np.ndarray, weights: tuple, *, symmetric: bool
) -> SolveDiagnostics:
    """One term in the exact limit; a self term is 0 (the identity plan), no solve needed."""
    if symmetric:
        return SolveDiagnostics(0.0, True, 0, 0.0)
    return exact_diagnostics(*exact_ot(x, y, weights))


def exact_diagnostics(cost: float, optimal: bool) -> SolveDiagnostics:
    """An exact solve as diagnostics: 0 iterations, error 0 if optimal, else infinite."""
    return SolveDiagnostics(cost, optimal, 0, 0.0 if optimal else math.inf)


def retry(
    padded: tuple[np.ndarray, ...],
    settings: ResolvedSinkhorn,
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
    if not diag.converged and solver_for(settings, size, symmetric=symmetric).kernel:
        check_stop()  # a safe point before a second solve
        warnings.warn(
            f"Sinkhorn kernel updates at epsilon {settings.epsilon:.4g} did not converge "
            f"(marginal error {diag.error:.2e} after {diag.iterations} iterations, or a point's "
            "kernel sum underflowed to 0); solving again with log updates (updates: log skips "
            "the kernel attempt)",
            RuntimeWarning,
            stacklevel=3,
        )
        settings = replace(settings, updates="log")
        diag = run_padded([padded], settings, size, symmetric=symmetric)[0]
    if math.isfinite(diag.cost) or settings.momentum is None or symmetric:
        return diag
    check_stop()
    warnings.warn(
        f"Sinkhorn with momentum {settings.momentum} gave a non-finite cost ({diag.cost}) after "
        f"{diag.iterations} iterations; solving again without momentum (set momentum: null "
        "to avoid the second solve)",
        RuntimeWarning,
        stacklevel=3,
    )
    return run_padded([padded], replace(settings, momentum=None), size, symmetric=False)[0]


def run_padded(
    problems: Sequence[tuple[np.ndarray, ...]],
    settings: ResolvedSinkhorn,
    size: int,
    *,
    symmetric: bool,
) -> list[SolveDiagnostics]:
    """Solve padded problems ``(x, a, y, b)``: one compiled call, vmapped when several.

    Never reports a non-finite cost as converged (see :func:`_solve_core`).
    """
    solver = solver_for(settings, size, symmetric=symmetric)
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


def solve_many(
    problems: Sequence[tuple[np.ndarray, ...]],
    settings: ResolvedSinkhorn,
    size: int,
    *,
    symmetric: bool,
) -> list[SolveDiagnostics]:
    """Padded problems in as few vmapped calls as :data:`BATCH_BYTES` allows.

    Chunks are of equal width (the last one filled with copies of the first problem) so that
    every chunk shares one compiled program; on a CPU a chunk holds at most
    :data:`CPU_CALL_ENTRIES` cost entries, and a stop is checked between chunks.
    """
    columns = settings.batch_size or size
    if settings.batch_size is None and size > settings.max_dense_points:
        columns = 1024
    per_problem = 3 * 4 * size * columns
    chunk = max(1, min(len(problems), BATCH_BYTES // per_problem))
    if jax.default_backend() == "cpu":
        chunk = max(1, min(chunk, CPU_CALL_ENTRIES // (size * size)))
    n_chunks = math.ceil(len(problems) / chunk)
    width = math.ceil(len(problems) / n_chunks)
    filled = [*problems, *[problems[0]] * (n_chunks * width - len(problems))]
    out: list[SolveDiagnostics] = []
    for start in range(0, len(filled), width):
        check_stop()  # a safe point between compiled calls
        out += run_padded(filled[start : start + width], settings, size, symmetric=symmetric)
    return out[: len(problems)]
