"""How far the distinguishing words' log-odds z spread when nothing tells two groups apart.

    python benchmarks/words_null_spread.py [--splits 200] [--size 300] [--data-dir DIR]

Planted nulls: ``--splits`` random splits of ``2 x --size`` distinct US tweets into two halves
(exchangeable groups). For each split, every word's Monroe et al. z under the pair's prior and
under the corpus prior (all six regions' tweets, standing for the every-group counts of
``analysis.explain.prior=corpus``), as :func:`regbias.analysis.explain.words.distinguishing_words`
computes them. Prints, per prior,
the standard deviation of z over every word of every split, the share of words past |z| 1.96,
and the largest |z| of a split (mean and 95th percentile): what a reader should compare a
pair's z with (docs/method.md, "What carries a difference").
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from regbias.analysis.explain.words import corpus_counts, log_odds, word_counts
from regbias.data.data_dir import DATA_DIR_ENV

REGIONS = ("au", "ca", "nz", "uk", "us", "za")


def tweets(folder: Path, region: str) -> list[str]:
    """A region's distinct non-empty tweets, in file order."""
    frame = pd.read_csv(folder / "regional_sentiment140" / f"{region}.csv")
    return [t for t in dict.fromkeys(frame["text"].dropna().astype(str)) if t.strip()]


def null_z(
    us: list[str], corpus: dict[str, int], size: int, splits: int, seed: int
) -> dict[str, list[np.ndarray]]:
    """Every word's z of every split, under each prior."""
    rng = np.random.default_rng(seed)
    found: dict[str, list[np.ndarray]] = {"pair": [], "corpus": []}
    total = float(sum(corpus.values()))
    for _ in range(splits):
        pick = rng.choice(len(us), 2 * size, replace=False)
        a, b = [us[i] for i in pick[:size]], [us[i] for i in pick[size:]]
        words, (y_a, y_b) = word_counts(a, b)
        _, z = log_odds(y_a, y_b, y_a + y_b)
        found["pair"].append(z)
        prior = np.maximum(y_a + y_b, np.array([corpus.get(w, 0) for w in words], dtype=float))
        _, z = log_odds(y_a, y_b, prior, total)
        found["corpus"].append(z)
    return found


def main() -> None:
    """Print the null spread of z per prior."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=os.environ.get(DATA_DIR_ENV, "../shared/data"))
    args = parser.parse_args()
    folder = Path(args.data_dir)
    us = tweets(folder, "us")
    corpus = corpus_counts([t for r in REGIONS for t in tweets(folder, r)])
    found = null_z(us, corpus, args.size, args.splits, args.seed)
    print(f"{args.splits} splits of {2 * args.size} distinct US tweets into two halves")
    print("prior   words    sd(z)   share |z|>1.96   largest |z| a split: mean, 95th pct")
    for prior, zs in found.items():
        every = np.concatenate(zs)
        largest = np.array([np.abs(z).max() for z in zs])
        print(
            f"{prior:7s} {len(every):7d}  {every.std():6.3f}   {np.mean(np.abs(every) > 1.96):.4f}"
            f"           {largest.mean():.2f}, {np.quantile(largest, 0.95):.2f}"
        )


if __name__ == "__main__":
    main()
