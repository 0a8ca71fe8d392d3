"""``distance.lda``: the LDA centroid distance as the distance suite runs it (stage III)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from regbias.distances.lda import LdaSettings, check_components, lda_distance_matrix, lda_projection
from regbias.distances.plugin import Distance, DistanceInputs, DistanceSuiteResult, timed_step


@dataclass(frozen=True)
class LdaDistance(LdaSettings, Distance):
    """Distances between group centroids in an LDA projection of passage vectors.

    Its fields are :class:`~regbias.distances.lda.LdaSettings`'; it draws its own passages
    (``passages_per_group`` a group and repetition).
    """

    prefix = "lda"
    title = "LDA centroid distance"
    kinds = ("lda",)

    def draw_sizes(self) -> dict[str, tuple[int, str]]:
        """Its passages per group and repetition."""
        return {"lda": (self.passages_per_group, "passages_per_group")}

    def check_groups(self, n_groups: int) -> None:
        """At most ``n_groups - 1`` components."""
        check_components(self.n_components, n_groups)

    def meta(self) -> dict[str, Any]:
        """Whether it cross-fits."""
        return {"lda_cross_fit": self.cross_fit}

    def measure(self, inputs: DistanceInputs) -> DistanceSuiteResult:
        """The matrix, and the projection of repetition 0 (for its scatter plot)."""
        result = DistanceSuiteResult()
        if "lda" not in inputs.kinds():
            return result
        pooled = inputs.clouds("lda")
        with timed_step(result.timings, "lda"):
            result.matrices["lda"] = lda_distance_matrix(pooled, self, name="lda", seed=inputs.seed)
        result.lda_projection = lda_projection(pooled[0], self)
        return result
