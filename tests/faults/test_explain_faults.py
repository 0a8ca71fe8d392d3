"""Items 4, 5 and 7 of issue 56: the explanations say what they did, and what they did not.

4. A group whose texts hold no word (emoji, punctuation) showed "words of uk: none" on both
   sides though uk has words: each side now lists its own words, and an empty side says so.
5. The place-name control was skipped as "not English" when the first 2,000 texts read (the
   first group's) were place names: the language is judged on texts of every group.
7. With the test of record off and ``analysis.explain.mask_places=true`` nothing said that the
   explanations and the control did not run: one line says so, in the log and the report.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from regbias.analysis.explain.pairs import explain_pairs
from regbias.analysis.explain.places import gazetteer_of
from regbias.analysis.explain.result import Explanations
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.explain.words import corpus_counts
from regbias.analysis.pairs.embedding import (
    EmbeddingPairTests,
    EmbeddingTestSettings,
    embedding_pair_tests,
)
from regbias.app.settings import read_settings
from regbias.report.explain import explain_section, log_explanations
from regbias.study.explain import run_explain
from tests.conftest import packaged
from tests.faults.conftest import composed
from tests.report.test_findings import FakeRun

_HASHED = HashingVectorizer(n_features=256, alternate_sign=False, norm="l2")
_PROSE = "the tea and the biscuits are on the table for all of us to share with {} friends"
_EMOJI = ("😀", "🙂", "🎉", "!!", "?!", "…", "❤️", "👍")


def _vectors(texts: list[str]) -> np.ndarray:
    """A stand-in encoder: the hashed bag of a text's words (emoji-only texts are zeros)."""
    return _HASHED.transform(texts).toarray()


def _tests(groups: dict[str, list[str]]) -> EmbeddingPairTests:
    """The test of record of ``groups`` with the mean statistic, 199 relabellings."""
    settings = packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=199)
    return embedding_pair_tests(groups, _vectors, dataclasses.replace(settings, statistic="mean"))


def _explain_settings(**changes: object) -> ExplainSettings:
    return dataclasses.replace(packaged(ExplainSettings, "analysis.explain"), **changes)


def _emoji_texts(n: int) -> list[str]:
    """``n`` distinct texts of emoji and punctuation only."""
    return [
        " ".join(_EMOJI[(i + j) % len(_EMOJI)] for j in range(1 + i % 5)) + "!" * (i // 40)
        for i in range(n)
    ]


@pytest.mark.parametrize("prior", ["pair", "corpus"])
def test_a_group_without_words_says_so_and_the_other_lists_its_own(prior: str) -> None:
    """Item 4: uk's words are uk's; the emoji group's line says its texts have no words."""
    groups = {
        "uk": [_PROSE.format(f"cuppa{i % 7} lovely{i % 3}") for i in range(60)],
        "emo": _emoji_texts(60),
    }
    assert len(set(groups["emo"])) == 60
    tests = _tests(groups)
    explained = explain_pairs(tests, groups, _vectors, _explain_settings(prior=prior))
    section = explain_section(explained)
    assert "words of uk: none" not in section
    assert "words of emo: none, its texts have no words" in section
    (uk_line,) = [line for line in section.splitlines() if line.startswith("- words of uk")]
    assert "the other side's texts have no words" in uk_line and "biscuits (" in uk_line
    (pair,) = explained.pairs
    uk_side = "a" if pair.group_a == "uk" else "b"
    emo_side = "b" if uk_side == "a" else "a"
    assert not pair.has_words(emo_side) and pair.has_words(uk_side)
    uk_words = set(pair.side_words(uk_side)["word"])
    assert uk_words and uk_words <= set(corpus_counts(groups["uk"]))
    assert pair.side_words(emo_side).empty
    # The pair's files and figure are still written (the figure plots counts).
    run = FakeRun()
    log_explanations(run, explained)  # type: ignore[arg-type]
    assert len(run.figures) == 1


def test_the_language_is_judged_on_every_groups_texts_not_the_first_2000() -> None:
    """Item 5: a first group of 2,000 place names alone is no corpus in another language."""
    places = [f"London Sydney Auckland {i}" for i in range(2_000)]
    groups = {
        "places": places,
        "uk": [_PROSE.format(f"mates{i} in London") for i in range(200)],
        "us": [_PROSE.format(f"buddies{i} in Boston") for i in range(200)],
    }
    gazetteer = gazetteer_of(["London", "Sydney", "Auckland", "Boston"], "four cities")
    tests = _tests(groups)
    explained = explain_pairs(
        tests, groups, _vectors, _explain_settings(mask_places=True), gazetteer=gazetteer
    )
    assert explained.pairs
    assert explained.note == "" and explained.controlled


def test_with_the_test_of_record_off_one_line_says_nothing_was_explained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Item 7: the explanations and the control did not run, said in the log and the report."""
    settings = read_settings(
        composed("analysis.tests.embedding.enabled=false", "analysis.explain.mask_places=true")
    )
    with caplog.at_level(logging.INFO):
        explained = run_explain(settings, None)
    assert isinstance(explained, Explanations) and not explained.pairs
    said = [r for r in caplog.records if "did not run" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    line = said[0].getMessage()
    assert "explanations and the place-name control did not run" in line
    assert "analysis.tests.embedding.enabled=false" in line
    section = explain_section(explained)
    assert "explanations and the place-name control did not run" in section
    assert "no pair that differs" not in section  # not "nothing differs": nothing was tested
    run = FakeRun()
    log_explanations(run, explained)  # type: ignore[arg-type]
    assert not run.tables and not run.figures and not run.texts
    assert Explanations.from_dict(explained.to_dict()).skipped == explained.skipped


def test_with_the_explanations_off_nothing_is_said() -> None:
    settings = read_settings(
        composed("analysis.tests.embedding.enabled=false", "analysis.explain.enabled=false")
    )
    assert run_explain(settings, None) is None
