"""Stages II and III of a job: embed the drawn texts once, then Sinkhorn and LDA matrices."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from regbias.data.draws import DistanceDraws
from regbias.data.sampling import rng_for
from regbias.distances.lda import LdaProjection, LdaSettings, lda_distance_matrix, lda_projection
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.noise import relabelling_pvalues, sinkhorn_floors
from regbias.distances.sinkhorn import SinkhornSettings, resolve_settings, sinkhorn_matrix
from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import Encoder

__all__ = ["DistanceSuiteResult", "sinkhorn_settings", "lda_settings", "run_distance_suite"]

log = logging.getLogger(__name__)


@dataclass
class DistanceSuiteResult:
    """The matrices, the Sinkhorn diagnostics per kind, and the epsilon used for every pair."""

    matrices: dict[str, DistanceMatrix] = field(default_factory=dict)
    diagnostics: dict[str, pd.DataFrame] = field(default_factory=dict)
    epsilon: float | None = None
    lda_projection: LdaProjection | None = None


def sinkhorn_settings(distance: Mapping[str, Any]) -> SinkhornSettings:
    """The ``distance.sinkhorn`` config as solver settings."""
    s = distance["sinkhorn"]
    return SinkhornSettings(
        epsilon=None if s.get("epsilon") is None else float(s["epsilon"]),
        epsilon_relative=float(s["epsilon_relative"]),
        anneal=bool(s["anneal"]),
        anneal_init=None if s.get("anneal_init") is None else float(s["anneal_init"]),
        anneal_start=float(s.get("anneal_start", 0.05)),
        anneal_decay=float(s["anneal_decay"]),
        threshold=float(s["threshold"]),
        max_iterations=int(s["max_iterations"]),
        batch_size=None if s.get("batch_size") is None else int(s["batch_size"]),
        max_dense_points=int(s["max_dense_points"]),
        inner_iterations=int(s["inner_iterations"]),
        momentum=None if s.get("momentum") is None else float(s["momentum"]),
        pad_multiple=int(s["pad_multiple"]),
        solver=str(s.get("solver", "auto")),
        exact_below=float(s.get("exact_below", 1e-3)),
        exact_max_points=int(s.get("exact_max_points", 5000)),
        batch_pairs=bool(s.get("batch_pairs", True)),
    )


def lda_settings(distance: Mapping[str, Any]) -> LdaSettings:
    """The ``distance.lda`` config as LDA settings."""
    lda = distance["lda"]
    shrinkage = lda.get("shrinkage")
    if shrinkage is not None and shrinkage != "auto":
        shrinkage = float(shrinkage)
    return LdaSettings(int(lda["n_components"]), str(lda["solver"]), shrinkage)


def _clouds(
    reps: list[dict[str, list[str]]], tokens: dict[str, np.ndarray]
) -> list[dict[str, np.ndarray]]:
    """One point cloud per group and repetition: the token vectors of its texts, stacked."""
    return [
        {g: np.concatenate([tokens[t] for t in texts]) for g, texts in rep.items()} for rep in reps
    ]


def calibrate_epsilon(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: Mapping[str, Any],
) -> tuple[float, float]:
    """The sweep's epsilon and annealing start, from a calibration draw.

    ``draws`` should not depend on the job's seed (the app draws them with the sweep's
    calibration seed), so every job of a sweep derives the same values and their matrices can
    be pooled. A configured epsilon is returned as it is.
    """
    kinds = [k for k in ("short", "long") if k in draws.texts]
    padding = "real" if distance["tokens"] == "real" else "max_length"
    texts = draws.distinct_texts(kinds)
    tokens = dict(zip(texts, embed_tokens(encoder, cache, texts, padding=padding), strict=True))
    pooled = [c for k in kinds for rep in _clouds(draws.texts[k], tokens) for c in rep.values()]
    settings = resolve_settings(sinkhorn_settings(distance), pooled)
    assert settings.epsilon is not None and settings.anneal_init is not None
    return float(settings.epsilon), float(settings.anneal_init)


def run_distance_suite(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: Mapping[str, Any],
    *,
    seed: int = 0,
    epsilon: tuple[float, float] | None = None,
) -> DistanceSuiteResult:
    """Embed every drawn text once (cached), then compute the enabled matrices.

    One epsilon serves every pair: ``epsilon`` = (epsilon, annealing start) when given (the
    sweep's, see :func:`calibrate_epsilon`), else the configured one, else one derived once from
    the pooled clouds of all repetitions and kinds of this job. Where the
    draws have twins the matrices carry noise floors; with ``distance.relabellings`` > 0 they
    carry relabelling p-values (seeded by ``seed``).
    """
    result = DistanceSuiteResult()
    kinds = [k for k in ("short", "long") if k in draws.texts]
    if kinds:
        _sinkhorn_kinds(draws, kinds, encoder, cache, distance, seed, epsilon, result)
    if "lda" in draws.texts:
        reps = draws.texts["lda"]
        texts = draws.distinct_texts(["lda"])
        vectors = dict(zip(texts, embed_pooled(encoder, cache, texts), strict=True))
        pooled = [{g: np.stack([vectors[t] for t in ts]) for g, ts in rep.items()} for rep in reps]
        settings = lda_settings(distance)
        result.matrices["lda"] = lda_distance_matrix(pooled, settings, name="lda")
        result.lda_projection = lda_projection(pooled[0], settings)
    return result


def _sinkhorn_kinds(
    draws: DistanceDraws,
    kinds: list[str],
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: Mapping[str, Any],
    seed: int,
    epsilon: tuple[float, float] | None,
    result: DistanceSuiteResult,
) -> None:
    padding = "real" if distance["tokens"] == "real" else "max_length"
    texts = draws.distinct_texts(kinds)
    tokens = dict(zip(texts, embed_tokens(encoder, cache, texts, padding=padding), strict=True))
    clouds = {k: _clouds(draws.texts[k], tokens) for k in kinds}
    # Epsilon and the annealing start are fixed once, over every cloud of the job.
    pooled = [c for k in kinds for rep in clouds[k] for c in rep.values()]
    configured = sinkhorn_settings(distance)
    if epsilon is not None:
        configured = replace(configured, epsilon=epsilon[0], anneal_init=epsilon[1])
    settings = resolve_settings(configured, pooled)
    log.info(
        "Sinkhorn solver %s, epsilon %.6g, annealing from %.4g x",
        settings.solver,
        settings.epsilon,
        settings.anneal_init,
    )
    result.epsilon = settings.epsilon
    exclude = bool(distance.get("exclude_unconverged", True))
    relabellings = int(distance.get("relabellings", 0) or 0)
    for kind in kinds:
        name = f"sinkhorn_{kind}"
        matrix, table = sinkhorn_matrix(
            clouds[kind], settings, name=name, exclude_unconverged=exclude
        )
        size = int(matrix.config["n_points_padded"])
        if kind in draws.twins:
            twins = _clouds(draws.twins[kind], tokens)
            floor, floor_sd = sinkhorn_floors(clouds[kind], twins, table, settings, size)
            matrix = replace(matrix, floor=floor, floor_sd=floor_sd)
        if relabellings > 0:
            per_text = [
                {g: [tokens[t] for t in ts] for g, ts in rep.items()} for rep in draws.texts[kind]
            ]
            rng = rng_for(seed, "relabel", kind)
            p, total = relabelling_pvalues(per_text, table, settings, relabellings, rng)
            config = matrix.config | {"relabellings_total": total}
            matrix = replace(matrix, p_above_noise=p, config=config)
        result.matrices[name], result.diagnostics[name] = matrix, table
