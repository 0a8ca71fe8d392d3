"""Coverage of the primary correlation's interval on simulated studies with shared text noise.

Each simulated study has six groups at random positions (their distances, measured over noisy
repetitions) and a true accuracy per group tied to the positions; every group is scored on a
finite set of texts that all its models share (a text is hard or easy for every model), so
the gaps carry per-group evaluation noise that no model resampling sees. The true rho is that
of the true distances and the true gaps. Prints the coverage of the 95% interval: the
percentile interval resampling the models alone, and the primary's interval (models, texts and
repetitions; since round 15 a basic bootstrap for the measured rho, so against the true rho here it
undercovers: benchmarks/primary_interval_coverage.py measures it against its own target).

    python benchmarks/perf_coverage.py --studies 300
    python benchmarks/perf_coverage.py --studies 200 --spread 0.03 --kappa 2 --models 10 \
        --sizes 1000,800,200,3000,1500,150 --seed 12345        # the held-out regime
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.stats import beta, spearmanr

from regbias.analysis.pair_table import pairwise_table
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.robustness.bootstrap import rho_replicates
from regbias.distances.matrix import DistanceMatrix
from regbias.performance.evaluation import performance_gaps, summarise

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]


def draw_truth(rng, spread):
    """Six groups' true positions (their distances) and accuracies, tied to the positions."""
    x = rng.normal(size=(len(GROUPS), 2))
    return x, 0.75 + spread * (x[:, 0] * 0.8 + 0.6 * rng.normal(size=len(GROUPS)))


def simulate(
    rng, sizes, models, repetitions, spread, kappa, distance_noise, truth=None, quantiles=None
):
    """One study: its distance matrix, per-model table, per-text table and true rho.

    ``truth`` ``(positions (G, 2), accuracies (G,))`` fixes the groups (None: drawn);
    ``quantiles`` (per group, each text's uniform quantile) fixes how hard each text is, so
    that two studies on the same texts share their difficulty (None: drawn).
    """
    g = len(GROUPS)
    if truth is None:
        truth = draw_truth(rng, spread)
    x, accuracy = truth
    true_d = np.linalg.norm(x[:, None] - x[None], axis=2)
    true_gap = np.abs(accuracy[:, None] - accuracy[None])
    reps = true_d[None] + distance_noise * rng.normal(size=(repetitions, g, g))
    reps = (reps + reps.transpose(0, 2, 1)) / 2
    for r in reps:
        np.fill_diagonal(r, 0.0)
    matrix = DistanceMatrix(
        "sinkhorn_long", GROUPS, reps.mean(0), reps.std(0), repetitions, repetitions=reps
    )
    frames, rows = [], []
    names = [f"seed{m}/fold0" for m in range(models)]
    for gi, (group, n) in enumerate(zip(GROUPS, sizes, strict=True)):
        a, b = accuracy[gi] * kappa, (1 - accuracy[gi]) * kappa
        q = rng.beta(a, b, size=n) if quantiles is None else beta.ppf(quantiles[gi], a, b)
        label = rng.integers(0, 2, size=n)
        correct = rng.random((n, models)) < q[:, None]
        prob = np.where(correct == (label[:, None] == 1), 0.9, 0.1)
        frame = pd.DataFrame(
            {"group": group, "key": [f"{group}{i}" for i in range(n)], "label": label}
        )
        for m, name in enumerate(names):
            frame[f"prob:{name}"] = prob[:, m]
            rows.append((name, m, 0, group, 0, "accuracy", correct[:, m].mean(), n))
        frames.append(frame)
    per_model = pd.DataFrame(
        rows, columns=["model", "seed", "fold", "group", "repetition", "metric", "value", "n_texts"]
    )
    texts = pd.concat(frames, ignore_index=True)
    iu = np.triu_indices(g, 1)
    rho_true = spearmanr(true_d[iu], true_gap[iu]).statistic
    return matrix, per_model, texts, rho_true


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--studies", type=int, default=300)
    parser.add_argument("--bootstrap", type=int, default=499)
    parser.add_argument("--models", type=int, default=25)
    parser.add_argument("--spread", type=float, default=0.02)
    parser.add_argument("--kappa", type=float, default=1.0)
    parser.add_argument("--distance-noise", type=float, default=0.05)
    parser.add_argument("--sizes", default="2000,1800,329,2000,2000,250")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(args.seed)
    hits = {"models": 0, "models+texts": 0}
    widths = dict.fromkeys(hits, 0.0)
    started = time.perf_counter()
    methods: dict[str, str] = {}
    for study in range(args.studies):
        matrix, per_model, texts, rho = simulate(
            rng, sizes, args.models, 10, args.spread, args.kappa, args.distance_noise
        )
        gaps = performance_gaps(summarise(per_model), GROUPS)
        table = pairwise_table({"sinkhorn_long": matrix}, gaps, None)
        for label, scores in (("models", None), ("models+texts", PerfTexts.of(texts))):
            found = rho_replicates(
                table,
                ("dist_sinkhorn_long", "gap_accuracy"),
                GROUPS,
                {"sinkhorn_long": matrix},
                per_model,
                n_bootstrap=args.bootstrap,
                seed=study,
                texts=scores,
            )
            (low, high), method = found.interval(0.95), found.note
            hits[label] += int(low <= rho <= high)
            widths[label] += (high - low) / args.studies
            methods[label] = method
    seconds = time.perf_counter() - started
    for label, hit in hits.items():
        rate = hit / args.studies
        se = (rate * (1 - rate) / args.studies) ** 0.5
        print(
            f"coverage resampling {label} ({methods.get(label)}): {rate:.3f} "
            f"(+- {1.96 * se:.3f}), mean width {widths[label]:.3f}, {args.studies} studies"
        )
    print(f"{seconds:.0f} s")


if __name__ == "__main__":
    main()
