"""Real tweets of two groups, and cheap deterministic sentence vectors for them."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from regbias.analysis.counterfactual.settings import CounterfactualSettings
from tests.conftest import packaged

DIMENSIONS = 64
_WORD = re.compile(r"[a-z]+")


def word_vector(word: str) -> np.ndarray:
    """A word's fixed random vector (its CRC32 seeds it)."""
    return np.random.default_rng(zlib.crc32(word.encode())).standard_normal(DIMENSIONS)


def bag_of_words(texts: Sequence[str]) -> np.ndarray:
    """A text's vector: the mean of its lower-cased words' vectors (an encoder of words)."""
    out = np.zeros((len(texts), DIMENSIONS))
    for i, text in enumerate(texts):
        words = _WORD.findall(text.lower())
        if words:
            out[i] = np.mean([word_vector(w) for w in words], axis=0)
    return out


#: Words of neither variety list that the uk tweets use more than the us ones (and back).
UK_WORDS = frozenset("london uk manchester bbc quid lovely cheers brilliant uni".split())
US_WORDS = frozenset("nyc texas dude awesome ya gonna".split())


def regional(texts: Sequence[str]) -> np.ndarray:
    """:func:`bag_of_words` with one axis that counts UK words less US words: the groups'
    mean difference then stands far above its noise, as a real encoder's does."""
    out = bag_of_words(texts)
    for i, text in enumerate(texts):
        words = _WORD.findall(text.lower())
        out[i, 1] += 6.0 * (sum(w in UK_WORDS for w in words) - sum(w in US_WORDS for w in words))
    return out


@pytest.fixture(scope="session")
def tweets(shared_data_dir: Path) -> dict[str, list[str]]:
    """The distinct shipped tweets of us and uk (real texts, real reuse of words)."""
    from regbias.app.settings import read_settings
    from regbias.study.pipeline import read_study
    from tests.conftest import compose_config

    settings = read_settings(compose_config(f"paths.data_dir={shared_data_dir}"))
    groups = read_study(settings).groups
    return {g: list(dict.fromkeys(groups[g].texts)) for g in ("us", "uk")}


@pytest.fixture(scope="session")
def counterfactual_settings() -> CounterfactualSettings:
    """The packaged settings at 999 sign flips."""
    return packaged(CounterfactualSettings, "analysis.counterfactual", relabellings=999)


Embed = Callable[[list[str]], np.ndarray]
