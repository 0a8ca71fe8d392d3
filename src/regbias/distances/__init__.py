"""Stages II and III: distances between groups in the pre-trained encoder's embedding space.

One module (or subpackage) per method, each with the plugin the suite runs
(:mod:`regbias.distances.plugin`): :mod:`~regbias.distances.sinkhorn` (the Sinkhorn divergence
of token clouds), :mod:`~regbias.distances.energy` (the energy distance),
:mod:`~regbias.distances.lda` and :mod:`~regbias.distances.lda_distance` (LDA centroid
distances). :mod:`~regbias.distances.suite` runs the configured ones; a matrix is a
:class:`~regbias.distances.matrix.DistanceMatrix`. Importing the package registers the shipped
distances, so their matrices have their labels (:func:`distance_label`) in any process.
"""

from regbias.distances.energy import EnergyDistance
from regbias.distances.lda_distance import LdaDistance
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.plugin import Distance, distance_label
from regbias.distances.sinkhorn.distance import SinkhornDistance

__all__ = [
    "Distance",
    "DistanceMatrix",
    "EnergyDistance",
    "LdaDistance",
    "SinkhornDistance",
    "distance_label",
]
