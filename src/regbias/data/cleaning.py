"""Text cleaning shared by every stage: the study's tweet and Reuters rules."""

from __future__ import annotations

import re

#: Mentions, every character that is not an ASCII letter, digit, space or tab, and URLs
#: (docs/method.md, "The study's groups"). The URL branch comes last as in the authors' code; it
#: removes whole URLs because a URL starts with a letter, which the first two branches skip.
TWEET_PATTERN = re.compile(r"(@[A-Za-z0-9]+)|([^0-9A-Za-z \t])|(\w+:\/\/\S+)")
# The same pattern without the URL branch, which can only match where "://" occurs: most tweets
# have no URL, and skipping the branch's backtracking over every word halves the cleaning time.
_WITHOUT_URL = re.compile(r"(@[A-Za-z0-9]+)|([^0-9A-Za-z \t])")
_SPACES = re.compile(r"[ \t]+")
_NEWLINES = re.compile(r"\r?\n|\r")


def clean_tweet(text: str) -> str:
    """Clean one tweet the way the study does.

    The result is empty when nothing but mentions, URLs and punctuation was left.

    Every match of :data:`TWEET_PATTERN` becomes a space, then runs of whitespace collapse to one
    space and the ends are stripped. Case is kept: the tokenizer lowercases.
    """
    pattern = TWEET_PATTERN if "://" in text else _WITHOUT_URL
    return " ".join(pattern.sub(" ", text).split())


def clean_reuters(text: str) -> str:
    """Clean one Reuters document the way the authors did.

    Newlines are removed without inserting a space (the authors' texts read ``ban onforeign-flag``
    where a line broke), then runs of spaces collapse to one and the ends are stripped.
    """
    return _SPACES.sub(" ", _NEWLINES.sub("", text)).strip()
