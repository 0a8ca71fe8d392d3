"""Seeded draws of texts: the distance suite's and stage I's evaluation draws.

Distance suite: per repetition, one draw per group shared by all pairs. With matched pools (the
default) every group's draws of a repetition come from a pool of the same size for all groups,
so no group's texts repeat more often than another's: a small group cannot look far away
merely because it is small. With floors on, each group also gets a twin draw, disjoint from its
main draw and of the same size, whose distance to the main draw is the group's noise floor.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from regbias.data.corpus import TextSet
from regbias.data.sampling import (
    SizePolicy,
    TokenBudget,
    common_size,
    draw_indices,
    long_text_passages,
    rng_for,
)
from regbias.data.window_fit import texts_in_full
from regbias.errors import ConfigError, SampleSizeError

Unit = Literal["tweet", "document"]


@dataclass(frozen=True)
class DrawSizes:
    """Sizes of the distance suite's draws (the ``distance`` config group)."""

    repetitions: int
    short_texts: int | None
    long_passages: int | None
    texts_per_passage: int
    lda_passages: int | None
    matched_pool: bool = False
    pool_size: int | None = None
    floors: bool = False
    sentences: bool = False
    sentence_texts: int | None = None
    #: The config key of each size, by field name, for messages (``short_texts``:
    #: ``distance.short.texts_per_draw``); the distance settings give them, and a size without
    #: one is named by its field.
    keys: Mapping[str, str] = field(default_factory=dict)

    def key(self, name: str) -> str:
        """The config key of the size ``name`` (a field of this class, or ``enabled``)."""
        return self.keys.get(name, name)


def validate_draw_sizes(sizes: DrawSizes, *, enabled: bool = True) -> None:
    """Reject sizes that would silently give no distances (``repetitions=0``, ``-1``, ...).

    Raises:
        ConfigError: the first bad size, named by its ``distance.*`` key.
    """
    if not enabled:
        return
    fields = ("repetitions", "short_texts", "long_passages", "texts_per_passage", "lda_passages")
    named = {sizes.key(name): getattr(sizes, name) for name in fields}
    named[sizes.key("sentence_texts")] = sizes.sentence_texts if sizes.sentences else None
    for key, value in named.items():
        if value is None:
            continue  # that measurement is disabled
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(
                f"{key} must be an integer >= 1, not {value!r} ({sizes.key('enabled')}=false "
                "skips the distance stages)"
            )
    drawn = (sizes.short_texts, sizes.long_passages, sizes.lda_passages)
    if not sizes.sentences and all(size is None for size in drawn):
        switch = sizes.key("enabled")
        raise ConfigError(
            f"{switch}=true but short, long and lda are all disabled: enable one, or "
            f"set {switch}=false"
        )


@dataclass
class DistanceDraws:
    """Texts drawn for each measurement: ``texts[kind][r][group]`` (kind short/long/lda).

    ``units[kind][r][group]`` names, for each drawn text, the corpus texts it is made of (a
    tweet: itself; a passage: the tweets it joins): the exchangeable units a pair test
    relabels. Within one draw no corpus text occurs twice, and a group's main and twin draws
    of one repetition share none. ``records`` has one row per (kind, repetition, group):
    requested, size, whole_group, ``texts`` (the corpus texts the draw joins) and, when the
    draws knew the encoder's window, ``texts_in_full`` (those in a drawn text that fits it).
    """

    texts: dict[str, list[dict[str, list[str]]]] = field(default_factory=dict)
    twins: dict[str, list[dict[str, list[str]]]] = field(default_factory=dict)
    units: dict[str, list[dict[str, list[tuple[str, ...]]]]] = field(default_factory=dict)
    records: list[dict[str, object]] = field(default_factory=list)
    pool_size: int | None = None

    def table(self) -> pd.DataFrame:
        """The records as a table, one row per draw."""
        return pd.DataFrame(self.records)

    def texts_in_full(self) -> pd.DataFrame:
        """Per kind (twins counted with their kind): corpus texts drawn, in full, and the share.

        Empty when the draws did not know the encoder's window.
        """
        return texts_in_full(self.table())

    def distinct_texts(self, kinds: list[str]) -> list[str]:
        """Every text the draws of ``kinds`` use, once, in first-seen order (to embed)."""
        seen: dict[str, None] = {}
        for kind in kinds:
            for rep in [*self.texts.get(kind, []), *self.twins.get(kind, [])]:
                for texts in rep.values():
                    seen.update(dict.fromkeys(texts))
        return list(seen)


