"""Stages II and III: distances between groups in the pre-trained encoder's embedding space."""

from regbias.distances.lda import LdaProjection, LdaSettings, lda_distance_matrix, lda_projection
from regbias.distances.matrix import DISTANCE_NAMES, DistanceMatrix
from regbias.distances.sinkhorn import (
    DivergenceResult,
    SinkhornSettings,
    SolveDiagnostics,
    derive_epsilon,
    mean_pooled_cost,
    resolve_settings,
    sinkhorn_divergence,
    sinkhorn_matrix,
    solve_ot,
)

__all__ = [
    "DISTANCE_NAMES",
    "DistanceMatrix",
    "DivergenceResult",
    "LdaProjection",
    "LdaSettings",
    "SinkhornSettings",
    "SolveDiagnostics",
    "derive_epsilon",
    "lda_distance_matrix",
    "lda_projection",
    "mean_pooled_cost",
    "resolve_settings",
    "sinkhorn_divergence",
    "sinkhorn_matrix",
    "solve_ot",
]
