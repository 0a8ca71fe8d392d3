"""Sequential p-values (Besag-Clifford) in both tests of record: rates on nulls, power, cost.

Both tests of record stop a pair's relabellings at its ``stop_after``-th as extreme as observed
(``analysis.tests.*.stop_after``, default 100 of 9,999) and, with ``stop_when_clear``, at none
in the first 999. This checks, at the default settings:

- **embedding test, null**: splits of the real US tweets' sentence vectors into pseudo-groups at
  the regions' sizes (au, ca, nz, uk, za and the rest as us: the 15 pairs of a split share
  texts, as a study's pairs do); the sequential p's rate at 0.05 and 0.01, and the
  relabellings it drew against the 9,999 of a fixed count;
- **embedding test, planted**: the same splits with a share of pseudo-za's texts replaced by UK
  tweets; za's five pairs' detection (p <= 0.05, and Holm over the split's 15 pairs) by the
  sequential p and by the fixed-count p of the same relabellings;
- **performance test, null**: ``benchmarks/perf_test_rates.py``'s strong null (six regions at
  their real sizes, 25 models), every region pair; the same rates and cost;
- **performance test, planted**: its 5-point regime, za's pairs' detection, both p-values.

A rate's line says whether its 99% binomial bounds under the level hold it, and whether a test
at twice the level would be told apart (the bounds' upper end below twice the level).

    python benchmarks/sequential_rates.py                  # both tests, about 15 min
    python benchmarks/sequential_rates.py --tests performance --sweeps 400
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from collections.abc import Sequence

import numpy as np
from pair_test import SIZES, _vectors
from perf_test_rates import REGIMES, REGION_PAIRS, simulate
from scipy import stats

from regbias.analysis.multiplicity import adjust_p
from regbias.analysis.pairs.embedding_null import pooled_form, sequential_pair_null
from regbias.analysis.pairs.performance_null import StratifiedPair, relabel, sequential_relabel
from regbias.analysis.pairs.sequential import MonteCarloP, clear_point, sequential_null

RELABELLINGS, STOP_AFTER = 9999, 100
#: The shipped clear stop (stop_when_clear) for a family of 15 pairs at 0.05: N = 999.
CLEAR = clear_point(["primary"] * 15, 0.05, RELABELLINGS)
PAIRS = list(itertools.combinations([*SIZES, "us"], 2))


def rate_line(p: np.ndarray, level: float) -> str:
    """``p <= level``'s rate, its 99% bounds under the level, and whether twice it is excluded."""
    hits = int(np.sum(p <= level))
    low, high = stats.binom.ppf([0.005, 0.995], len(p), level) / len(p)
    inside = "within" if low <= hits / len(p) <= high else "OUTSIDE"
    doubled = "excluded" if high < 2 * level else "NOT excluded"
    return (
        f"p <= {level:g}: {hits}/{len(p)} = {hits / len(p):.4f}, 99% bounds [{low:.4f}, "
        f"{high:.4f}] ({inside}; twice the level {doubled})"
    )


def cost_line(found: Sequence[MonteCarloP]) -> str:
    """The relabellings drawn, against a fixed count's."""
    drawn = np.array([f.drawn for f in found])
    stopped = np.mean([f.stopped for f in found])
    return (
        f"relabellings drawn: mean {drawn.mean():.0f}, median {np.median(drawn):.0f} of "
        f"{RELABELLINGS} ({drawn.sum() / (RELABELLINGS * len(drawn)):.1%} of a fixed count's "
        f"work); {stopped:.1%} of pairs stopped early"
    )


def split_groups(
    texts: int, uk: int, split: int, share: float
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Pseudo-groups of one split: rows of US vectors, and (pseudo-za only) of UK vectors."""
    rng = np.random.default_rng([2024, split])
    order = rng.permutation(texts)
    groups, start = {}, 0
    for group, size in SIZES.items():
        planted = round(size * share) if group == "za" else 0
        groups[group] = (order[start : start + size - planted], rng.permutation(uk)[:planted])
        start += size - planted
    groups["us"] = (order[start:], np.empty(0, dtype=np.int64))
    return groups


def pair_vectors(
    us: np.ndarray, uk: np.ndarray, groups: dict[str, tuple[np.ndarray, np.ndarray]], a: str, b: str
) -> tuple[np.ndarray, int]:
    """A pair's pooled vectors (a's first) and a's size."""
    side_a = np.vstack([us[groups[a][0]], uk[groups[a][1]]])
    side_b = np.vstack([us[groups[b][0]], uk[groups[b][1]]])
    return np.vstack([side_a, side_b]), len(side_a)


def embedding_null(us: np.ndarray, uk: np.ndarray, splits: int) -> None:
    print(f"\n## embedding test, null: {splits} splits of {len(us)} US tweets, 15 pairs each")
    found = []
    for split in range(splits):
        groups = split_groups(len(us), len(uk), split, 0.0)
        for a, b in PAIRS:
            pooled, n_a = pair_vectors(us, uk, groups, a, b)
            rng = np.random.default_rng([7, split, len(found)])
            _, _, p = sequential_pair_null(
                pooled_form(pooled, "mean"), n_a, RELABELLINGS, rng, STOP_AFTER, CLEAR
            )
            found.append(p)
    ps = np.array([f.p for f in found])
    for level in (0.05, 0.01):
        print("  ", rate_line(ps, level))
    print("  ", cost_line(found))


