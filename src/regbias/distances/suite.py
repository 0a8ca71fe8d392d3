"""Stages II and III of a job: embed the drawn texts once, then Sinkhorn and LDA matrices."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from regbias.distances.lda import LdaProjection, LdaSettings, lda_distance_matrix, lda_projection
from regbias.distances.matrix import DistanceMatrix
from regbias.distances.sinkhorn import SinkhornSettings, resolve_settings, sinkhorn_matrix
from regbias.data.draws import DistanceDraws
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
        anneal_decay=float(s["anneal_decay"]),
        threshold=float(s["threshold"]),
        max_iterations=int(s["max_iterations"]),
        batch_size=None if s.get("batch_size") is None else int(s["batch_size"]),
        max_dense_points=int(s["max_dense_points"]),
        inner_iterations=int(s["inner_iterations"]),
        momentum=None if s.get("momentum") is None else float(s["momentum"]),
        pad_multiple=int(s["pad_multiple"]),
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


def run_distance_suite(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: Mapping[str, Any],
) -> DistanceSuiteResult:
    """Embed every drawn text once (cached), then compute the enabled matrices.

    One epsilon serves every pair of the job: the configured one, or one derived once from
    the pooled clouds of all repetitions and kinds.
    """
    result = DistanceSuiteResult()
    kinds = [k for k in ("short", "long") if k in draws.texts]
    if kinds:
        padding = "real" if distance["tokens"] == "real" else "max_length"
        texts = draws.distinct_texts(kinds)
        tokens = dict(zip(texts, embed_tokens(encoder, cache, texts, padding=padding), strict=True))
        clouds = {k: _clouds(draws.texts[k], tokens) for k in kinds}
        # Epsilon and the annealing start are fixed once, over every cloud of the job.
        pooled = [c for k in kinds for rep in clouds[k] for c in rep.values()]
        settings = resolve_settings(sinkhorn_settings(distance), pooled)
        log.info(
            "Sinkhorn epsilon %.6g, annealing from %.4g x", settings.epsilon, settings.anneal_init
        )
        result.epsilon = settings.epsilon
        for kind in kinds:
            name = f"sinkhorn_{kind}"
            matrix, table = sinkhorn_matrix(clouds[kind], settings, name=name)
            result.matrices[name], result.diagnostics[name] = matrix, table
    if "lda" in draws.texts:
        reps = draws.texts["lda"]
        texts = draws.distinct_texts(["lda"])
        vectors = dict(zip(texts, embed_pooled(encoder, cache, texts), strict=True))
        pooled = [{g: np.stack([vectors[t] for t in ts]) for g, ts in rep.items()} for rep in reps]
        settings = lda_settings(distance)
        result.matrices["lda"] = lda_distance_matrix(pooled, settings, name="lda")
        result.lda_projection = lda_projection(pooled[0], settings)
    return result
