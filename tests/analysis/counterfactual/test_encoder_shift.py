"""The encoder's side on real tweets: an identity rewrite moves nothing, an encoder blind to
spelling shows a share near 0, one keyed on British forms a large share beyond its control."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from regbias.analysis.counterfactual.encoder_shift import encoder_shifts, shift_p
from regbias.data.rewrite_sets import rewrite_sets
from regbias.data.variety_rewrite import VarietyRewrite
from tests.analysis.counterfactual.conftest import DIMENSIONS, bag_of_words, regional

DIRECTIONS = [("us", "uk"), ("uk", "us")]
TO_AMERICAN = VarietyRewrite.into("american")
BRITISH_FORMS = frozenset(TO_AMERICAN.words)


def _one_form() -> dict[str, str]:
    """Both forms of every pair (spelling and lexis, either way) mapped to one form."""
    parent: dict[str, str] = {}

    def root(word: str) -> str:
        while parent.get(word, word) != word:
            word = parent[word]
        return word

    for target in ("american", "british"):
        for a, b in VarietyRewrite.into(target).words.items():
            parent[root(a)] = root(b)
    return {w: root(w) for w in parent if root(w) != w}


def _shifts(tweets, embed, settings, sets=None):
    sets = sets if sets is not None else rewrite_sets(tweets, DIRECTIONS, seed=0)
    options = {"seed": 0, "resamples": 199, "confidence": 0.95, "alpha": 0.05}
    return encoder_shifts(sets, DIRECTIONS, tweets, embed, settings, **options)


def test_the_identity_rewrite_explains_exactly_nothing(tweets, counterfactual_settings):
    # On words alone the us-uk difference is within its noise: no share, said so.
    (plain, _) = _shifts(tweets, bag_of_words, counterfactual_settings)
    assert np.isnan(plain.share) and "too close to its noise" in plain.note
    assert np.isfinite(plain.verdict.p)  # the verdict needs no share
    sets = [replace(s, rewritten=s.originals) for s in rewrite_sets(tweets, DIRECTIONS, seed=0)]
    for row in _shifts(tweets, regional, counterfactual_settings, sets):
        assert row.share == 0.0 and row.per_text == 0.0
        assert row.changed > 10 and not row.verdict.differs


def test_an_encoder_blind_to_spelling_shows_a_share_near_zero(tweets, counterfactual_settings):
    one_token = VarietyRewrite("x", "x", _one_form())

    def blind(texts):  # both forms of every pair read as one token
        return regional([one_token(t).text for t in texts])

    for row in _shifts(tweets, blind, counterfactual_settings):
        assert abs(row.share) < 1e-3, row
        # Its control moves the texts (us>uk: away from uk, beyond small), the rewrite does
        # not: the verdict asks both, and is no.
        assert row.verdict.moved == 1.0 and not row.verdict.differs


def test_an_encoder_keyed_on_british_forms_moves_us_toward_uk(tweets, counterfactual_settings):
    marker = np.zeros(DIMENSIONS)
    marker[0] = 3.0

    def keyed(texts):  # adds a fixed direction per British form a text holds
        counts = [sum(w in BRITISH_FORMS for w in t.lower().split()) for t in texts]
        return regional(texts) + np.outer(counts, marker)

    rows = {r.direction: r for r in _shifts(tweets, keyed, counterfactual_settings)}
    us_uk, uk_us = rows["us>uk"], rows["uk>us"]
    assert us_uk.share > 0.05 and us_uk.share_low > us_uk.control_high
    assert us_uk.verdict.differs and us_uk.verdict.adjusted <= 0.01
    # uk>us removes British forms, and so does its control: not read as the variety.
    assert uk_us.share > 0.05 and uk_us.control > 0.05 and not uk_us.verdict.differs
    assert us_uk.share_changed == pytest.approx(us_uk.changed / len(tweets["us"]), abs=1e-3)


def test_two_controls_of_the_same_texts_are_a_null_at_its_level(tweets):
    """Control against control on the real us>uk texts: exchangeable, so rejected at the level
    (the full table, MiniLM, 3,000 repetitions: benchmarks/counterfactual_rates.py)."""
    draws = [rewrite_sets(tweets, [("us", "uk")], seed=0, draw=k)[0] for k in range(4)]
    a, b = regional(tweets["us"]), regional(tweets["uk"])
    difference = b.mean(axis=0) - a.mean(axis=0)
    original = regional(list(draws[0].originals))
    shares = np.stack([(regional(list(d.controls)) - original) @ difference for d in draws])
    rng = np.random.default_rng(0)
    columns = np.arange(shares.shape[1])
    found = []
    for _ in range(400):
        first = rng.integers(0, 4, len(columns))
        second = (first + rng.integers(1, 4, len(columns))) % 4
        found.append(shift_p(shares[first, columns], shares[second, columns], 199, rng))
    toward, beyond = np.array(found).T
    # "Beyond the control" is exact here: rejected at the level (the 99% binomial range of
    # 400 nulls about 0.05); the verdict also needs "toward", so it rejects no more often.
    assert 0.02 <= (beyond <= 0.05).mean() <= 0.09
    assert (np.maximum(toward, beyond) <= 0.05).mean() <= (beyond <= 0.05).mean()
