"""Stage II's Sinkhorn divergence, one module per part of the method.

- :mod:`~regbias.distances.sinkhorn.settings`: ``distance.sinkhorn``'s solver settings, and
  their resolution (epsilon, annealing start, solver, updates) from the pooled cost.
- :mod:`~regbias.distances.sinkhorn.solve`: the OTT-JAX glue, one transport problem solved and
  retried; :mod:`~regbias.distances.sinkhorn.exact`: its epsilon -> 0 limit (POT).
- :mod:`~regbias.distances.sinkhorn.divergence`: the debiased divergence and a job's matrix.
- :mod:`~regbias.distances.sinkhorn.floors`: noise floors (a group against its twin draw).
- :mod:`~regbias.distances.sinkhorn.sensitivity`: the pair ranking across epsilons.
- :mod:`~regbias.distances.sinkhorn.distance`: the plugin the distance suite runs.
- :mod:`~regbias.distances.sinkhorn.jax_compat`: a shim between ott-jax and jax releases.
"""

from regbias.distances.sinkhorn.divergence import (
    DivergenceResult,
    ResolvedSinkhorn,
    SinkhornSettings,
    SolveDiagnostics,
    resolve_settings,
    sinkhorn_divergence,
    sinkhorn_matrix,
    solve_ot,
)
from regbias.distances.sinkhorn.settings import mean_pooled_cost

__all__ = [
    "DivergenceResult",
    "ResolvedSinkhorn",
    "SinkhornSettings",
    "SolveDiagnostics",
    "mean_pooled_cost",
    "resolve_settings",
    "sinkhorn_divergence",
    "sinkhorn_matrix",
    "solve_ot",
]
