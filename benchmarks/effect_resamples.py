"""The test of record's effect interval: its Monte Carlo error against its printed rounding.

On the real region pairs of the default study (all distinct texts, the texts both groups hold
left out, MiniLM sentence vectors), each pair's effect interval is bootstrapped ``--repeats``
times with different seeds at each resample count. The spread (sd) of each end over those
repeats is its Monte Carlo error; the findings print each end to 3 significant digits
(``effect 0.0213 [0.0111, 0.0341]``), so the error is set beside half a unit of the third
digit (the rounding a reader sees) and beside the interval's width. It prints the seconds one
interval takes at each count too (the draw and the products; ``draw_counts``).

It also checks the Monte Carlo sd each interval estimates of itself (``effect_ci_mc``, from
its own resamples' order statistics), by which the report rounds the ends: the mean estimate
over the repeats against the measured spread, and how often two repeats print an end (with
``monte_carlo_text``) more than one printed unit apart.

    python benchmarks/effect_resamples.py                       # about 5 min
    python benchmarks/effect_resamples.py --resamples 499 999 1999 --repeats 10
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np

from regbias.analysis.pairs.effect import pair_effect
from regbias.analysis.pairs.pairwise import plan_pairs
from regbias.data.registry import packaged_dataset
from regbias.embeddings.cache import EmbeddingCache, embed_pooled
from regbias.embeddings.encoder import load_encoder
from regbias.numbers import monte_carlo_text

REGIONS = ("au", "ca", "nz", "uk", "us", "za")


def half_unit(value: float, digits: int = 3) -> float:
    """Half a unit of the last of ``digits`` significant digits of ``value``."""
    if value == 0 or not math.isfinite(value):
        return math.nan
    return 0.5 * 10 ** (math.floor(math.log10(abs(value))) - digits + 1)


def apart(ends: np.ndarray, estimates: list[float]) -> int:
    """How many repeats print an end further from the first repeat's than the coarser unit of
    the two printings (``0.03`` and ``0.032`` agree; ``0.03`` and ``0.05`` do not)."""
    printed = [monte_carlo_text(e, sd) for e, sd in zip(ends, estimates, strict=True)]
    units = [10.0 ** -len(p.split(".")[1]) if "." in p else 1.0 for p in printed]
    values = [float(p) for p in printed]
    far = [
        abs(v - values[0]) > max(u, units[0]) * 1.0001 for v, u in zip(values, units, strict=True)
    ]
    return int(sum(far))


def region_vectors(data_dir: Path, cache_dir: Path) -> tuple[list, dict[str, np.ndarray]]:
    """The region pairs as the test plans them, and every planned text's sentence vector."""
    from pair_test import _settings

    corpus = packaged_dataset("sentiment140").read(data_dir)
    groups = {g: list(dict.fromkeys(corpus.groups[g].texts)) for g in REGIONS}
    plans = plan_pairs(groups, [])
    texts = list(dict.fromkeys(t for texts in groups.values() for t in texts))
    encoder = load_encoder(_settings().encoder, device="cpu")
    vectors = embed_pooled(encoder, EmbeddingCache(cache_dir), texts)
    return plans, dict(zip(texts, vectors, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, nargs="+", default=[499, 999])
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--data-dir", default=os.environ.get("REGBIAS_DATA_DIR", "data"))
    parser.add_argument("--cache-dir", default=".cache/regbias")
    args = parser.parse_args()
    plans, lookup = region_vectors(Path(args.data_dir), Path(args.cache_dir))
    print(
        f"{len(plans)} region pairs, {args.repeats} seeds per count; MC sd of each end, in "
        "half-units of its third significant digit (> 1: the printed digit is noise) and as a "
        "share of the interval's width"
    )
    print(
        "| pair | B | interval | sd low (half-units) | sd high (half-units) | sd / width | "
        "estimated / measured sd | printed ends, repeats > 1 unit apart | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    worst: dict[int, list[float]] = {b: [] for b in args.resamples}
    for plan in plans:
        x = np.stack([lookup[t] for t in plan.side_a])
        y = np.stack([lookup[t] for t in plan.side_b])
        for b in args.resamples:
            ends, estimates, started = [], [], time.perf_counter()
            for seed in range(args.repeats):
                rng = np.random.default_rng([seed, b])
                found = pair_effect(x, y, "mean", resamples=b, confidence=0.95, rng=rng)
                ends.append((found.low, found.high))
                estimates.append(found.mc_sd)
            seconds = (time.perf_counter() - started) / args.repeats
            low, high = np.array(ends).T
            units = [np.std(e, ddof=1) / half_unit(float(np.mean(e))) for e in (low, high)]
            width = float(np.mean(high - low))
            measured = max(np.std(low, ddof=1), np.std(high, ddof=1))
            worst[b].append(measured / width)
            print(
                f"| {plan.group_a}-{plan.group_b} | {b} | [{np.mean(low):.3g}, "
                f"{np.mean(high):.3g}] | {units[0]:.1f} | {units[1]:.1f} | "
                f"{measured / width:.3f} | {np.mean(estimates) / measured:.2f} | "
                f"{apart(low, estimates)} and {apart(high, estimates)} of {args.repeats} | "
                f"{seconds:.2f} |",
                flush=True,
            )
    for b, shares in worst.items():
        print(f"B = {b}: MC sd of an end up to {max(shares):.3f} of the width")


if __name__ == "__main__":
    main()
