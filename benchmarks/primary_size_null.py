"""The primary test and its size-controlled check where group size alone drives both matrices.

Each simulated study has the six regions at their real sizes (au 2,160, ca 1,830, nz 330,
uk 6,400, us 17,400, za 250) and 25 models (5 seeds x 5 folds). Under the null every region
has the same accuracy: a group's measured accuracy is that accuracy plus its texts' noise
(texts' difficulty Beta-dispersed, kappa 1, as in ``primary_interval_coverage.py``) and its
seeds' and folds' effects, so a pair's absolute gap grows with ``1/n_a + 1/n_b``. The distance
grows with the same size term, by a regime's strength, plus noise (in ``hetero`` its noise
grows with the size term too: small groups are re-drawn more). So both matrices follow size and
nothing regional. The groups' standard errors are estimated as the study's are, with their
sampling error: texts' part over ``n - 1`` degrees of freedom, the seeds' part over 4.

Per regime it prints the rejection rates at 0.05 and 0.01, with 99% binomial bounds, of

- the raw primary (the project's ``primary_test`` on ``gap_accuracy``),
- the size-controlled check (``check_primary``: the one-sided partial Mantel test given
  ``1/n_a + 1/n_b``), and
- the alternative it was chosen over: the same test on each gap less the gap two equal groups
  show by noise, ``sqrt(2/pi) sqrt(se_a^2 + se_b^2)``.

``planted`` regimes put the regions at 2-D positions that drive both the accuracies (2 points
a unit) and the distances: the power of each test. Figures, not assertions.

    python benchmarks/primary_size_null.py --studies 4000
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from regbias.analysis.correlation.primary import primary_test
from regbias.analysis.robustness.primary import check_primary

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]
SIZES = np.array([2160, 1830, 330, 6400, 17400, 250], dtype=np.float64)
SEEDS, FOLDS = 5, 5
PAIRS = np.triu_indices(len(GROUPS), 1)
SIZE_TERM = 1 / SIZES[PAIRS[0]] + 1 / SIZES[PAIRS[1]]


@dataclass(frozen=True)
class Regime:
    """How a study is drawn.

    Attributes:
        size_effect: the distance's rise from the smallest to the largest size term.
        distance_sd: the distance's noise.
        hetero: whether the distance's noise grows with the size term (its sd at the mean
            size term is ``distance_sd``).
        position: how far the regions' positions drive the distances (0: the null).
        spread: how far they drive the accuracies, per unit of position.
        se_scale: the standard errors the check is given, over the true ones (1: estimated
            without bias).
        kappa: the texts' difficulty dispersion (small: wide).
    """

    size_effect: float
    distance_sd: float
    hetero: bool = False
    position: float = 0.0
    spread: float = 0.0
    se_scale: float = 1.0
    kappa: float = 1.0


REGIMES = {
    "exchangeable (size drives the gaps only)": Regime(0.0, 1.0),
    "size drives distance weakly": Regime(1.0, 0.5),
    "size drives distance (as measured, rho ~0.8)": Regime(1.0, 0.2),
    "size drives distance, noise grows with it": Regime(1.0, 0.2, hetero=True),
    "size determines distance": Regime(1.0, 0.02),
    "as measured, texts 3x noisier": Regime(1.0, 0.2, kappa=1 / 3),
    "as measured, se under-estimated by 20%": Regime(1.0, 0.2, se_scale=0.8),
    "planted: positions drive both": Regime(0.0, 0.2, position=1.0, spread=0.02),
    "planted, with size in the distance": Regime(1.0, 0.2, position=1.0, spread=0.02),
}


def simulate(rng: np.random.Generator, regime: Regime) -> tuple[pd.DataFrame, dict[str, float]]:
    """One study's pair table (``dist_sinkhorn_long``, ``gap_accuracy``) and standard errors."""
    position = rng.normal(size=(len(GROUPS), 2))
    accuracy = 0.75 + regime.spread * position[:, 0]
    spread = accuracy * (1 - accuracy) / (regime.kappa + 1)  # the texts' difficulty variance
    text_var = (spread + (accuracy * (1 - accuracy) - spread) / (SEEDS * FOLDS)) / SIZES
    model_var = np.full(len(GROUPS), 0.008**2 / SEEDS + 0.005**2 / (SEEDS * FOLDS))
    measured = accuracy + rng.normal(size=len(GROUPS)) * np.sqrt(text_var + model_var)
    estimated = text_var * rng.chisquare(SIZES - 1) / (SIZES - 1)
    estimated += model_var * rng.chisquare(SEEDS - 1, len(GROUPS)) / (SEEDS - 1)
    se = regime.se_scale * np.sqrt(estimated)
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
    return table, dict(zip(GROUPS, se.tolist(), strict=True))


def p_values(table: pd.DataFrame, se: dict[str, float]) -> tuple[float, float, float, float]:
    """The raw primary's p, the size-controlled check's p (as ``check_primary`` runs it),
    rho(distance, size term), and the p of the alternative it was chosen over (gaps less their
    expected noise).
    """
    raw = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", reference_groups=[])
    sizes = {g: int(n) for g, n in zip(GROUPS, SIZES, strict=True)}
    checked = check_primary(table, raw, sizes)
    assert checked.checks is not None
    corrected = table.assign(beyond=noise_corrected_gaps(table, se))
    beyond = primary_test(
        corrected, "dist_sinkhorn_long", "beyond", reference_groups=[], direction="greater"
    )
    rho = float(stats.spearmanr(table["dist_sinkhorn_long"], SIZE_TERM).statistic)
    return raw.p_value, checked.checks.size.p_value, rho, beyond.p_value


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
    parser.add_argument("--regime", choices=list(REGIMES), default=None)
    args = parser.parse_args()
    chosen = {args.regime: REGIMES[args.regime]} if args.regime else REGIMES
    print(f"{args.studies} studies a regime; rates with 99% Clopper-Pearson intervals\n")
    print("| regime | rho(distance, size) | test | p <= 0.05 | p <= 0.01 |")
    print("|---|---|---|---|---|")
    for index, (name, regime) in enumerate(chosen.items()):
        rng = np.random.default_rng([args.seed, index])
        start = time.perf_counter()
        found = np.array([p_values(*simulate(rng, replace(regime))) for _ in range(args.studies)])
        rho = f"{np.mean(found[:, 2]):.2f}"
        tests = ((0, "raw primary"), (1, "size-controlled (partial Mantel)"), (3, "gap less noise"))
        for column, test in tests:
            hits = [int((found[:, column] <= level).sum()) for level in (0.05, 0.01)]
            rates = [bounds(h, args.studies) for h in hits]
            print(f"| {name} | {rho} | {test} | {rates[0]} | {rates[1]} |", flush=True)
        print(f"<!-- {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
