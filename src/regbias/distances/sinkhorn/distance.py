"""``distance.sinkhorn``: the Sinkhorn divergence as the distance suite runs it.

Per draw kind (short texts, passages) one matrix, with noise floors where the draws have twins
and the pair ranking across epsilons where ``sensitivity.epsilons`` are set. Epsilon, the
annealing start, the solver and the updates are fixed once per sweep from a calibration draw
(:meth:`SinkhornDistance.calibrate`), else once per job from all its clouds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from regbias.distances.plugin import Distance, DistanceInputs, DistanceSuiteResult, timed_step
from regbias.distances.sinkhorn.divergence import sinkhorn_matrix
from regbias.distances.sinkhorn.floors import sinkhorn_floors
from regbias.distances.sinkhorn.sensitivity import epsilon_sensitivity, ranking_stability
from regbias.distances.sinkhorn.settings import (
    ResolvedSinkhorn,
    SinkhornSettings,
    needs_calibration,
    resolve_settings,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpsilonSensitivity:
    """``distance.sinkhorn.sensitivity``: repetition 0 again at other epsilons.

    Attributes:
        epsilons: epsilons in OTT units (cost ``|x-y|^2``); none: no sensitivity tables.
        exact_max_points: the exact-OT limit is added where no cloud holds more points.
    """

    epsilons: list[float]
    exact_max_points: int


@dataclass(frozen=True, kw_only=True)
class SinkhornDistance(SinkhornSettings, Distance):
    """The debiased Sinkhorn divergence of token clouds (the solver's fields are inherited).

    Attributes:
        enabled: compute ``sinkhorn_short`` and ``sinkhorn_long``.
        sensitivity: see :class:`EpsilonSensitivity`.
        calibrated: the sweep's resolved solver settings (:meth:`calibrate`); never a config key.
    """

    prefix = "sinkhorn"
    title = "Sinkhorn distance"
    kinds = ("short", "long")

    enabled: bool
    sensitivity: EpsilonSensitivity
    calibrated: ResolvedSinkhorn | None = None

    def needs_calibration(self) -> bool:
        """Whether epsilon, the annealing start, the solver or the updates are left to derive."""
        return needs_calibration(self)

    def calibrate(self, inputs: DistanceInputs) -> SinkhornDistance:
        """These settings resolved from the calibration draw's clouds, for every job of a sweep."""
        kinds = [k for k in self.kinds if k in inputs.kinds()]
        if not kinds:
            return self
        clouds = [c for k in kinds for rep in inputs.clouds(k) for c in rep.values()]
        return replace(self, calibrated=resolve_settings(self, clouds))

    def measure(self, inputs: DistanceInputs) -> DistanceSuiteResult:
        """Per drawn kind the matrix, its floors and sensitivity."""
        result = DistanceSuiteResult()
        kinds = [k for k in self.kinds if k in inputs.kinds()]
        if not kinds:
            return result
        clouds = {k: inputs.clouds(k) for k in kinds}
        # What the sweep did not fix is fixed once here, over every cloud of the job.
        pooled = [c for k in kinds for rep in clouds[k] for c in rep.values()]
        settings = resolve_settings(self.calibrated or self, pooled)
        log.info(
            "Sinkhorn solver %s, updates %s, epsilon %.6g, %s",
            settings.solver,
            settings.updates,
            settings.epsilon,
            _annealing(settings),
        )
        result.epsilon = settings.epsilon
        for kind in kinds:
            self._kind(inputs, kind, clouds[kind], settings, result)
        return result

    def _kind(
        self,
        inputs: DistanceInputs,
        kind: str,
        clouds: list[dict[str, Any]],
        settings: ResolvedSinkhorn,
        result: DistanceSuiteResult,
    ) -> None:
        name = self.matrix_name(kind)
        exclude = inputs.exclude_unconverged
        with timed_step(result.timings, name):
            matrix, table = sinkhorn_matrix(
                clouds, settings, name=name, exclude_unconverged=exclude
            )
        size = int(matrix.config["n_points_padded"])
        if inputs.has_twins(kind):
            twins = inputs.clouds(kind, twins=True)
            with timed_step(result.timings, f"{name}_floor"):
                floor, floor_sd = sinkhorn_floors(clouds, twins, table, settings, size)
            matrix = replace(matrix, floor=floor, floor_sd=floor_sd)
        result.matrices[name], result.diagnostics[name] = matrix, table
        if self.sensitivity.epsilons:
            values = epsilon_sensitivity(
                clouds[0], settings, self.sensitivity.epsilons, self.sensitivity.exact_max_points
            )
            result.sensitivity[name] = values
            result.sensitivity[f"{name}_stability"] = ranking_stability(values)


def _annealing(settings: ResolvedSinkhorn) -> str:
    """How the solves anneal, for the log (the exact limit and ``anneal=false`` do not)."""
    if settings.solver == "exact" or not settings.anneal or settings.anneal_init is None:
        return "no annealing"
    return f"annealing from {settings.anneal_init:.4g} x"
