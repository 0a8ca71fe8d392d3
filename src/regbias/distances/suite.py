"""Stages II and III of a job: embed the drawn texts once, then Sinkhorn and LDA matrices."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from regbias.data.draws import DistanceDraws, DrawSizes, validate_draw_sizes
from regbias.distances.energy import EnergySettings, energy_matrix
from regbias.distances.lda import LdaProjection, LdaSettings, lda_distance_matrix, lda_projection
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.sinkhorn import sinkhorn_matrix
from regbias.distances.sinkhorn.floors import sinkhorn_floors
from regbias.distances.sinkhorn.relabellings import sinkhorn_relabellings
from regbias.distances.sinkhorn.sensitivity import epsilon_sensitivity, ranking_stability
from regbias.distances.sinkhorn.settings import ResolvedSinkhorn, SinkhornSettings, resolve_settings
from regbias.embeddings.cache import EmbeddingCache, embed_tokens
from regbias.embeddings.encoder import Encoder
from regbias.embeddings.joint import embed_jointly
from regbias.errors import ConfigError

__all__ = [
    "DistanceSettings",
    "DistanceSuiteResult",
    "LongSettings",
    "ShortSettings",
    "calibrate_sinkhorn",
    "run_distance_suite",
]

log = logging.getLogger(__name__)


@contextmanager
def _step(timings: dict[str, float], name: str) -> Iterator[None]:
    """Wall seconds of one step of the suite, logged and kept in ``timings``."""
    start = time.perf_counter()
    yield
    timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
    log.info("%s took %.1f s", name, time.perf_counter() - start)


@dataclass(frozen=True)
class ShortSettings:
    """``distance.short``: single texts per draw."""

    enabled: bool
    texts_per_draw: int


@dataclass(frozen=True)
class LongSettings:
    """``distance.long``: passages per draw, each joining up to ``texts_per_passage`` texts.

    With ``fit_window`` a passage takes texts only while it fits the encoder's window (none is
    cut off); without, it joins ``texts_per_passage`` texts whatever their length (the first
    version's passages, whose tail the encoder truncates).
    """

    enabled: bool
    passages_per_draw: int
    texts_per_passage: int
    fit_window: bool


@dataclass(frozen=True)
class SentenceSettings:
    """``distance.sentences``: texts per draw for the energy distance of sentence vectors."""

    enabled: bool
    texts_per_draw: int | None


@dataclass(frozen=True)
class DistanceSettings:
    """The ``distance`` config group: stages II and III (see ``conf/distance/default.yaml``)."""

    enabled: bool
    repetitions: int
    matched_pool: bool
    pool_size: int | None
    floors: bool
    relabellings: int
    exclude_unconverged: bool
    calibration_seed: int | None
    tokens: Literal["real", "all"]
    short: ShortSettings
    long: LongSettings
    sinkhorn: SinkhornSettings
    lda: LdaSettings
    energy: EnergySettings = field(default_factory=EnergySettings)
    relabel_seed: int = 0
    sentences: SentenceSettings = field(default_factory=lambda: SentenceSettings(True, None))

    def __post_init__(self) -> None:
        validate_draw_sizes(self.draw_sizes(), enabled=self.enabled)
        if self.relabellings < 0:
            raise ConfigError(f"distance.relabellings must be >= 0, not {self.relabellings}")
        if self.pool_size is not None and self.pool_size < 2:
            raise ConfigError(
                f"distance.pool_size must be at least 2 or null, not {self.pool_size}"
            )

    def draw_sizes(self) -> DrawSizes:
        """The sizes of the suite's draws (a disabled measurement draws nothing)."""
        return DrawSizes(
            repetitions=self.repetitions if self.enabled else 0,
            short_texts=self.short.texts_per_draw if self.short.enabled else None,
            long_passages=self.long.passages_per_draw if self.long.enabled else None,
            texts_per_passage=self.long.texts_per_passage,
            lda_passages=self.lda.passages_per_group if self.lda.enabled else None,
            matched_pool=self.matched_pool,
            pool_size=self.pool_size,
            floors=self.floors,
            sentences=self.sentences.enabled and self.energy.enabled,
            sentence_texts=self.sentences.texts_per_draw,
        )


@dataclass
class DistanceSuiteResult:
    """The matrices, the Sinkhorn diagnostics per kind, and the epsilon used for every pair."""

    matrices: dict[str, DistanceMatrix] = field(default_factory=dict)
    diagnostics: dict[str, pd.DataFrame] = field(default_factory=dict)
    epsilon: float | None = None
    lda_projection: LdaProjection | None = None
    sensitivity: dict[str, pd.DataFrame] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def _clouds(
    reps: list[dict[str, list[str]]], tokens: dict[str, np.ndarray]
) -> list[dict[str, np.ndarray]]:
    """One point cloud per group and repetition: the token vectors of its texts, stacked."""
    return [
        {g: np.concatenate([tokens[t] for t in texts]) for g, texts in rep.items()} for rep in reps
    ]


def calibrate_sinkhorn(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: DistanceSettings,
) -> ResolvedSinkhorn:
    """The sweep's Sinkhorn settings, resolved from a calibration draw.

    Epsilon, the annealing start, the solver (``auto``: exact or sinkhorn) and the updates
    (``auto``: kernel or log) are fixed here once. ``draws`` should not depend on the job's
    seed (the app draws them with the sweep's calibration seed), so every job of a sweep
    solves the same way and their matrices can be pooled. Configured values are kept.
    """
    kinds = [k for k in ("short", "long") if k in draws.texts]
    tokens = _tokens(draws, kinds, encoder, cache, distance)
    pooled = [c for k in kinds for rep in _clouds(draws.texts[k], tokens) for c in rep.values()]
    return resolve_settings(distance.sinkhorn, pooled)


def run_distance_suite(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: DistanceSettings,
    *,
    seed: int = 0,
    calibrated: ResolvedSinkhorn | None = None,
    sensitivity: tuple[list[float], int] | None = None,
) -> DistanceSuiteResult:
    """Embed every drawn text once (cached), then compute the enabled matrices.

    One epsilon serves every pair: that of ``calibrated`` when given (the sweep's resolved
    Sinkhorn settings, see :func:`calibrate_sinkhorn`), else the configured one, else one
    derived once from the pooled clouds of all repetitions and kinds of this job. Where the
    draws have twins the matrices carry noise floors. Each distance with relabellings
    (``distance.relabellings`` for Sinkhorn, ``distance.energy.relabellings``,
    ``distance.lda.relabellings``) carries the sums of its joint relabellings, seeded by the
    sweep-level ``distance.relabel_seed`` (never the job's seed: relabelling k must be the same
    in every job). ``seed`` seeds the LDA halves and floor splits. With ``sensitivity`` =
    (epsilons, exact_max_points), repetition 0 of each Sinkhorn kind is recomputed at those
    epsilons and at the exact-OT limit (``result.sensitivity``).
    """
    result = DistanceSuiteResult()
    kinds = [k for k in ("short", "long") if k in draws.texts]
    with _step(result.timings, "embed"):
        joint = embed_jointly(
            encoder,
            cache,
            draws.distinct_texts(kinds),
            draws.distinct_texts([k for k in ("sentence", "lda") if k in draws.texts]),
            padding=_padding(distance),
        )
    tokens = joint.tokens
    if kinds:
        _sinkhorn_kinds(draws, kinds, tokens, distance, calibrated, result, sensitivity)
        if distance.energy.enabled:
            _energy_kinds(draws, kinds, tokens, distance, result)
    if "sentence" in draws.texts:
        _energy_sentences(draws, joint.pooled, distance, result)
    if "lda" in draws.texts:
        reps = draws.texts["lda"]
        vectors = joint.pooled
        pooled = [{g: np.stack([vectors[t] for t in ts]) for g, ts in rep.items()} for rep in reps]
        settings = distance.lda
        with _step(result.timings, "lda"):
            result.matrices["lda"] = lda_distance_matrix(
                pooled,
                settings,
                name="lda",
                seed=seed,
                units=draws.units.get("lda"),
                relabel_seed=distance.relabel_seed,
            )
        result.lda_projection = lda_projection(pooled[0], settings)
    return result


def _tokens(
    draws: DistanceDraws,
    kinds: list[str],
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: DistanceSettings,
) -> dict[str, np.ndarray]:
    texts = draws.distinct_texts(kinds)
    padding = _padding(distance)
    return dict(zip(texts, embed_tokens(encoder, cache, texts, padding=padding), strict=True))


def _padding(distance: DistanceSettings) -> Literal["real", "max_length"]:
    return "real" if distance.tokens == "real" else "max_length"


def _per_text(
    reps: list[dict[str, list[str]]], tokens: dict[str, np.ndarray]
) -> list[dict[str, list[np.ndarray]]]:
    return [{g: [tokens[t] for t in ts] for g, ts in rep.items()} for rep in reps]


def _energy_kinds(
    draws: DistanceDraws,
    kinds: list[str],
    tokens: dict[str, np.ndarray],
    distance: DistanceSettings,
    result: DistanceSuiteResult,
) -> None:
    for kind in kinds:
        twins = _per_text(draws.twins[kind], tokens) if kind in draws.twins else None
        with _step(result.timings, f"energy_{kind}"):
            result.matrices[f"energy_{kind}"] = energy_matrix(
                _per_text(draws.texts[kind], tokens),
                name=f"energy_{kind}",
                units=draws.units.get(kind),
                twins=twins,
                relabellings=distance.energy.relabellings,
                relabel_seed=distance.relabel_seed,
            )


def _energy_sentences(
    draws: DistanceDraws,
    pooled: dict[str, np.ndarray],
    distance: DistanceSettings,
    result: DistanceSuiteResult,
) -> None:
    """``energy_sentence``: the energy distance of the groups' sentence (pooled) vectors."""
    texts = draws.distinct_texts(["sentence"])
    vectors = {t: pooled[t][None, :] for t in texts}
    twins = _per_text(draws.twins["sentence"], vectors) if "sentence" in draws.twins else None
    with _step(result.timings, "energy_sentence"):
        result.matrices["energy_sentence"] = energy_matrix(
            _per_text(draws.texts["sentence"], vectors),
            name="energy_sentence",
            units=draws.units.get("sentence"),
            twins=twins,
            relabellings=distance.energy.relabellings,
            relabel_seed=distance.relabel_seed,
        )


def _annealing(settings: ResolvedSinkhorn) -> str:
    """How the solves anneal, for the log (the exact limit and ``anneal=false`` do not)."""
    if settings.solver == "exact" or not settings.anneal or settings.anneal_init is None:
        return "no annealing"
    return f"annealing from {settings.anneal_init:.4g} x"


def _sinkhorn_kinds(
    draws: DistanceDraws,
    kinds: list[str],
    tokens: dict[str, np.ndarray],
    distance: DistanceSettings,
    calibrated: ResolvedSinkhorn | None,
    result: DistanceSuiteResult,
    sensitivity: tuple[list[float], int] | None = None,
) -> None:
    clouds = {k: _clouds(draws.texts[k], tokens) for k in kinds}
    # What the sweep did not fix is fixed once here, over every cloud of the job.
    pooled = [c for k in kinds for rep in clouds[k] for c in rep.values()]
    settings = resolve_settings(calibrated or distance.sinkhorn, pooled)
    log.info(
        "Sinkhorn solver %s, updates %s, epsilon %.6g, %s",
        settings.solver,
        settings.updates,
        settings.epsilon,
        _annealing(settings),
    )
    result.epsilon = settings.epsilon
    exclude = distance.exclude_unconverged
    relabellings = distance.relabellings
    for kind in kinds:
        name = f"sinkhorn_{kind}"
        with _step(result.timings, name):
            matrix, table = sinkhorn_matrix(
                clouds[kind], settings, name=name, exclude_unconverged=exclude
            )
        size = int(matrix.config["n_points_padded"])
        if kind in draws.twins:
            twins = _clouds(draws.twins[kind], tokens)
            with _step(result.timings, f"{name}_floor"):
                floor, floor_sd = sinkhorn_floors(clouds[kind], twins, table, settings, size)
            matrix = replace(matrix, floor=floor, floor_sd=floor_sd)
        config = matrix.config | {
            "relabellings": relabellings,
            "relabel_seed": distance.relabel_seed,
        }
        matrix = replace(matrix, config=config)
        if relabellings > 0:
            with _step(result.timings, f"{name}_relabellings"):
                null = sinkhorn_relabellings(
                    _per_text(draws.texts[kind], tokens),
                    draws.units.get(kind),
                    table,
                    settings,
                    relabellings,
                    distance.relabel_seed,
                    exclude_unconverged=exclude,
                )
            matrix = replace(matrix, null=null)
        result.matrices[name], result.diagnostics[name] = matrix, table
        if sensitivity and sensitivity[0]:
            values = epsilon_sensitivity(clouds[kind][0], settings, *sensitivity)
            result.sensitivity[name] = values
            result.sensitivity[f"{name}_stability"] = ranking_stability(values)
