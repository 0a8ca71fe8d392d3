"""Tweet and Reuters cleaning rules."""

from __future__ import annotations

import pytest

from regbias.data.cleaning import TWEET_PATTERN, clean_reuters, clean_tweet


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("@switchfoot http://twitpic.com/2y1zl - Awww, that's a bummer.", "Awww that s a bummer"),
        (
            "I dived many times for the ball. Managed to save 50%",
            "I dived many times for the ball Managed to save 50",
        ),
        ("  tabs\tand   spaces  ", "tabs and spaces"),
        ("café, naïve", "caf na ve"),
        ("@bob", ""),
        ("!!! ...", ""),
        ("see https://x.org/a?b=1 now", "see now"),
        ("line\u0085break", "line break"),
        ("Keep CASE", "Keep CASE"),
        ("mail@example.com", "mail com"),
    ],
)
def test_clean_tweet(raw: str, cleaned: str) -> None:
    assert clean_tweet(raw) == cleaned


def test_clean_tweet_equals_the_protocol_pattern_applied_literally() -> None:
    samples = [
        "a@b://c d",
        "x https://t.co/abc and ftp://h/p @u_v é://z",
        "no url here @someone!",
        "weird_word://x.y _under://z",
    ]
    for raw in samples:
        assert clean_tweet(raw) == " ".join(TWEET_PATTERN.sub(" ", raw).split())


def test_clean_reuters_removes_newlines_without_space_and_collapses_spaces() -> None:
    raw = "Tug crews in NSW lifted their ban on\nforeign-flag ships.\n    The ban,  imposed\r\n"
    assert (
        clean_reuters(raw)
        == "Tug crews in NSW lifted their ban onforeign-flag ships. The ban, imposed"
    )


def test_clean_reuters_strips_ends() -> None:
    assert clean_reuters("  \n text \t here \n") == "text here"
