"""The primary test and its check beyond noise where group size alone drives both matrices.

Each simulated study has the six regions at their real sizes (au 2,160, ca 1,830, nz 330,
uk 6,400, us 17,400, za 250) and 25 models (5 seeds x 5 folds). Under the null every region
has the same accuracy: a group's measured accuracy is that accuracy plus its texts' noise
(texts' difficulty Beta-dispersed, kappa 1, as in ``primary_interval_coverage.py``) and its
models' effects (each seed's and fold's own, and in one regime a seed effect every group
shares), so a pair's absolute gap grows with ``1/n_a + 1/n_b``. The distance grows with the
same size term, by a regime's strength, plus noise (in ``hetero`` its noise grows with the
size term too: small groups are re-drawn more). So both matrices follow size and nothing
regional.

The check's noise draws are made as the study's two-stage bootstrap makes them: the seeds
weighted as the study weighs them (``unit_weights``: Student-t tails; one weight per seed
moves every group, so a shared effect cancels in a gap), then each group's texts' noise with
its sampling error (variance estimated over ``n - 1`` degrees of freedom).

Per regime it prints the rejection rates at 0.05 and 0.01, with 99% binomial bounds, of

- the raw primary (the project's ``primary_test`` on ``gap_accuracy``),
- the check of record, beyond noise (``noise_only_check``: the primary's rho against the
  rhos of the same distances with gaps of noise alone),
- both together (the verdict a "supported", not fragile on noise, primary needs),
- the alternatives it was chosen over: the one-sided partial Mantel test given
  ``1/n_a + 1/n_b`` (round 26's check), and each gap less the gap two equal groups show by
  noise, ``sqrt(2/pi) sqrt(se_a^2 + se_b^2)``.

``hybrid`` regimes give the regions real accuracy differences unrelated to the distances (a
null of the primary, not of the check alone). ``planted`` regimes put the regions at 2-D
positions that drive both the accuracies (2 points a unit) and the distances: the power of
each test. Figures, not assertions.

    python benchmarks/primary_size_null.py --studies 4000
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from regbias.analysis.correlation.primary import primary_test
from regbias.analysis.pairs.pooled_scores import unit_weights
from regbias.analysis.robustness.noise_only import NoiseDraws, noise_only_check
from regbias.analysis.robustness.partial_mantel import partial_mantel

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]
SIZES = np.array([2160, 1830, 330, 6400, 17400, 250], dtype=np.float64)
SEEDS, FOLDS = 5, 5
SEED_SD, FOLD_SD = 0.008, 0.005
PAIRS = np.triu_indices(len(GROUPS), 1)
SIZE_TERM = 1 / SIZES[PAIRS[0]] + 1 / SIZES[PAIRS[1]]
DRAWS = 999


@dataclass(frozen=True)
class Regime:
    """How a study is drawn.

    Attributes:
        size_effect: the distance's rise from the smallest to the largest size term.
        distance_sd: the distance's noise.
        hetero: whether the distance's noise grows with the size term (its sd at the mean
            size term is ``distance_sd``).
        position: how far the regions' positions drive the distances (0: not at all).
        spread: how far they drive the accuracies, per unit of position (0: not at all).
        text_scale: the texts' noise the bootstrap draws, over the true (1: without bias).
        kappa: the texts' difficulty dispersion (small: wide).
        shared_sd: the sd of a seed effect every group shares.
    """

    size_effect: float
    distance_sd: float
    hetero: bool = False
    position: float = 0.0
    spread: float = 0.0
    text_scale: float = 1.0
    kappa: float = 1.0
    shared_sd: float = 0.0


REGIMES = {
    "exchangeable (size drives the gaps only)": Regime(0.0, 1.0),
    "size drives distance weakly": Regime(1.0, 0.5),
    "size drives distance (as measured, rho ~0.8)": Regime(1.0, 0.2),
    "size drives distance, noise grows with it": Regime(1.0, 0.2, hetero=True),
    "size determines distance": Regime(1.0, 0.02),
    "as measured, texts 3x noisier": Regime(1.0, 0.2, kappa=1 / 3),
    "as measured, texts' noise drawn 20% too small": Regime(1.0, 0.2, text_scale=0.8),
    "as measured, seeds shift every group alike": Regime(1.0, 0.2, shared_sd=0.02),
    "hybrid: regions differ, unrelated to distance": Regime(0.0, 1.0, spread=0.02),
    "hybrid, with size in the distance": Regime(1.0, 0.2, spread=0.02),
    "planted: positions drive both (power)": Regime(0.0, 0.2, position=1.0, spread=0.02),
    "planted, with size in the distance (power)": Regime(1.0, 0.2, position=1.0, spread=0.02),
}


def simulate(rng: np.random.Generator, regime: Regime) -> tuple[pd.DataFrame, NoiseDraws]:
    """One study's pair table (``dist_sinkhorn_long``, ``gap_accuracy``) and noise draws."""
    k = len(GROUPS)
    position = rng.normal(size=(k, 2))
    accuracy = 0.75 + regime.spread * position[:, 0]
    spread = accuracy * (1 - accuracy) / (regime.kappa + 1)  # the texts' difficulty variance
    text_var = (spread + (accuracy * (1 - accuracy) - spread) / (SEEDS * FOLDS)) / SIZES
    seed_effects = rng.normal(0, SEED_SD, (k, SEEDS)) + rng.normal(0, regime.shared_sd, SEEDS)
    seed_effects += rng.normal(0, FOLD_SD, (k, SEEDS, FOLDS)).mean(axis=2)
    measured = accuracy + rng.normal(size=k) * np.sqrt(text_var) + seed_effects.mean(axis=1)
    weights = unit_weights(np.arange(SEEDS), DRAWS, rng) / SEEDS  # the study's model stage
    models = weights @ (seed_effects - seed_effects.mean(axis=1, keepdims=True)).T
    texts_sd = regime.text_scale * np.sqrt(text_var * rng.chisquare(SIZES - 1) / (SIZES - 1))
    deviations = models + rng.normal(size=(DRAWS, k)) * texts_sd
    scale = np.sqrt(SIZE_TERM / SIZE_TERM.mean()) if regime.hetero else 1.0
    noise = rng.normal(0, regime.distance_sd, len(SIZE_TERM)) * scale
    apart = np.linalg.norm(position[PAIRS[0]] - position[PAIRS[1]], axis=1)
    distance = regime.size_effect * SIZE_TERM / SIZE_TERM.max() + noise + regime.position * apart
    table = pd.DataFrame(
        {
            "group_a": [GROUPS[i] for i in PAIRS[0]],
            "group_b": [GROUPS[j] for j in PAIRS[1]],
            "dist_sinkhorn_long": distance,
            "gap_accuracy": np.abs(measured[PAIRS[0]] - measured[PAIRS[1]]),
        }
    )
    return table, NoiseDraws(tuple(GROUPS), deviations)


