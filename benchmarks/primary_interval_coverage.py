"""Coverage of the primary's interval for the measured rho, in five regimes.

Each simulated study has six groups at the real sizes (au 2,160, ca 1,830, nz 330, uk 6,400,
us 17,400, za 250), 25 models (5 seeds x 5 folds: a seed's effect on a group is shared by its
5 folds), each group's texts scored by every model (a text is hard or easy for all of them),
and 10 noisy repetitions of each distance. The project's own interval
(``regbias.analysis.robustness.bootstrap.rho_replicates``: models, then texts within group and
label stratum, and repetitions, over the 15 pairs) is checked against its target, the measured
rho: the mean of the study's rho over repeats of the measurement (new models, texts and
repetitions, the same groups), from 2,000 draws of the groups' measured metrics (normal: a mean
of >= 250 texts x 25 models) and distances. Prints per regime the coverage with its 95% Wilson
interval, the mean width, and the mean true (noise-free) and measured rho.

    python benchmarks/primary_interval_coverage.py --studies 150
    python benchmarks/primary_interval_coverage.py --studies 150 --regime near_zero
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.ranks import spearman_rows
from regbias.analysis.robustness.bootstrap import rho_replicates
from regbias.distances.matrix import DistanceMatrix

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]
SIZES = (2160, 1830, 330, 6400, 17400, 250)
SEEDS, FOLDS, REPETITIONS = 5, 5, 10
PAIRS = np.triu_indices(len(GROUPS), 1)
CORRELATION = ("dist_sinkhorn_long", "gap_accuracy")
TARGET_DRAWS = 2000


@dataclass(frozen=True)
class Regime:
    """How a study is drawn.

    Attributes:
        coupling: how far the accuracies follow the first position coordinate (1: only it).
        dimensions: the positions' dimensions.
        rho_window: the true rho a study must have (redrawn until it does).
        base, spread: the accuracies' centre and spread.
        kappa: the texts' difficulty dispersion, Beta(a kappa, (1 - a) kappa) (small: wide).
        seed_sd, fold_sd: a seed's and a model's effect on a group's accuracy, in points.
        distance_sd: one repetition's noise on a distance.
        noisy_small: the noise multiplier of the groups under 500 texts (kappa divided by it,
            the model effects times it).
    """

    coupling: float
    dimensions: int = 2
    rho_window: tuple[float, float] = (-1.0, 1.0)
    base: float = 0.75
    spread: float = 0.02
    kappa: float = 1.0
    seed_sd: float = 0.8
    fold_sd: float = 0.5
    distance_sd: float = 0.05
    noisy_small: float = 1.0


TODAY = Regime(coupling=0.8)
REGIMES = {
    "near_zero": replace(TODAY, coupling=0.0, rho_window=(-0.2, 0.2)),
    "about_0.8": replace(TODAY, coupling=0.9, rho_window=(0.7, 0.9)),
    "1d_0.95": replace(TODAY, coupling=1.0, dimensions=1, rho_window=(0.95, 1.0)),
    "small_noisy": replace(TODAY, noisy_small=3.0),
    # noise a tenth of today's: relative to the spread, the texts' noise (ten times the spread,
    # at 0.5 to stay inside [0, 1]), the model effects and the distances' noise.
    "tenth_noise": replace(
        TODAY, base=0.5, spread=0.2, seed_sd=0.8, fold_sd=0.5, distance_sd=0.05 / 10
    ),
}


@dataclass(frozen=True)
class Study:
    """One simulated study and its targets."""

    table: pd.DataFrame
    matrix: DistanceMatrix
    per_model: pd.DataFrame
    texts: PerfTexts
    true_rho: float
    measured_rho: float


def _truth(rng: np.random.Generator, regime: Regime) -> tuple[np.ndarray, np.ndarray, float]:
    """Positions' distances (15,), accuracies (G,) and the true rho, within the regime's window."""
    while True:
        x = rng.normal(size=(len(GROUPS), regime.dimensions))
        other = rng.normal(size=len(GROUPS))
        z = regime.coupling * x[:, 0] + np.sqrt(1 - regime.coupling**2) * other
        accuracy = np.clip(regime.base + regime.spread * z, 0.03, 0.97)
        distances = np.linalg.norm(x[PAIRS[0]] - x[PAIRS[1]], axis=1)
        gaps = np.abs(accuracy[PAIRS[0]] - accuracy[PAIRS[1]])
        rho = float(spearman_rows(distances[None], gaps[None])[0])
        if regime.rho_window[0] <= rho <= regime.rho_window[1]:
            return distances, accuracy, rho


def _group_noise(regime: Regime, accuracy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group its kappa and its model-effect multiplier (the small groups' noise)."""
    small = np.asarray(SIZES) < 500
    factor = np.where(small, regime.noisy_small, 1.0)
    return regime.kappa / factor, factor


