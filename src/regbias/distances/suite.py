"""Stages II and III of a job: embed the drawn texts once, then every configured distance.

The ``distance`` config group holds the draws' settings (repetitions, pools, floors, the short,
long and sentence draws) and one block per distance, each naming its class with ``_target_``
(:mod:`regbias.distances.plugin`). :class:`DistanceSettings` reads both; the suite embeds the
texts the enabled distances need and runs each distance in the config's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from regbias.data.draws import DistanceDraws, DrawSizes, validate_draw_sizes
from regbias.distances.plugin import (
    TOKEN_KINDS,
    VECTOR_KINDS,
    Distance,
    DistanceInputs,
    DistanceSuiteResult,
    timed_step,
)
from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import Encoder, Padding
from regbias.embeddings.joint import embed_jointly
from regbias.errors import ConfigError
from regbias.settings_reader import TARGET, build, target_class


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
    """The ``distance`` config group: the draws, and the distances (see ``conf/distance/``).

    Attributes:
        methods: the distances, by their config key, in the config's order: every key of the
            group whose value is a block with a ``_target_`` (:mod:`regbias.distances.plugin`).
        The others: the draws' keys (``conf/distance/default.yaml``).
    """

    enabled: bool
    repetitions: int
    matched_pool: bool
    pool_size: int | None
    floors: bool
    exclude_unconverged: bool
    calibration_seed: int | None
    tokens: Literal["real", "all"]
    short: ShortSettings
    long: LongSettings
    sentences: SentenceSettings
    methods: Mapping[str, Distance]

    @classmethod
    def from_config(cls, values: Mapping[str, Any], key: str) -> DistanceSettings:
        """Read the draws' keys and build each distance block's class."""
        if not isinstance(values, Mapping):
            raise ConfigError(f"{key} must be a group of settings, not {values!r}")
        blocks = {k: v for k, v in values.items() if isinstance(v, Mapping) and TARGET in v}
        methods = {name: _distance(block, f"{key}.{name}") for name, block in blocks.items()}
        plain = {k: v for k, v in values.items() if k not in blocks}
        return build(cls, plain | {"methods": methods}, key)

    def __post_init__(self) -> None:
        validate_draw_sizes(self.draw_sizes(), enabled=self.enabled)
        if self.pool_size is not None and self.pool_size < 2:
            raise ConfigError(
                f"distance.pool_size must be at least 2 or null, not {self.pool_size}"
            )
        names = [n for m in self.methods.values() for n in m.names(list(m.kinds))]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"two distance blocks produce the matrices {twice}: remove one")

    def enabled_methods(self) -> list[Distance]:
        """The enabled distances, in the config's order."""
        return [m for m in self.methods.values() if m.enabled] if self.enabled else []

    def matrix_names(self, kinds: list[str] | None = None) -> list[str]:
        """The matrices the suite computes when ``kinds`` are drawn (None: all it draws)."""
        drawn = self.drawn_kinds() if kinds is None else kinds
        return [n for m in self.enabled_methods() for n in m.names(drawn)]

    def drawn_kinds(self) -> list[str]:
        """The draw kinds these settings draw."""
        sizes = self.draw_sizes()
        kinds = {
            "short": sizes.short_texts,
            "long": sizes.long_passages,
            "sentence": sizes.sentences or None,
            "lda": sizes.lda_passages,
        }
        return [k for k, size in kinds.items() if size is not None]

    def draw_sizes(self) -> DrawSizes:
        """The sizes of the suite's draws (a kind no enabled distance measures is not drawn)."""
        used = {k for m in self.enabled_methods() for k in m.kinds}
        own: dict[str, int] = {}
        keys = dict(_DRAW_KEYS)
        for name, method in self.methods.items():
            if method in self.enabled_methods():
                for kind, (size, field_name) in method.draw_sizes().items():
                    own[kind] = size
                    keys[f"{kind}_passages"] = f"distance.{name}.{field_name}"
        return DrawSizes(
            repetitions=self.repetitions if self.enabled else 0,
            short_texts=self.short.texts_per_draw
            if self.short.enabled and "short" in used
            else None,
            long_passages=self.long.passages_per_draw
            if self.long.enabled and "long" in used
            else None,
            texts_per_passage=self.long.texts_per_passage,
            lda_passages=own.get("lda"),
            matched_pool=self.matched_pool,
            pool_size=self.pool_size,
            floors=self.floors,
            sentences=self.sentences.enabled and "sentence" in used,
            sentence_texts=self.sentences.texts_per_draw,
            keys=keys,
        )


