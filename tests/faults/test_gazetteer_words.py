"""Item 8 of issue 56: the place-name control masks places, not ordinary words, and says which.

The gazetteer masked ``mango``, ``turkey``, ``jersey``, ``chile``, ``kiwi``, ``oz``, "english
class", "french fries" and "the states of matter", and the report never said what was masked.
Common-word names are left out, ambiguous ones count only capitalised, phrases in which a name
is no place are kept, and each pair lists the names masked in each group's texts.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from regbias.analysis.explain.pairs import explain_pairs
from regbias.analysis.explain.places import MASK, Gazetteer, gazetteer_of, load_gazetteer
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.pairs.embedding import EmbeddingTestSettings, embedding_pair_tests
from regbias.report.explain import explain_section
from tests.conftest import packaged

_HASHED = HashingVectorizer(n_features=256, alternate_sign=False, norm="l2")

#: Texts in which no word is a place.
ORDINARY = [
    "had a mango smoothie and a turkey sandwich",
    "my football jersey is in the wash",
    "red chile on my tacos",
    "a kiwi and a banana for lunch",
    "add 8 oz of flour",
    "going to english class then french fries",
    "revising the states of matter tonight",
    "my guinea pig is asleep",
    "watching the wizard of oz again",
]
#: Texts whose capitalised names are places, with the names the control should mask.
PLACES = [
    ("back from Turkey and Chile", ["turkey", "chile"]),
    ("moving to Jersey next week", ["jersey"]),
    ("the Kiwis won in Auckland", ["kiwis", "auckland"]),
    ("back in Oz after London", ["oz", "london"]),
    ("we went to new jersey and the states", ["new jersey", "the states"]),
    ("the English are playing in New York", ["english", "new york"]),
]


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    return load_gazetteer(100_000)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_words_are_not_masked(gazetteer: Gazetteer, text: str) -> None:
    assert gazetteer.mask_found(text)[0] == text
    assert gazetteer.mask_found(text)[1] == []


@pytest.mark.parametrize(("text", "names"), PLACES)
def test_places_are_still_masked(gazetteer: Gazetteer, text: str, names: list[str]) -> None:
    masked, found = gazetteer.mask_found(text)
    assert found == names
    assert masked.count(MASK) == len(names)


def test_capitalised_phrases_of_no_place_are_kept(gazetteer: Gazetteer) -> None:
    for text in ("French fries and French toast", "English class at nine", "Turkey burger"):
        assert gazetteer.mask_found(text)[0] == text


def _vectors(texts: list[str]) -> np.ndarray:
    return _HASHED.transform(texts).toarray()


def test_the_report_lists_the_names_masked_in_each_groups_texts() -> None:
    """Beside each pair's masked verdict: the names masked in each side's texts, counted."""
    base = [f"the day {i} was long and we had tea" for i in range(80)]
    groups = {
        "uk": [f"{t} in London" if i % 2 else f"{t} in Leeds" for i, t in enumerate(base[:40])],
        "us": [f"{t} in Boston with turkey" for t in base[40:]],
    }
    pair_settings = packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=199)
    tests = embedding_pair_tests(
        groups, _vectors, dataclasses.replace(pair_settings, statistic="mean")
    )
    explain = dataclasses.replace(packaged(ExplainSettings, "analysis.explain"), mask_places=True)
    gazetteer = gazetteer_of(["London", "Leeds", "Boston", "Turkey"], "four names")
    explained = explain_pairs(tests, groups, _vectors, explain, gazetteer=gazetteer)
    section = explain_section(explained)
    lines = [x for x in section.splitlines() if x.startswith("- place names masked")]
    assert len(lines) == 1
    assert "in uk's texts leeds 20, london 20" in lines[0]
    assert "in us's texts boston 40" in lines[0]  # lower-case turkey is no place
    assert "french fries" in section  # the rules are named beside the control
    (pair,) = explained.pairs
    uk, us = ("a", "b") if pair.group_a == "uk" else ("b", "a")
    assert pair.masked_names(uk) == {"leeds": 20, "london": 20}
    assert pair.masked_names(us) == {"boston": 40}