def _model_effects(
    rng: np.random.Generator, regime: Regime, factor: np.ndarray, draws: int = 1
) -> np.ndarray:
    """``(draws, SEEDS * FOLDS, G)`` model effects in accuracy units (seed shared by its folds)."""
    g = len(GROUPS)
    seed = rng.normal(0, regime.seed_sd / 100, size=(draws, SEEDS, 1, g))
    fold = rng.normal(0, regime.fold_sd / 100, size=(draws, SEEDS, FOLDS, g))
    return ((seed + fold) * factor).reshape(draws, SEEDS * FOLDS, g)


def _measured_rho(
    rng: np.random.Generator, regime: Regime, distances: np.ndarray, accuracy: np.ndarray
) -> float:
    """The mean rho over repeats of the measurement (the interval's target)."""
    kappa, factor = _group_noise(regime, accuracy)
    sizes = np.asarray(SIZES, dtype=np.float64)
    models = SEEDS * FOLDS
    spread = accuracy * (1 - accuracy) / (kappa + 1)  # Var(q) of the texts' difficulty
    text_var = (spread + (accuracy * (1 - accuracy) - spread) / models) / sizes
    effects = _model_effects(rng, regime, factor, TARGET_DRAWS).mean(axis=1)
    metrics = accuracy + effects + rng.normal(size=effects.shape) * np.sqrt(text_var)
    d = distances + rng.normal(0, regime.distance_sd / np.sqrt(REPETITIONS), (TARGET_DRAWS, 15))
    gaps = np.abs(metrics[:, PAIRS[0]] - metrics[:, PAIRS[1]])
    return float(np.nanmean(spearman_rows(d, gaps)))


