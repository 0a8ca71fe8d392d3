"""The distinguishing words' null spread that docs/method.md states, re-measured small.

``benchmarks/words_null_spread.py`` (200 splits) found z's standard deviation 0.57 under the
pair's prior and 0.30 under the corpus prior on exchangeable halves of US tweets: not the
standard normal's 1, so |z| > 1.96 is no test. Forty splits must land near those figures.
"""

from __future__ import annotations

import numpy as np

from regbias.analysis.explain.words import corpus_counts
from tests.benchmark_module import load_benchmark

words_null_spread = load_benchmark("words_null_spread")


def test_z_spreads_well_under_a_standard_normal_on_planted_nulls(shared_data_dir) -> None:
    us = words_null_spread.tweets(shared_data_dir, "us")
    regions = words_null_spread.REGIONS
    corpus_texts = [t for r in regions for t in words_null_spread.tweets(shared_data_dir, r)]
    found = words_null_spread.null_z(us, corpus_counts(corpus_texts), 300, 40, seed=1)
    pair, corpus = (np.concatenate(found[k]).std() for k in ("pair", "corpus"))
    assert 0.52 < pair < 0.63 and 0.25 < corpus < 0.35, (pair, corpus)
