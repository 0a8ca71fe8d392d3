"""Measure I's planted null at scale: re-split one region's scored texts many times.

A real sweep (``design=texts``) leaves every text's per-model scores in each job's
``performance/texts.csv``. Their US texts, all scored by the same 25 models, are split at
random into "regions" of the real sizes (AU 2165, CA 1840, NZ 329, UK 6446, ZA 250, the rest
US), and the performance test of record runs on every split exactly as the parent runs it
(its strata, its pairs, Holm over the 15). The groups are exchangeable and share the
models, the data's real reuse pattern, so every "differs" is a false positive. With
``--flip 0.1`` a share of one split group's labels is flipped (its texts and the models'
scores unchanged): a planted gap whose pairs the test must find.

It is cheap (no model is trained: the scores exist), so it can run enough splits that a rate
twice the nominal one would be rejected at 0.05 and at 0.01; ``benchmarks/null_study.py
--performance-only`` runs the whole pipeline on a few splits instead.

    python benchmarks/perf_null.py --sweep /tmp/realsweep --splits 200
    python benchmarks/perf_null.py --sweep /tmp/realsweep --splits 100 --flip 0.1

Figures, not assertions: it prints the rates with their binomial intervals.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from regbias.analysis.pairs.performance import PerformanceTestSettings, performance_pair_tests
from regbias.analysis.pairs.pooled_scores import PerfTexts, pool_text_tables

SIZES = {"au": 2165, "ca": 1840, "nz": 329, "uk": 6446, "za": 250}
GROUPS = ["au", "ca", "nz", "uk", "us", "za"]


def sweep_texts(sweep: Path, source: str) -> pd.DataFrame:
    """The sweep's pooled per-text scores of ``source``'s texts (one row per text)."""
    files = sorted(sweep.glob("**/artifacts/performance/texts.csv"))
    if not files:
        raise SystemExit(f"no performance/texts.csv under {sweep}: run a sweep with design=texts")
    pooled = pool_text_tables([pd.read_csv(f, dtype={"key": str}) for f in files])
    return pooled[pooled["group"] == source].reset_index(drop=True)


def split_of(texts: pd.DataFrame, seed: int, flip: float, flip_group: str) -> pd.DataFrame:
    """``texts`` split at random into the regions' sizes (the rest is ``us``)."""
    order = np.random.default_rng(seed).permutation(len(texts))
    group = np.full(len(texts), "us", dtype=object)
    start = 0
    for name, size in SIZES.items():
        group[order[start : start + size]] = name
        start += size
    split = texts.assign(group=group)
    if flip > 0:
        rows = np.flatnonzero(group == flip_group)
        chosen = np.random.default_rng(seed + 7).choice(rows, round(flip * len(rows)), False)
        split.loc[chosen, "label"] = 1 - split.loc[chosen, "label"]
    return split


def run_split(split: pd.DataFrame, seed: int, relabellings: int) -> pd.DataFrame:
    """The performance test of record of the split's 15 region pairs."""
    settings = PerformanceTestSettings(enabled=True, relabellings=relabellings, seed=seed)
    return performance_pair_tests(PerfTexts.of(split), GROUPS, settings).table


def _rate(hits: int, n: int, alpha: float) -> str:
    low, high = stats.binomtest(hits, n).proportion_ci(0.95)
    p = stats.binomtest(hits, n, alpha).pvalue
    critical = stats.binom.isf(0.025, n, alpha)  # the count above which alpha is rejected
    power = stats.binom.sf(critical, n, 2 * alpha)
    return (
        f"{hits}/{n} = {hits / n:.4f} (95% CI {low:.4f}-{high:.4f}; binomial p vs {alpha}: "
        f"{p:.2f}; a true rate of {2 * alpha} would be rejected with probability {power:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", type=Path, required=True, help="a sweep's tracking folder")
    parser.add_argument("--source", default="us", help="the group whose texts are split")
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--relabellings", type=int, default=1999)
    parser.add_argument("--flip", type=float, default=0.0, help="flip this share of labels")
    parser.add_argument("--flip-group", default="za")
    args = parser.parse_args()
    texts = sweep_texts(args.sweep, args.source)
    models = sum(c.startswith("prob:") for c in texts.columns)
    print(f"{len(texts)} {args.source} texts scored by {models} models; {args.splits} splits")
    started = time.perf_counter()
    tables = []
    for seed in range(args.splits):
        split = split_of(texts, seed, args.flip, args.flip_group)
        tables.append(run_split(split, seed, args.relabellings).assign(split=seed))
    found = pd.concat(tables, ignore_index=True)
    print(f"{time.perf_counter() - started:.0f} s")
    report(found, args.flip, args.flip_group)


def report(found: pd.DataFrame, flip: float, flip_group: str) -> None:
    """Rates of raw p and of adjusted verdicts, over every pair or the planted group's."""
    planted = (found["group_a"] == flip_group) | (found["group_b"] == flip_group)
    subsets = {"all 15 pairs": np.ones(len(found), dtype=bool)}
    if flip > 0:
        subsets = {f"{flip_group}'s pairs (planted)": planted, "the other pairs": ~planted}
    for name, rows in subsets.items():
        p = found.loc[rows, "p"].to_numpy(dtype=np.float64)
        print(f"{name}:")
        for alpha in (0.05, 0.01):
            print(f"  raw p <= {alpha}: {_rate(int(np.sum(p <= alpha)), len(p), alpha)}")
        differs = found.loc[rows, "differs"].astype(bool)
        print(f"  adjusted 'differs': {int(differs.sum())}/{len(p)} = {differs.mean():.4f}")
        counts = np.histogram(p, bins=10, range=(0, 1))[0]
        print("  histogram of raw p: " + " ".join(str(c) for c in counts) + " (tenths)")
    any_differs = found.groupby("split")["differs"].any()
    low, high = stats.binomtest(int(any_differs.sum()), len(any_differs)).proportion_ci(0.95)
    print(
        f"splits with any adjusted 'differs': {int(any_differs.sum())}/{len(any_differs)} "
        f"(95% CI {low:.3f}-{high:.3f}; Holm keeps it at most 0.05 under the null)"
    )


if __name__ == "__main__":
    main()
