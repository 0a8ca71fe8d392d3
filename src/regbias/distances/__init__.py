"""Stages II and III: distances between groups in the pre-trained encoder's embedding space."""

from regbias.distances.energy import EnergyDistance
from regbias.distances.lda import LdaProjection, LdaSettings, lda_distance_matrix, lda_projection
from regbias.distances.lda_distance import LdaDistance
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.plugin import Distance, distance_label
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
from regbias.distances.sinkhorn.distance import SinkhornDistance

__all__ = [
    "Distance",
    "EnergyDistance",
    "LdaDistance",
    "SinkhornDistance",
    "distance_label",
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