def distance_draws(
    groups: dict[str, TextSet],
    sizes: DrawSizes,
    unit: Unit,
    seed: int,
    policy: SizePolicy,
    budget: TokenBudget | None = None,
) -> DistanceDraws:
    """Draw the texts of every repetition of the short, long and LDA measurements.

    Tweets: short = single tweets, long = passages of ``texts_per_passage`` tweets of one group,
    sentence = single texts for sentence vectors (by default the whole main half of the pool).
    Documents are long text as they are, so there is no short measurement and long/LDA draw
    whole documents. With ``sizes.matched_pool`` each repetition first draws a pool of the same
    size from every group and takes every draw from it (main draws from one half of the pool,
    twin draws for the floor from the other); otherwise draws come from the whole group as in
    the paper (twins then come from the texts the main draw left). No corpus text occurs twice
    in one draw, nor in a group's main and twin draws of one repetition; LDA's passages
    partition the whole pool, so its fit and measurement halves share no text. With the
    encoder's ``budget`` a passage joins tweets while it fits the encoder's window (up to
    ``texts_per_passage``; the passages then partition a part of the pool), and every record
    counts the texts embedded in full.
    """
    draws = DistanceDraws()
    if sizes.matched_pool:
        draws.pool_size = matched_pool_size(groups, sizes.pool_size, sizes.key("pool_size"))
        _check_half_pool(groups, sizes, unit, draws.pool_size)
    # LDA needs equal group sizes: documents are drawn whole, so a small group limits them all
    # (under the `all` policy; `error` refuses). Tweet passages can always be made.
    lda_size = sizes.lda_passages
    if lda_size and unit == "document" and not sizes.matched_pool:
        lda_size = common_size(groups, lda_size, policy)
    for r in range(sizes.repetitions):
        source = _pools(groups, draws.pool_size, seed, r) if draws.pool_size else None
        if sizes.short_texts and unit == "tweet":
            _measure(draws, "short", r, groups, source, sizes, unit, seed, policy, budget)
        if sizes.long_passages:
            _measure(draws, "long", r, groups, source, sizes, unit, seed, policy, budget)
        if sizes.sentences:
            _measure(draws, "sentence", r, groups, source, sizes, unit, seed, policy, budget)
        if lda_size:
            lda_groups = {g: TextSet.joined(h) for g, h in source.items()} if source else groups
            drawn = _draw(
                lda_groups, "lda", lda_size, sizes, unit, seed, f"lda/{r}", policy, budget
            )
            _add(draws, "lda", r, drawn)
    return draws


def matched_pool_size(
    groups: dict[str, TextSet], configured: int | None, key: str = "pool_size"
) -> int:
    """The pool size every group gives per repetition: ``configured`` or the smallest group's.

    ``key`` names the setting in messages (``distance.pool_size``).

    Raises:
        SampleSizeError: a group holds fewer texts than ``configured``.
    """
    smallest = min(groups, key=lambda g: len(groups[g]))
    if configured is None:
        return len(groups[smallest])
    if configured < 2:
        raise ConfigError(f"{key} must be at least 2, not {configured}")
    if len(groups[smallest]) < configured:
        raise SampleSizeError(
            f"group '{smallest}' has {len(groups[smallest])} texts but {key} asks "
            f"for {configured}: lower {key} (null = the smallest group's size)"
        )
    return configured


