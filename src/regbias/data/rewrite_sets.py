"""A group's texts in another variety, each beside a matched control edit of the same words.

For every pair of groups written in different varieties (:data:`~regbias.data.variety_rewrite.
VARIETIES`), each side's texts are rewritten into the other's variety
(:class:`~regbias.data.variety_rewrite.VarietyRewrite`). Only the texts a rewrite changes are
kept (:class:`RewriteSet`); the others are counted.

Each changed text also gets a **control**: the same words the rewrite changed, replaced by
other words of about the same frequency in the corpus that belong to no variety list (so the
control edits as many words, in the same places, without changing variety). The replacement
is drawn per text and word from ``(seed, draw)``: the same in every job, and ``draw`` gives
independent controls for the null benchmark (``benchmarks/counterfactual_rates.py``).
"""

from __future__ import annotations

import bisect
import csv
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from regbias.data.sampling import rng_for
from regbias.data.variety_rewrite import (
    AMERICAN,
    BRITISH,
    DIRECTIONS,
    LEXIS,
    VARIETIES,
    VarietyRewrite,
)
from regbias.errors import ConfigError, DataError

#: Same-frequency words a control word is drawn from (the nearest by count, either side).
CONTROL_NEIGHBOURS = 20
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class RewriteSet:
    """One group's texts that a rewrite into another variety changes.

    Attributes:
        group: the texts' group.
        target: the variety they are rewritten into.
        originals: the changed texts as written, in the group's order.
        rewritten: each in the target variety's forms.
        controls: each with the same words replaced by same-frequency words of no variety.
        fired: per text, the words rewritten (``source>target``).
        examined: the group's texts the rewrite read (changed or not).
    """

    group: str
    target: str
    originals: tuple[str, ...]
    rewritten: tuple[str, ...]
    controls: tuple[str, ...]
    fired: tuple[tuple[str, ...], ...]
    examined: int

    @property
    def name(self) -> str:
        """``group>target``, e.g. ``us>british``."""
        return f"{self.group}>{self.target}"

    @property
    def changed(self) -> int:
        """The texts the rewrite changed."""
        return len(self.originals)

    @property
    def share_changed(self) -> float:
        """The share of the group's texts the rewrite changed."""
        return self.changed / self.examined if self.examined else 0.0


@dataclass(frozen=True)
class ControlWords:
    """Words of no variety list, by their count in the corpus: a control's replacements."""

    counts: Mapping[str, int]
    excluded: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str], lexis: Mapping[str, tuple[str, str]]) -> ControlWords:
        """The corpus's word counts; every word of either rewrite's lists is excluded."""
        excluded: set[str] = set()
        for target in (AMERICAN, BRITISH):
            for source, word in VarietyRewrite.into(target, lexis).words.items():
                excluded.update(source.split(), word.split())
        counts = Counter(w for text in texts for w in _WORD.findall(text.lower()))
        return cls(counts, frozenset(excluded))

    @cached_property
    def _ranked(self) -> tuple[list[int], list[str]]:
        """The replacement words and their counts, ascending by count, then word."""
        kept = sorted(
            (c, w) for w, c in self.counts.items() if w not in self.excluded and len(w) > 1
        )
        return [c for c, _ in kept], [w for _, w in kept]

    def replacement(self, word: str, seed: int, key: str, draw: int) -> str:
        """A word of about ``word``'s count, drawn for text ``key`` by ``(seed, draw)``."""
        counts, words = self._ranked
        if not words:
            raise DataError("a control edit needs words of no variety list: the corpus has none")
        count = sum(self.counts.get(w, 0) for w in word.split()) or 1
        at = bisect.bisect_left(counts, count)
        low, high = max(0, at - CONTROL_NEIGHBOURS), min(len(words), at + CONTROL_NEIGHBOURS)
        rng = rng_for(seed, "rewrite-control", draw, key, word)
        return words[int(rng.integers(low, high))]

    def control(self, text: str, fired: Sequence[str], seed: int, draw: int) -> str:
        """``text`` with each rewritten source word replaced by a same-frequency word."""
        sources = dict.fromkeys(f.split(">", 1)[0] for f in fired)
        words = {w: self.replacement(w, seed, text, draw) for w in sources}
        return VarietyRewrite("control", "control", words)(text).text


