"""Two encoders' primary rhos compared: the difference's interval on simulated pairs of studies.

Each simulated pair is two encoders' studies of the same six groups on the same evaluation
texts (``perf_coverage.simulate``): each encoder has its own distances and its own models,
and a text that is hard for one encoder is hard for the other (the texts' difficulty shares
its quantile). The comparison page's joint bootstrap
(:func:`regbias.analysis.encoders.primary.primary_contrasts`, every encoder's interval for
its measured rho) gives the difference of the two rhos an interval. Prints:

- under the null (both encoders share the groups' true positions and accuracies, so the true
  difference is 0): how often the interval leaves 0 out (a false "higher in"), with its CI;
- with a planted difference (the second encoder's distances are another draw): how often the
  interval covers the noise-free difference (the interval is for the difference of the measured
  rhos, which the gaps' noise pulls towards 0, so this falls short of 95% where it is large),
  and how often it leaves 0 out (power).

    python benchmarks/primary_contrast_coverage.py --studies 600 --planted 200 --bootstrap 299
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from perf_coverage import GROUPS, draw_truth, simulate
from scipy.stats import binomtest

from regbias.analysis.encoders.primary import PrimaryEvidence, primary_contrasts
from regbias.analysis.pair_table import pairwise_table
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.performance.evaluation import performance_gaps, summarise

CORRELATION = ("dist_sinkhorn_long", "gap_accuracy")


def encoder_study(rng, truth, quantiles, args) -> tuple[PrimaryEvidence, float]:
    """One encoder's evidence on the shared texts, and its true rho."""
    matrix, per_model, texts, rho = simulate(
        rng, args.sizes, args.models, 10, args.spread, args.kappa, args.distance_noise,
        truth=truth, quantiles=quantiles,
    )  # fmt: skip
    gaps = performance_gaps(summarise(per_model), GROUPS)
    table = pairwise_table({"sinkhorn_long": matrix}, gaps, None)
    return PrimaryEvidence(table, matrix, per_model, PerfTexts.of(texts)), rho


def contrast(rng: np.random.Generator, planted: bool, seed: int, args) -> dict[str, float]:
    """One simulated pair of encoders: the true difference and the page's interval for it."""
    truth = draw_truth(rng, args.spread)
    other = (draw_truth(rng, args.spread)[0], truth[1]) if planted else truth
    quantiles = [rng.random(n) for n in args.sizes]
    first, rho_first = encoder_study(rng, truth, quantiles, args)
    second, rho_second = encoder_study(rng, other, quantiles, args)
    row = primary_contrasts(
        {"first": first, "second": second},
        CORRELATION,
        n_bootstrap=args.bootstrap,
        confidence=0.95,
        seed=seed,
    ).iloc[0]
    true = rho_first - rho_second
    low, high = float(row["ci_low"]), float(row["ci_high"])
    return {
        "covered": float(low <= true <= high),
        "shown": float(low > 0 or high < 0),
        "width": high - low,
        "p": float(row["p"]),
        "paired": float(bool(row["paired"])),
    }


def report(label: str, rows: list[dict[str, float]]) -> None:
    frame = pd.DataFrame(rows)
    n = len(frame)
    for key, what in (("shown", "0 left out"), ("covered", "true difference covered")):
        k = int(frame[key].sum())
        ci = binomtest(k, n).proportion_ci()
        print(f"{label:<9}{what:<26}{k / n:.3f} ({k}/{n}, 95% CI {ci.low:.3f}-{ci.high:.3f})")
    for level in (0.05, 0.01):
        print(f"{label:<9}p <= {level:<21}{(frame['p'] <= level).mean():.3f}")
    print(f"{label:<9}mean width {frame['width'].mean():.3f}; paired {frame['paired'].mean():.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=600, help="null pairs of encoders")
    parser.add_argument("--planted", type=int, default=200, help="pairs with a difference")
    parser.add_argument("--bootstrap", type=int, default=499)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--spread", type=float, default=0.02)
    parser.add_argument("--kappa", type=float, default=1.0)
    parser.add_argument("--distance-noise", type=float, default=0.05)
    parser.add_argument("--sizes", default="1000,900,329,1000,1000,250")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    seeds = itertools.count()
    for label, planted, n in (("null", False, args.studies), ("planted", True, args.planted)):
        rows = [contrast(rng, planted, next(seeds), args) for _ in range(n)]
        report(label, rows)
    print(f"{time.perf_counter() - started:.0f} s, {args.bootstrap} replicates")


if __name__ == "__main__":
    main()