def embedding_planted(us: np.ndarray, uk: np.ndarray, splits: int, share: float) -> None:
    print(f"\n## embedding test, planted: {share:.0%} of pseudo-za from UK, {splits} splits")
    za = [i for i, pair in enumerate(PAIRS) if "za" in pair]
    both = np.empty((splits, len(PAIRS), 2))
    for split in range(splits):
        groups = split_groups(len(us), len(uk), split, share)
        for i, (a, b) in enumerate(PAIRS):
            if i not in za:
                both[split, i] = 1.0  # not planted: left out of the rates below
                continue
            pooled, n_a = pair_vectors(us, uk, groups, a, b)
            rng = np.random.default_rng([8, split, i])
            t, null, fixed = sequential_pair_null(
                pooled_form(pooled, "mean"), n_a, RELABELLINGS, rng, None
            )
            _, sequential = sequential_null(
                [null], lambda v, t=t: v >= t, RELABELLINGS, STOP_AFTER, CLEAR
            )
            both[split, i] = sequential.p, fixed.p
    detection(both, za)


def detection(both: np.ndarray, planted: list[int]) -> None:
    """Planted pairs' detection by the sequential (``[..., 0]``) and fixed (``[..., 1]``) p."""
    for k, name in enumerate(("sequential", "fixed count")):
        raw = np.mean(both[:, planted, k] <= 0.05)
        holm = np.mean([adjust_p(row, "holm")[planted] <= 0.05 for row in both[..., k]])
        print(f"   {name:12} p <= 0.05: {raw:.3f}   Holm over the 15 pairs: {holm:.3f}")
    same = np.mean((both[:, planted, 0] <= 0.05) == (both[:, planted, 1] <= 0.05))
    print(f"   same raw verdict on {same:.1%} of planted pairs")


def performance_null(sweeps: int) -> None:
    regime = REGIMES["strong null"]
    print(f"\n## performance test, {regime.name}: {sweeps} simulated sweeps, 15 region pairs")
    groups = list(dict.fromkeys(itertools.chain(*REGION_PAIRS)))
    found = []
    for s in range(sweeps):
        rng = np.random.default_rng([45, s])
        texts = simulate(regime, rng, groups)
        scores = texts.scores()
        for a, b in REGION_PAIRS:
            pair = StratifiedPair.of(texts.group_side(a), texts.group_side(b))
            found.append(
                sequential_relabel(scores, pair, "accuracy", RELABELLINGS, rng, STOP_AFTER, CLEAR)[
                    1
                ]
            )
    ps = np.array([f.p for f in found])
    for level in (0.05, 0.01):
        print("  ", rate_line(ps, level))
    print("  ", cost_line(found))


def performance_planted(sweeps: int) -> None:
    regime = REGIMES["5 points"]
    print(f"\n## performance test, {regime.name} planted in za: {sweeps} sweeps")
    groups = list(dict.fromkeys(itertools.chain(*REGION_PAIRS)))
    za = [i for i, pair in enumerate(REGION_PAIRS) if "za" in pair]
    both = np.ones((sweeps, len(REGION_PAIRS), 2))
    for s in range(sweeps):
        rng = np.random.default_rng([46, s])
        texts = simulate(regime, rng, groups)
        scores = texts.scores()
        for i in za:
            a, b = REGION_PAIRS[i]
            pair = StratifiedPair.of(texts.group_side(a), texts.group_side(b))
            statistic = np.abs(relabel(scores, pair, "accuracy", RELABELLINGS, rng).statistic())
            threshold = statistic[0] - 1e-9

            def extreme(values: np.ndarray, threshold: float = threshold) -> np.ndarray:
                return values >= threshold

            _, sequential = sequential_null(
                [statistic[1:]], extreme, RELABELLINGS, STOP_AFTER, CLEAR
            )
            _, fixed = sequential_null([statistic[1:]], extreme, RELABELLINGS, None)
            both[s, i] = sequential.p, fixed.p
    detection(both, za)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", nargs="+", default=["embedding", "performance"])
    parser.add_argument("--splits", type=int, default=100, help="null splits of the US tweets")
    parser.add_argument("--planted-splits", type=int, default=40)
    parser.add_argument("--share", type=float, default=0.3, help="pseudo-za's UK share")
    parser.add_argument("--sweeps", type=int, default=400, help="performance null sweeps")
    parser.add_argument("--planted-sweeps", type=int, default=100)
    parser.add_argument("--data-dir", default=os.environ.get("REGBIAS_DATA_DIR", "data"))
    parser.add_argument("--cache-dir", default=".cache/regbias")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(
        f"relabellings {RELABELLINGS}, stop after {STOP_AFTER} as extreme as observed "
        f"or after {CLEAR} with none"
    )
    if "embedding" in args.tests:
        _, us, uk = _vectors(args.data_dir, args.cache_dir)
        embedding_null(us, uk, args.splits)
        embedding_planted(us, uk, args.planted_splits, args.share)
    if "performance" in args.tests:
        performance_null(args.sweeps)
        performance_planted(args.planted_sweeps)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