def rewrite_sets(
    groups: Mapping[str, Sequence[str]],
    directions: Sequence[tuple[str, str]],
    *,
    seed: int,
    lexis: Mapping[str, tuple[str, str]] = LEXIS,
    draw: int = 0,
) -> list[RewriteSet]:
    """Each direction's source group rewritten into the target group's variety, with controls.

    One set per source group and target variety (``us`` into British serves ``us``-``uk`` and
    ``us``-``au`` alike), in the order of ``directions``; ``groups``: each group's distinct texts.

    Raises:
        ConfigError: a direction names a group with no variety, or two of the same variety.
        DataError: no text of any source group has a word to rewrite.
    """
    control = ControlWords.of((t for texts in groups.values() for t in texts), lexis)
    wanted: dict[tuple[str, str], VarietyRewrite] = {}
    for source, other in directions:
        rewrite = VarietyRewrite.between(source, other, lexis)
        wanted.setdefault((source, rewrite.target), rewrite)
    found = [
        _rewrite_set(source, groups[source], rewrite, control, seed, draw)
        for (source, _), rewrite in wanted.items()
    ]
    if found and not any(s.changed for s in found):
        examined = ", ".join(f"{s.name} ({s.examined:,} texts)" for s in found)
        raise DataError(
            f"no text has a word to rewrite into another variety: {examined}; the "
            "counterfactual track needs texts with variety spellings or words (turn it off: "
            "analysis.counterfactual.enabled=false)"
        )
    return found


def _rewrite_set(
    group: str,
    texts: Sequence[str],
    rewrite: VarietyRewrite,
    control: ControlWords,
    seed: int,
    draw: int,
) -> RewriteSet:
    distinct = list(dict.fromkeys(texts))
    changed = [(text, done) for text in distinct if (done := rewrite(text)).changed]
    return RewriteSet(
        group,
        rewrite.target,
        tuple(text for text, _ in changed),
        tuple(done.text for _, done in changed),
        tuple(control.control(text, done.fired, seed, draw) for text, done in changed),
        tuple(done.fired for _, done in changed),
        len(distinct),
    )


def variety_directions(
    groups: Sequence[str], pairs: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """The ``(source, other)`` directions: both ways of every pair of different varieties.

    ``pairs`` like ``["us-uk"]`` (None: every pair of ``groups`` whose varieties differ).

    Raises:
        ConfigError: a pair is malformed or names a group the study does not have.
    """
    if pairs is None:
        named = [g for g in groups if g in VARIETIES]
        chosen = [(a, b) for i, a in enumerate(named) for b in named[i + 1 :]]
        chosen = [(a, b) for a, b in chosen if VARIETIES[a] != VARIETIES[b]]
    else:
        chosen = [_pair(p, groups) for p in pairs]
    return [d for a, b in chosen for d in ((a, b), (b, a))]


def _pair(text: str, groups: Sequence[str]) -> tuple[str, str]:
    parts = text.split("-")
    if len(parts) != 2 or any(p not in groups for p in parts):
        raise ConfigError(
            f"analysis.counterfactual.pairs: {text!r} is no pair of this study's groups "
            f"(write it as a-b with a and b among {', '.join(groups)})"
        )
    return parts[0], parts[1]


def read_word_list(path: Path) -> dict[str, tuple[str, str]]:
    """Lexis pairs of a user's CSV (``american,british[,direction]``), added to :data:`LEXIS`.

    Raises:
        ConfigError: the file is missing, lacks its header, or a row does not parse.
    """
    if not path.is_file():
        raise ConfigError(f"analysis.counterfactual.word_list: no file {path}")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows or [c.strip() for c in rows[0][:2]] != ["american", "british"]:
        raise ConfigError(
            f"{path}: a word list's first line is the header american,british[,direction]"
        )
    words = dict(LEXIS)
    for line, row in enumerate(rows[1:], start=2):
        cells = [c.strip().lower() for c in row]
        direction = cells[2] if len(cells) > 2 and cells[2] else "both"
        if len(cells) not in (2, 3) or not all(cells[:2]) or direction not in DIRECTIONS:
            raise ConfigError(
                f"{path}, line {line}: {','.join(row)!r} is not american,british[,direction] "
                f"with direction one of {', '.join(DIRECTIONS)}"
            )
        words[cells[0]] = (cells[1], direction)
    return words