#: The config key of each draw size (``DrawSizes``' fields); a distance's own draws add theirs.
_DRAW_KEYS = {
    "enabled": "distance.enabled",
    "repetitions": "distance.repetitions",
    "short_texts": "distance.short.texts_per_draw",
    "long_passages": "distance.long.passages_per_draw",
    "texts_per_passage": "distance.long.texts_per_passage",
    "sentence_texts": "distance.sentences.texts_per_draw",
    "pool_size": "distance.pool_size",
    "matched_pool": "distance.matched_pool",
}


def _distance(block: Mapping[str, Any], key: str) -> Distance:
    """One distance block built into the class its ``_target_`` names."""
    chosen = target_class(block[TARGET], Distance, f"{key}.{TARGET}")
    return build(chosen, {k: v for k, v in block.items() if k != TARGET}, key)


def suite_inputs(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: DistanceSettings,
    seed: int,
    *,
    tokens_only: bool = False,
) -> DistanceInputs:
    """Embed every drawn text once (cached): token clouds and pooled vectors in one pass.

    With ``encoder.one_pass=false``, the first version's separate passes (token texts, then
    each pooled kind's texts).

    With ``tokens_only`` only the token kinds' texts, as token vectors (a calibration draw).
    """
    token_kinds = [k for k in TOKEN_KINDS if k in draws.texts]
    vector_kinds = [] if tokens_only else [k for k in VECTOR_KINDS if k in draws.texts]
    padding: Padding = "real" if distance.tokens == "real" else "max_length"
    if tokens_only or not encoder.spec.one_pass:
        tokens, pooled = _separate_passes(draws, encoder, cache, token_kinds, vector_kinds, padding)
    else:
        joint = embed_jointly(
            encoder,
            cache,
            draws.distinct_texts(token_kinds),
            draws.distinct_texts(vector_kinds),
            padding=padding,
        )
        tokens, pooled = joint.tokens, joint.pooled
    return DistanceInputs(
        draws=draws,
        tokens=tokens,
        pooled=pooled,
        seed=seed,
        exclude_unconverged=distance.exclude_unconverged,
    )


def calibrate_distances(
    draws: DistanceDraws, encoder: Encoder, cache: EmbeddingCache | None, distance: DistanceSettings
) -> DistanceSettings:
    """The sweep's distance settings: each distance that fixes some once, calibrated.

    ``draws`` should not depend on the job's seed (the app draws them with the sweep's
    ``distance.calibration_seed``), so every job of a sweep measures the same way and their
    matrices can be pooled (Sinkhorn: epsilon, the annealing start, the solver, the updates).
    Configured values are kept.
    """
    needing = {k: m for k, m in distance.methods.items() if m.enabled and m.needs_calibration()}
    if not needing:
        return distance
    inputs = suite_inputs(draws, encoder, cache, distance, seed=0, tokens_only=True)
    calibrated = {k: m.calibrate(inputs) for k, m in needing.items()}
    return replace(distance, methods={**distance.methods, **calibrated})


def run_distance_suite(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    distance: DistanceSettings,
    *,
    seed: int = 0,
) -> DistanceSuiteResult:
    """Embed every drawn text once (cached), then run every enabled distance on its draws.

    A distance calibrated for the sweep (:func:`calibrate_distances`) keeps what its calibration
    fixed; otherwise it fixes that from this job's draws. ``seed`` seeds the LDA halves and
    floor splits.
    """
    result = DistanceSuiteResult()
    with timed_step(result.timings, "embed"):
        inputs = suite_inputs(draws, encoder, cache, distance, seed)
    for method in distance.enabled_methods():
        result.add(method.measure(inputs))
    return result


def _separate_passes(
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
    token_kinds: list[str],
    vector_kinds: list[str],
    padding: Padding,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Token vectors, then each vector kind's pooled vectors, each in passes of their own.

    The first version's order (``encoder.one_pass=false``, or a calibration draw's tokens).
    """
    texts = draws.distinct_texts(token_kinds)
    tokens = dict(zip(texts, embed_tokens(encoder, cache, texts, padding=padding), strict=True))
    pooled: dict[str, np.ndarray] = {}
    for kind in vector_kinds:
        texts = draws.distinct_texts([kind])
        pooled.update(zip(texts, embed_pooled(encoder, cache, texts), strict=True))
    return tokens, pooled
