"""Seeded draws of texts: the distance suite's (one draw per group and repetition, shared by all
pairs) and the evaluation draws of stage I."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from regbias.data.corpus import TextSet
from regbias.data.sampling import (
    SizePolicy,
    common_size,
    draw_indices,
    long_text_passages,
    rng_for,
)
from regbias.errors import SampleSizeError

__all__ = ["DrawSizes", "DistanceDraws", "distance_draws", "evaluation_draws"]

Unit = Literal["tweet", "document"]


@dataclass(frozen=True)
class DrawSizes:
    """Sizes of the distance suite's draws (the ``distance`` config group)."""

    repetitions: int
    short_texts: int | None
    long_passages: int | None
    texts_per_passage: int
    lda_passages: int | None


@dataclass
class DistanceDraws:
    """Texts drawn for each measurement: ``texts[kind][r][group]`` (kind short/long/lda).

    ``records`` has one row per (kind, repetition, group): requested, size, whole_group.
    """

    texts: dict[str, list[dict[str, list[str]]]] = field(default_factory=dict)
    records: list[dict[str, object]] = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.records)

    def distinct_texts(self, kinds: list[str]) -> list[str]:
        """Every text the draws of ``kinds`` use, once, in first-seen order (to embed)."""
        seen: dict[str, None] = {}
        for kind in kinds:
            for rep in self.texts.get(kind, []):
                for texts in rep.values():
                    seen.update(dict.fromkeys(texts))
        return list(seen)


def distance_draws(
    groups: dict[str, TextSet], sizes: DrawSizes, unit: Unit, seed: int, policy: SizePolicy
) -> DistanceDraws:
    """Draw the texts of every repetition of the short, long and LDA measurements.

    Tweets: short = single tweets, long = passages of ``texts_per_passage`` tweets of one group.
    Documents are long text as they are, so there is no short measurement and long/LDA draw
    whole documents.
    """
    draws = DistanceDraws()
    # LDA needs equal group sizes: documents are drawn whole, so a small group limits them all
    # (under the `all` policy; `error` refuses). Tweet passages can always be made.
    lda_size = sizes.lda_passages
    if lda_size and unit == "document":
        lda_size = common_size(groups, lda_size, policy)
    for r in range(sizes.repetitions):
        if sizes.short_texts and unit == "tweet":
            _add(draws, "short", r, _plain(groups, sizes.short_texts, seed, f"short/{r}", policy))
        if sizes.long_passages:
            long = _long(groups, sizes.long_passages, sizes, unit, seed, f"long/{r}", policy)
            _add(draws, "long", r, long)
        if lda_size:
            _add(draws, "lda", r, _long(groups, lda_size, sizes, unit, seed, f"lda/{r}", policy))
    return draws


_Drawn = dict[str, tuple[list[str], int, bool]]


def _add(draws: DistanceDraws, kind: str, repetition: int, drawn: _Drawn) -> None:
    draws.texts.setdefault(kind, []).append({g: texts for g, (texts, _, _) in drawn.items()})
    for group, (texts, requested, whole) in drawn.items():
        draws.records.append(
            {
                "kind": kind,
                "repetition": repetition,
                "group": group,
                "requested": requested,
                "size": len(texts),
                "whole_group": whole,
            }
        )


def _plain(
    groups: dict[str, TextSet], size: int, seed: int, purpose: str, policy: SizePolicy
) -> _Drawn:
    out: _Drawn = {}
    for name, texts in groups.items():
        draw = draw_indices(name, len(texts), size, rng_for(seed, purpose, name), policy)
        out[name] = ([texts.texts[i] for i in draw.indices], size, draw.whole_group)
    return out


def _long(
    groups: dict[str, TextSet],
    n: int,
    sizes: DrawSizes,
    unit: Unit,
    seed: int,
    purpose: str,
    policy: SizePolicy,
) -> _Drawn:
    if unit == "document":
        return _plain(groups, n, seed, purpose, policy)
    out: _Drawn = {}
    for name, texts in groups.items():
        rng = rng_for(seed, purpose, name)
        passages, _ = long_text_passages(texts.texts, n, sizes.texts_per_passage, rng)
        out[name] = (passages, n, False)
    return out


def evaluation_draws(
    group: str, n: int, draw_size: int | None, repetitions: int, seed: int, policy: SizePolicy
) -> list[np.ndarray]:
    """Index sets of the repeated evaluation draws of one group (stage I).

    The same (group, size, seed) always gives the same draws, so every model of a job is scored
    on the same texts, and a caller can predict on the union of the draws only.

    Args:
        group: the group's name; with ``seed`` it keys the generator (:func:`rng_for`), so
            draws do not depend on the order of the groups.
        n: the group's number of texts.
        draw_size: texts per draw; ``None`` (or ``n``) scores the whole group once.
        repetitions: number of draws.
        seed: the job seed.
        policy: for a group smaller than ``draw_size``: ``error`` raises; ``all`` scores the
            whole group once, with a warning.

    Returns:
        Sorted position arrays, one per draw (a single ``arange(n)`` for a whole group).

    Raises:
        SampleSizeError: an undersized group under policy ``error``.
    """
    if draw_size is None or draw_size == n:
        return [np.arange(n)]
    if draw_size > n:
        if policy == "error":
            raise SampleSizeError(
                f"group {group!r} holds {n} texts but each draw asks for {draw_size}: lower "
                "the draw size or set the small-group policy to 'all'"
            )
        warnings.warn(
            f"group {group!r} holds {n} texts, fewer than the draw size {draw_size}: "
            "evaluated whole (recorded in column n_texts)",
            RuntimeWarning,
            stacklevel=3,
        )
        return [np.arange(n)]
    rng = rng_for(seed, group)
    return [np.sort(rng.choice(n, size=draw_size, replace=False)) for _ in range(repetitions)]
