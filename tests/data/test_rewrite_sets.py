"""A group's changed texts with their matched controls, the directions, and a user's word list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from regbias.data.rewrite_sets import (
    ControlWords,
    read_word_list,
    rewrite_sets,
    variety_directions,
)
from regbias.data.variety_rewrite import LEXIS, VarietyRewrite
from regbias.errors import ConfigError, DataError

GROUPS = {
    "us": ["my favorite color is gray", "my mom", "nothing here", "see the theater tonight"],
    "uk": ["my favourite colour", "my mum", "the centre of town", "plain words only"],
    "ca": ["a colour or a color"],
}
WORD = re.compile(r"[A-Za-z]+")


def test_only_changed_texts_are_kept_each_with_a_control_of_as_many_words():
    (us,) = rewrite_sets(GROUPS, [("us", "uk")], seed=0)
    assert us.name == "us>british" and us.examined == 4 and us.changed == 3
    assert us.rewritten[0] == "my favourite colour is grey"
    excluded = ControlWords.of([], LEXIS).excluded
    for original, control, fired in zip(us.originals, us.controls, us.fired, strict=True):
        swapped = [
            (a, b)
            for a, b in zip(WORD.findall(original), WORD.findall(control), strict=True)
            if a != b
        ]
        assert len(swapped) == len(fired)  # the same words, in the same places
        assert not {b.lower() for _, b in swapped} & excluded  # no variety's word
    again = rewrite_sets(GROUPS, [("us", "uk")], seed=0)[0]
    assert again == us  # the same in every job
    assert rewrite_sets(GROUPS, [("us", "uk")], seed=0, draw=1)[0].controls != us.controls


def test_one_set_serves_every_target_of_one_variety():
    groups = {**GROUPS, "au": ["my favourite mum"]}
    sets = rewrite_sets(groups, [("us", "uk"), ("us", "au"), ("uk", "us")], seed=0)
    assert [s.name for s in sets] == ["us>british", "uk>american"]


def test_directions_are_both_ways_of_every_pair_of_different_varieties():
    groups = ["us", "ca", "uk", "au", "mixed"]
    assert variety_directions(groups) == [("us", "uk"), ("uk", "us"), ("us", "au"), ("au", "us")]
    assert variety_directions(groups, ["uk-us"]) == [("uk", "us"), ("us", "uk")]
    with pytest.raises(ConfigError, match="no pair of this study's groups"):
        variety_directions(groups, ["us_uk"])


def test_a_direction_with_no_variety_and_a_corpus_with_nothing_to_rewrite_are_refused():
    with pytest.raises(ConfigError, match="no written variety for group 'ca'"):
        rewrite_sets(GROUPS, [("ca", "us")], seed=0)
    with pytest.raises(DataError, match="no text has a word to rewrite"):
        rewrite_sets({"us": ["plain"], "uk": ["words"]}, [("us", "uk")], seed=0)


def test_a_word_list_adds_pairs_and_a_bad_one_says_its_line(tmp_path: Path):
    good = tmp_path / "words.csv"
    good.write_text("american,british,direction\nfaucet,tap,to_british\nline,queue\n")
    words = read_word_list(good)
    assert words["faucet"] == ("tap", "to_british") and words["line"] == ("queue", "both")
    assert VarietyRewrite.into("british", words)("a faucet").text == "a tap"
    bad = tmp_path / "bad.csv"
    bad.write_text("american,british\nfaucet,tap,sideways\n")
    with pytest.raises(ConfigError, match=r"bad.csv, line 2: .* direction one of"):
        read_word_list(bad)
    headless = tmp_path / "headless.csv"
    headless.write_text("faucet,tap\n")
    with pytest.raises(ConfigError, match="first line is the header"):
        read_word_list(headless)
    with pytest.raises(ConfigError, match="no file"):
        read_word_list(tmp_path / "missing.csv")