def p_values(table: pd.DataFrame, draws: NoiseDraws) -> tuple[float, float, float, float, float]:
    """The raw primary's p, the check's p (beyond noise), the partial Mantel p given size,
    rho(distance, size term), and the p of each gap less its expected noise.
    """
    raw = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", reference_groups=[])
    beyond = noise_only_check(table, raw, draws)
    sizes = {g: int(n) for g, n in zip(GROUPS, SIZES, strict=True)}
    partial = partial_mantel(
        table, ["dist_sinkhorn_long"], ["gap_accuracy"], sizes, alternative="greater"
    )
    se = dict(zip(GROUPS, draws.deviations.std(axis=0).tolist(), strict=True))
    corrected = table.assign(beyond=noise_corrected_gaps(table, se))
    less_noise = primary_test(
        corrected, "dist_sinkhorn_long", "beyond", reference_groups=[], direction="greater"
    )
    rho = float(stats.spearmanr(table["dist_sinkhorn_long"], SIZE_TERM).statistic)
    partial_p = float(partial["partial_p"].iloc[0])
    return raw.p_value, beyond.p_value, partial_p, rho, less_noise.p_value


def noise_corrected_gaps(table: pd.DataFrame, se: dict[str, float]) -> pd.Series:
    """Each gap less the gap two equal groups show by noise, ``sqrt(2/pi) sqrt(se_a² + se_b²)``."""
    spread = np.sqrt(table["group_a"].map(se) ** 2 + table["group_b"].map(se) ** 2)
    return table["gap_accuracy"] - math.sqrt(2 / math.pi) * spread


def bounds(hits: int, n: int) -> str:
    """A rate with its 99% Clopper-Pearson interval."""
    low, high = stats.binomtest(hits, n).proportion_ci(0.99)
    return f"{hits / n:.4f} [{low:.4f}, {high:.4f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--studies", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--regime", choices=list(REGIMES), action="append", default=None)
    args = parser.parse_args()
    chosen = args.regime or list(REGIMES)
    print(f"{args.studies} studies a regime; rates with 99% Clopper-Pearson intervals\n")
    print("| regime | rho(distance, size) | test | p <= 0.05 | p <= 0.01 |")
    print("|---|---|---|---|---|")
    for name in chosen:
        rng = np.random.default_rng([args.seed, list(REGIMES).index(name)])
        start = time.perf_counter()
        found = np.array([p_values(*simulate(rng, REGIMES[name])) for _ in range(args.studies)])
        both = np.maximum(found[:, 0], found[:, 1])
        rho = f"{np.mean(found[:, 3]):.2f}"
        tests = (
            (found[:, 0], "raw primary"),
            (found[:, 1], "beyond noise (the check)"),
            (both, "raw and beyond noise"),
            (found[:, 2], "partial Mantel given size"),
            (found[:, 4], "gap less noise"),
        )
        for p, test in tests:
            rates = [bounds(int((p <= level).sum()), args.studies) for level in (0.05, 0.01)]
            print(f"| {name} | {rho} | {test} | {rates[0]} | {rates[1]} |", flush=True)
        print(f"<!-- {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