def _check_half_pool(
    groups: dict[str, TextSet], sizes: DrawSizes, unit: Unit, pool_size: int
) -> None:
    """Every draw fits its part of the pool with no text used twice.

    Main and twin draws come from the two halves of a group's pool; LDA's passages partition
    the whole pool.

    Raises:
        SampleSizeError: a draw needs more distinct texts than its part of the pool holds,
            naming the setting to lower.
    """
    per_passage = sizes.texts_per_passage if unit == "tweet" else 1
    half = pool_size // 2
    wanted: dict[str, tuple[int | None, int, int]] = {
        sizes.key("short_texts"): (sizes.short_texts if unit == "tweet" else None, 1, half),
        sizes.key("long_passages"): (sizes.long_passages, per_passage, half),
        sizes.key("lda_passages"): (sizes.lda_passages, per_passage, pool_size),
        sizes.key("sentence_texts"): (sizes.sentence_texts if sizes.sentences else None, 1, half),
    }
    smallest = min(groups, key=lambda g: len(groups[g]))
    for key, (n, each, room) in wanted.items():
        if n and n * each > room:
            part = "half the matched pool" if room == half else "the matched pool"
            raise SampleSizeError(
                f"{key}={n} needs {n * each} distinct texts but {part} holds {room} "
                f"(pool {pool_size} texts; group '{smallest}' has {len(groups[smallest])}): "
                f"lower {key}"
                + (f" or {sizes.key('texts_per_passage')}" if each > 1 else "")
                + f", or set {sizes.key('matched_pool')}=false to draw from whole groups"
            )


def _pools(
    groups: dict[str, TextSet], size: int, seed: int, repetition: int
) -> dict[str, tuple[TextSet, TextSet]]:
    """Per group: a pool of ``size`` texts, split into two disjoint halves (main, twin)."""
    pools = {}
    for name, texts in groups.items():
        chosen = rng_for(seed, f"pool/{repetition}", name).choice(len(texts), size, replace=False)
        half = size // 2
        pools[name] = (texts.subset(chosen[:half]), texts.subset(chosen[half : 2 * half]))
    return pools


def _measure(
    draws: DistanceDraws,
    kind: str,
    r: int,
    groups: dict[str, TextSet],
    pools: dict[str, tuple[TextSet, TextSet]] | None,
    sizes: DrawSizes,
    unit: Unit,
    seed: int,
    policy: SizePolicy,
    budget: TokenBudget | None,
) -> None:
    """The main draws of one kind and repetition and, with floors on, the twin draws."""
    # Short and long are drawn only where sized; an unsized sentence draw takes half the pool.
    n: int = getattr(sizes, _SIZE[kind]) or _half(groups, pools)
    main_groups = {g: h[0] for g, h in pools.items()} if pools else groups
    main = _draw(main_groups, kind, n, sizes, unit, seed, f"{kind}/{r}", policy, budget)
    _add(draws, kind, r, main)
    if not sizes.floors:
        return
    if pools:
        twin_groups = {g: h[1] for g, h in pools.items()}
    else:
        twin_groups = {g: _rest(t, draws.units[kind][r][g]) for g, t in groups.items()}
    twin = _draw(twin_groups, kind, n, sizes, unit, seed, f"{kind}/{r}/twin", policy, budget)
    draws.twins.setdefault(kind, []).append({g: drawn.texts for g, drawn in twin.items()})
    for group, drawn in twin.items():
        draws.records.append(_record(f"{kind}_twin", r, group, drawn))


def _half(groups: dict[str, TextSet], pools: dict[str, tuple[TextSet, TextSet]] | None) -> int:
    """Texts per sentence draw when unset: half the matched pool (or the smallest group)."""
    if pools:
        return min(len(h[0]) for h in pools.values())
    return min(len(t) for t in groups.values()) // 2


def _rest(texts: TextSet, used: list[tuple[str, ...]]) -> TextSet:
    """The texts a main draw left: its twin draws from these, disjoint from it."""
    taken = {t for unit in used for t in unit}
    index = [i for i, t in enumerate(texts.texts) if t not in taken]
    return texts.subset(index)


