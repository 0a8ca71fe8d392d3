"""The same texts in another variety's written forms: spelling and lexis, US and British.

A rewrite moves a text's words from one written variety to the other, word by word, keeping
everything else: case (``Color`` -> ``Colour``, ``COLOR`` -> ``COLOUR``), punctuation,
spacing, and every URL and @mention untouched. It records which words it changed.

Two word lists make a rewrite:

* **Spelling**: breame's dual spellings (about 1,700 pairs each way: ``color``/``colour``,
  ``realize``/``realise``, ``center``/``centre``...), less the words whose written form
  depends on their sense or part of speech (:data:`AMBIGUOUS`: ``tire``, ``meter``,
  ``draft``, ``program``, ``practice``, ``license``, ``disk``...), which are left as they are.
* **Lexis**: a short list of our own (:data:`LEXIS`), each pair only in the direction in which
  its source word has the one sense (``apartment`` -> ``flat``, never ``flat`` ->
  ``apartment``, which would rewrite "a flat tire").

Regions map to a variety (:data:`VARIETIES`): ``us`` is American; ``uk``, ``au``, ``nz`` and
``za`` write British-type spelling. Canadian spelling mixes the two (``colour`` but
``realize``), so ``ca`` has no variety and a rewrite to or from it is refused.

A spelling-and-lexis rewrite is a lower bound on a variety: grammar, idiom, topic and style
stay as they were (docs/method.md, "Same texts, another variety").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from breame.data.spelling_constants import (
    AMERICAN_ENGLISH_SPELLINGS,
    BRITISH_ENGLISH_SPELLINGS,
)

from regbias.errors import ConfigError

AMERICAN = "american"
BRITISH = "british"
#: Each region's written variety; a region not listed (``ca``, ``mixed``, ``baseline``) has none.
VARIETIES: Mapping[str, str] = MappingProxyType(
    {"us": AMERICAN, "uk": BRITISH, "au": BRITISH, "nz": BRITISH, "za": BRITISH}
)
#: Source words breame pairs whose written form depends on sense or part of speech: a
#: British parking "meter", computer "program", "draft" email, the noun "practice" and the verb
#: "license", "tire" (to weary), a "check" (not only the bank's), a computer "disk" and an
#: American compact "disc". Never rewritten (their other forms, e.g. "tyre", are).
_AMBIGUOUS_STEMS = ("tire", "meter", "draft", "program", "practice", "license", "disk", "disc")
AMBIGUOUS = frozenset(
    word
    for stem in (*_AMBIGUOUS_STEMS, "check")
    for word in (stem, f"{stem}s", f"{stem}d", f"{stem}ed", f"{stem}ing", f"{stem}er")
)
#: The directions a lexis pair may be rewritten in.
DIRECTIONS = ("both", "to_british", "to_american")
#: Lexis pairs, American -> British, and the directions each may be rewritten in: ``both``,
#: ``to_british`` (its British word has another sense too) or ``to_american`` (its American
#: word has). Chosen by us from well-known pairs, each kept only where its source word has the
#: one sense in everyday writing.
LEXIS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "mom": ("mum", "both"),
        "moms": ("mums", "both"),
        "mommy": ("mummy", "to_british"),  # mummy: also the Egyptian one
        "vacation": ("holiday", "to_british"),  # holiday: also a public holiday in the US
        "vacations": ("holidays", "to_british"),
        "apartment": ("flat", "to_british"),  # flat: also an adjective
        "apartments": ("flats", "to_british"),
        "cookies": ("biscuits", "to_british"),  # US biscuits are another food
        "candy": ("sweets", "to_british"),  # sweets: also the adjective's plural noun
        "sidewalk": ("pavement", "to_british"),  # pavement: any paved surface in the US
        "truck": ("lorry", "both"),
        "trucks": ("lorries", "both"),
        "elevator": ("lift", "to_british"),  # lift: also a verb
        "diaper": ("nappy", "both"),
        "diapers": ("nappies", "both"),
        "cellphone": ("mobile", "to_british"),  # mobile: also an adjective
        "math": ("maths", "both"),
        "movie": ("film", "to_british"),  # film: also a camera's film
        "movies": ("films", "to_british"),
        "fall": ("autumn", "to_american"),  # fall: also a verb
        "gas": ("petrol", "to_american"),  # gas: also any gas
        "trash": ("rubbish", "to_british"),  # rubbish: also "bad" in British English
        "garbage": ("rubbish", "to_british"),
        "soccer": ("football", "to_british"),  # football: American football in the US
        "pants": ("trousers", "to_american"),  # pants: underwear in British English
        "parking lot": ("car park", "both"),
    }
)

_UNTOUCHED = re.compile(r"(?:https?://|www\.)\S+|@\w+")


@dataclass(frozen=True)
class Rewritten:
    """One text after a rewrite.

    Attributes:
        text: the rewritten text (the original where nothing fired).
        fired: each word rewritten, in order, as ``source>target`` (lower case).
    """

    text: str
    fired: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether any word was rewritten."""
        return bool(self.fired)