def simulate(
    rng: np.random.Generator,
    regime: Regime,
    truth: tuple[np.ndarray, np.ndarray, float, float] | None = None,
) -> Study:
    """One study: its pair table, distance matrix, per-model table and per-text scores.

    ``truth``: the groups' distances, accuracies, true and measured rho to measure again (a
    fixed truth); None draws a new one.
    """
    fixed = truth is not None
    distances, accuracy, true_rho = truth[:3] if truth is not None else _truth(rng, regime)
    kappa, factor = _group_noise(regime, accuracy)
    effects = _model_effects(rng, regime, factor)[0]  # (M, G)
    # A model's effect moves each text's chance towards 1 (or 0) by a share that moves the
    # group's accuracy by the effect exactly: q + e (1 - q), e = effect / (1 - a); q (1 + e).
    shares = np.where(effects > 0, effects / (1 - accuracy), effects / accuracy)
    names = [f"seed{s}/fold{f}" for s in range(SEEDS) for f in range(FOLDS)]
    values, strata, members, start = [], [], {}, 0
    for g, (group, n) in enumerate(zip(GROUPS, SIZES, strict=True)):
        a, k = accuracy[g], kappa[g]
        q = rng.beta(a * k, (1 - a) * k, size=n)[:, None]
        e = shares[:, g]
        p = np.where(e > 0, q + e * (1 - q), q * (1 + e))
        values.append((rng.random((n, len(names))) < p).astype(np.float64))
        strata.append(rng.integers(0, 2, size=n).astype(str))
        members[group] = np.arange(start, start + n)
        start += n
    correct = np.concatenate(values)
    keys = np.array([f"t{i}" for i in range(start)])
    texts = PerfTexts("binary", keys, np.concatenate(strata), correct[:, :, None], names, members)
    per_group = np.stack([v.mean(axis=0) for v in values], axis=1)  # (M, G)
    per_model = pd.DataFrame(
        [
            (name, m // FOLDS, m % FOLDS, group, "accuracy", per_group[m, g])
            for m, name in enumerate(names)
            for g, group in enumerate(GROUPS)
        ],
        columns=["model", "seed", "fold", "group", "metric", "value"],
    )
    reps = np.zeros((REPETITIONS, len(GROUPS), len(GROUPS)))
    noisy = distances + rng.normal(0, regime.distance_sd, (REPETITIONS, 15))
    reps[:, PAIRS[0], PAIRS[1]] = reps[:, PAIRS[1], PAIRS[0]] = noisy
    matrix = DistanceMatrix.from_repetitions("sinkhorn_long", GROUPS, reps)
    means = per_group.mean(axis=0)
    table = pd.DataFrame(
        {
            "group_a": [GROUPS[i] for i in PAIRS[0]],
            "group_b": [GROUPS[j] for j in PAIRS[1]],
            CORRELATION[0]: matrix.mean[PAIRS],
            CORRELATION[1]: np.abs(means[PAIRS[0]] - means[PAIRS[1]]),
        }
    )
    measured = (
        truth[3] if fixed and truth is not None else _measured_rho(rng, regime, distances, accuracy)
    )
    return Study(table, matrix, per_model, texts, true_rho, measured)


@dataclass(frozen=True)
class Coverage:
    """One regime's coverage of the measured rho."""

    regime: str
    studies: int
    hits: int
    width: float
    true_rho: float
    measured_rho: float
    estimate_inside: int

    def wilson(self, z: float = 1.96) -> tuple[float, float]:
        """The coverage's 95% Wilson interval."""
        n, p = self.studies, self.hits / self.studies
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
        return centre - half, centre + half


def coverage(
    name: str,
    studies: int,
    bootstrap: int,
    seed: int,
    confidence: float = 0.95,
    seed_sd: float | None = None,
) -> Coverage:
    """The regime's coverage over ``studies`` simulated studies (seeded).

    ``seed_sd``: the seeds' effect in points instead of the regime's (0: models exchangeable).
    """
    rng = np.random.default_rng([seed, list(REGIMES).index(name)])
    regime = REGIMES[name] if seed_sd is None else replace(REGIMES[name], seed_sd=seed_sd)
    hits = inside = 0
    width = true = measured = 0.0
    for study in range(studies):
        found = simulate(rng, regime)
        low, high = _interval(found, bootstrap, study, confidence)
        estimate = spearman_rows(*(found.table[c].to_numpy()[None] for c in CORRELATION))[0]
        hits += int(low <= found.measured_rho <= high)
        inside += int(low <= estimate <= high)
        width += (high - low) / studies
        true += found.true_rho / studies
        measured += found.measured_rho / studies
    return Coverage(name, studies, hits, width, true, measured, inside)


def _interval(found: Study, bootstrap: int, seed: int, confidence: float) -> tuple[float, float]:
    """The project's interval of one simulated study."""
    replicates = rho_replicates(
        found.table,
        CORRELATION,
        GROUPS,
        {"sinkhorn_long": found.matrix},
        found.per_model,
        n_bootstrap=bootstrap,
        seed=seed,
        texts=found.texts,
    )
    assert not replicates.note, replicates.note
    return replicates.interval(confidence)


def per_truth(
    regime: Regime, truths: int, studies: int, bootstrap: int, seed: int, confidence: float = 0.95
) -> pd.DataFrame:
    """Coverage per fixed truth: ``truths`` truths, each measured again in ``studies`` studies.

    One row per truth: its true and measured rho, the coverage, and the misses on each side
    (``low``: the interval lies below the target; ``high``: above it).
    """
    rng = np.random.default_rng([seed, 99])
    rows = []
    for t in range(truths):
        distances, accuracy, true_rho = _truth(rng, regime)
        target = _measured_rho(rng, regime, distances, accuracy)
        below = above = 0
        for s in range(studies):
            found = simulate(rng, regime, (distances, accuracy, true_rho, target))
            low, high = _interval(found, bootstrap, t * studies + s, confidence)
            below += int(high < target)
            above += int(low > target)
        covered = studies - below - above
        rows.append(
            {
                "truth": t,
                "true_rho": true_rho,
                "measured_rho": target,
                "coverage": covered / studies,
                "misses_low": below,
                "misses_high": above,
            }
        )
    return pd.DataFrame(rows)


def _per_truth_main(args: argparse.Namespace) -> None:
    regime = REGIMES[args.regime[0]] if args.regime else TODAY
    started = time.perf_counter()
    table = per_truth(regime, args.fixed_truths, args.studies, args.bootstrap, args.seed)
    print(table.round(3).to_string(index=False))
    hits = (table["coverage"] * args.studies).sum()
    total = args.studies * len(table)
    low, high = int(table["misses_low"].sum()), int(table["misses_high"].sum())
    print(
        f"pooled coverage {hits / total:.3f} over {len(table)} truths x {args.studies} studies; "
        f"per truth {table['coverage'].min():.3f} to {table['coverage'].max():.3f}; misses "
        f"below the target {low}, above {high} ({time.perf_counter() - started:.0f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--studies", type=int, default=150)
    parser.add_argument("--bootstrap", type=int, default=499)
    parser.add_argument("--regime", choices=list(REGIMES), action="append")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seed-sd", type=float, help="the seeds' effect in points (0: none)")
    parser.add_argument(
        "--fixed-truths",
        type=int,
        default=0,
        help="coverage per fixed truth: this many truths (of --regime, else today's), each "
        "measured again in --studies studies",
    )
    args = parser.parse_args()
    if args.fixed_truths:
        _per_truth_main(args)
        return
    for name in args.regime or list(REGIMES):
        started = time.perf_counter()
        found = coverage(name, args.studies, args.bootstrap, args.seed, seed_sd=args.seed_sd)
        low, high = found.wilson()
        print(
            f"{name:12s} coverage {found.hits / found.studies:.3f} [{low:.3f}-{high:.3f}] of "
            f"{found.studies} studies, mean width {found.width:.2f}, mean true rho "
            f"{found.true_rho:.2f}, mean measured rho {found.measured_rho:.2f}, estimate inside "
            f"{found.estimate_inside}/{found.studies} ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