@dataclass(frozen=True)
class _Drawn:
    """One group's draw: the drawn texts, the corpus texts each joins, and its sizes.

    ``in_full`` counts the corpus texts of drawn texts the encoder embeds whole (None: the
    window was not known).
    """

    texts: list[str]
    units: list[tuple[str, ...]]
    requested: int
    whole_group: bool
    in_full: int | None = None


#: The size field of each draw kind.
_SIZE = {
    "short": "short_texts",
    "long": "long_passages",
    "lda": "lda_passages",
    "sentence": "sentence_texts",
}


def _draw(
    groups: dict[str, TextSet],
    kind: str,
    n: int,
    sizes: DrawSizes,
    unit: Unit,
    seed: int,
    purpose: str,
    policy: SizePolicy,
    budget: TokenBudget | None,
) -> dict[str, _Drawn]:
    if kind in ("short", "sentence") or unit == "document":
        drawn = _plain(groups, n, seed, purpose, policy)
    else:
        keys = sizes.key(_SIZE[kind]), sizes.key("texts_per_passage")
        drawn = _passages(
            groups, n, sizes.texts_per_passage, seed, purpose, keys[0], budget, keys[1]
        )
    if budget is None:
        return drawn
    return {g: replace(d, in_full=_in_full(d, budget)) for g, d in drawn.items()}


def _in_full(drawn: _Drawn, budget: TokenBudget) -> int:
    """The corpus texts of ``drawn`` whose drawn text fits the encoder's window."""
    pairs = zip(drawn.texts, drawn.units, strict=True)
    return sum(len(unit) for text, unit in pairs if budget.fits(text))


def _record(kind: str, repetition: int, group: str, drawn: _Drawn) -> dict[str, object]:
    return {
        "kind": kind,
        "repetition": repetition,
        "group": group,
        "requested": drawn.requested,
        "size": len(drawn.texts),
        "whole_group": drawn.whole_group,
        "texts": sum(len(unit) for unit in drawn.units),
        "texts_in_full": drawn.in_full,
    }


def _add(draws: DistanceDraws, kind: str, repetition: int, drawn: dict[str, _Drawn]) -> None:
    draws.texts.setdefault(kind, []).append({g: d.texts for g, d in drawn.items()})
    draws.units.setdefault(kind, []).append({g: d.units for g, d in drawn.items()})
    for group, one in drawn.items():
        draws.records.append(_record(kind, repetition, group, one))


def _plain(
    groups: dict[str, TextSet], size: int, seed: int, purpose: str, policy: SizePolicy
) -> dict[str, _Drawn]:
    out = {}
    for name, texts in groups.items():
        draw = draw_indices(name, len(texts), size, rng_for(seed, purpose, name), policy)
        chosen = [texts.texts[i] for i in draw.indices]
        out[name] = _Drawn(chosen, [(t,) for t in chosen], size, draw.whole_group)
    return out


def _passages(
    groups: dict[str, TextSet],
    n: int,
    texts_per_passage: int,
    seed: int,
    purpose: str,
    setting: str,
    budget: TokenBudget | None,
    per_setting: str,
) -> dict[str, _Drawn]:
    """Per group, ``n`` passages that partition a permuted sample of its texts."""
    out = {}
    for name, texts in groups.items():
        rng = rng_for(seed, purpose, name)
        passages, members = long_text_passages(
            texts.texts, n, texts_per_passage, rng, name, setting, budget, per_setting
        )
        units = [tuple(texts.texts[i] for i in m) for m in members]
        out[name] = _Drawn(passages, units, n, False)
    return out


def evaluation_draws(
    group: str, n: int, draw_size: int | None, repetitions: int, seed: int, policy: SizePolicy
) -> list[np.ndarray]:
    """Index sets of the repeated evaluation draws of one group (stage I).

    ``group`` and ``seed`` key the generator (:func:`rng_for`), so draws do not depend on the
    groups' order; ``draw_size`` None (or ``n``) scores the whole group once, as ``policy`` ``all``
    does (with a warning) for a group smaller than it.

    The same (group, size, seed) always gives the same draws, so every model of a job is scored
    on the same texts, and a caller can predict on the union of the draws only.

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