@dataclass(frozen=True)
class VarietyRewrite:
    """A rewrite from one written variety (``american``, ``british``) into the other.

    Attributes:
        source: the variety the texts are written in.
        target: the variety they are rewritten into.
        words: lower-case source word (or two-word phrase) -> its target form.
    """

    source: str
    target: str
    words: Mapping[str, str]

    @classmethod
    def into(cls, target: str, lexis: Mapping[str, tuple[str, str]] = LEXIS) -> VarietyRewrite:
        """The rewrite into ``target`` (``american`` or ``british``) from the other.

        ``lexis``: the lexis pairs (:data:`LEXIS`'s form; a user's list adds to it).

        Raises:
            ConfigError: ``target`` is no variety.
        """
        if target not in (AMERICAN, BRITISH):
            raise ConfigError(f"no variety {target!r}: rewrite into {AMERICAN} or {BRITISH}")
        return cls(BRITISH if target == AMERICAN else AMERICAN, target, _words(target, lexis))

    @classmethod
    def between(
        cls, group: str, other: str, lexis: Mapping[str, tuple[str, str]] = LEXIS
    ) -> VarietyRewrite:
        """The rewrite of ``group``'s texts into ``other``'s variety.

        Raises:
            ConfigError: either group has no variety, or both have the same one.
        """
        source, target = VARIETIES.get(group), VARIETIES.get(other)
        if source is None or target is None:
            missing = group if source is None else other
            raise ConfigError(
                f"no written variety for group {missing!r}: rewrites go between "
                f"{', '.join(VARIETIES)} ({AMERICAN}: us; {BRITISH}: the others)"
            )
        if source == target:
            raise ConfigError(f"{group} and {other} are both written {source}: nothing to rewrite")
        return cls.into(target, lexis)

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        """Two-word phrases first (longest first), then any word."""
        phrases = sorted((w for w in self.words if " " in w), key=len, reverse=True)
        alternatives = [*(rf"\b{re.escape(p)}\b" for p in phrases), "[A-Za-z]+"]
        return re.compile("|".join(alternatives), re.IGNORECASE)

    def __call__(self, text: str) -> Rewritten:
        """``text`` with each mapped word in the target's form (case and the rest kept)."""
        pattern = self._pattern
        fired: list[str] = []

        def swap(match: re.Match[str]) -> str:
            found = match.group()
            target, case = self.words.get(found.lower()), _case(found)
            if target is None or case is None:
                return found
            fired.append(f"{found.lower()}>{target}")
            return case(target)

        pieces, start = [], 0
        for kept in _UNTOUCHED.finditer(text):  # URLs and @mentions stay as they are
            pieces += [pattern.sub(swap, text[start : kept.start()]), kept.group()]
            start = kept.end()
        pieces.append(pattern.sub(swap, text[start:]))
        return Rewritten("".join(pieces), tuple(fired))


def _words(target: str, lexis: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """The source -> target words of a rewrite into ``target``: spelling, then lexis."""
    spelling = AMERICAN_ENGLISH_SPELLINGS if target == BRITISH else BRITISH_ENGLISH_SPELLINGS
    words = {k: v for k, v in spelling.items() if k not in AMBIGUOUS}
    for american, (british, directions) in lexis.items():
        if target == BRITISH and directions in ("both", "to_british"):
            words[american] = british
        elif target == AMERICAN and directions in ("both", "to_american"):
            words[british] = american
    return words


def _case(word: str) -> Callable[[str], str] | None:
    """How ``word`` is cased, as a function that cases a target alike (None: mixed, left)."""
    if word == word.lower():
        return str.lower
    if word == word.upper() and len(word) > 1:
        return str.upper
    if word[0].isupper() and word[1:] == word[1:].lower():
        return lambda target: target[:1].upper() + target[1:]
    if word == word.title():
        return str.title
    return None
