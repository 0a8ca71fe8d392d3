"""The texts of the distance suite: per repetition, one draw per group shared by all pairs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from regbias.data.corpus import TextSet
from regbias.data.sampling import (
    SizePolicy,
    common_size,
    draw_indices,
    long_text_passages,
    rng_for,
)
from regbias.errors import ConfigError

__all__ = ["DrawSizes", "DistanceDraws", "distance_draws", "validate_draw_sizes"]

Unit = Literal["tweet", "document"]


@dataclass(frozen=True)
class DrawSizes:
    """Sizes of the distance suite's draws (the ``distance`` config group)."""

    repetitions: int
    short_texts: int | None
    long_passages: int | None
    texts_per_passage: int
    lda_passages: int | None


def validate_draw_sizes(sizes: DrawSizes, *, enabled: bool = True) -> None:
    """Reject sizes that would silently give no distances (``repetitions=0``, ``-1``, ...).

    Raises:
        ConfigError: the first bad size, named by its ``distance.*`` key.
    """
    if not enabled:
        return
    named = {
        "distance.repetitions": sizes.repetitions,
        "distance.short.texts_per_draw": sizes.short_texts,
        "distance.long.passages_per_draw": sizes.long_passages,
        "distance.long.texts_per_passage": sizes.texts_per_passage,
        "distance.lda.passages_per_group": sizes.lda_passages,
    }
    for key, value in named.items():
        if value is None:
            continue  # that measurement is disabled
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(
                f"{key} must be an integer >= 1, not {value!r} (distance.enabled=false skips "
                "the distance stages)"
            )
    if sizes.short_texts is None and sizes.long_passages is None and sizes.lda_passages is None:
        raise ConfigError(
            "distance.enabled=true but short, long and lda are all disabled: enable one, or "
            "set distance.enabled=false"
        )


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
        passages, _ = long_text_passages(texts.texts, n, sizes.texts_per_passage, rng, name)
        out[name] = (passages, n, False)
    return out
