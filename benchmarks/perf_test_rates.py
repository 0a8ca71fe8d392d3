"""The performance test of record on simulated sweeps: its rates before and after studentizing.

Each simulated sweep has the six regions at their real sizes, every text scored by the same 25
models (5 seeds x 5 folds): a model's chance of being right on a text is the logistic of the
group's and label's intercept, the model's seed, fold and model-by-label effects, and the
text's own effect (its difficulty, shared by every model). The intercepts are solved, per
sweep and label, so that every region has the same per-label accuracy on these 25 models
(over its texts' law): the null of equal accuracy holds exactly. Four regimes:

- strong null: every region's texts from one law (exchangeable);
- unequal-spread null: ZA's text effects spread wider (per-text score sd about 0.34 against
  0.30), its per-label accuracy the same;
- 5 and 10 points: ZA's per-label accuracy planted 5 or 10 points below the others'.

Every pair's relabellings are drawn once and give both p-values: of the plain stratified gap
(the test of record before #45) and of the studentized one (Chung and Romano 2013). Prints the
rates at 0.05 and 0.01 with Wilson intervals, and the planted gaps' detection (raw p <= 0.05
and Holm over the 15 region pairs). A sweep's pairs share texts: the unequal-spread null is
therefore measured on independent pairs (ZA against each region, fresh texts and models each).

    python benchmarks/perf_test_rates.py --regimes "strong null"   # 800 sweeps, about 4 min
    python benchmarks/perf_test_rates.py --regimes "unequal-spread null"
    python benchmarks/perf_test_rates.py --regimes "5 points" "10 points"
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from regbias.analysis.multiplicity import adjust_p
from regbias.analysis.pairs.performance_null import StratifiedPair, relabel
from regbias.analysis.pairs.pooled_scores import PerfTexts

SIZES = {"au": 2160, "ca": 1830, "nz": 330, "uk": 6400, "us": 17400, "za": 250}
SEEDS = FOLDS = 5
#: Every region's per-label accuracy on the null (label 0, label 1).
ACCURACY = (0.72, 0.80)
#: The sd (logits) of the texts' effects: per-text scores' sd about 0.30; ZA's wider: 0.34.
SPREAD, WIDE = 2.7, 4.0
#: The sd (logits) of the models' seed, fold and model-by-label effects.
SEED_SD, FOLD_SD, MODEL_LABEL_SD = 0.15, 0.10, 0.10
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


@dataclass(frozen=True)
class Regime:
    """ZA's and the others' text effects' sd (logits), ZA's accuracy planted below theirs."""

    name: str
    spread: float = SPREAD
    gap: float = 0.0
    others: float = SPREAD


REGIMES = {
    "strong null": Regime("strong null"),
    "unequal-spread null": Regime("unequal-spread null", spread=WIDE),
    "5 points": Regime("5 points", gap=0.05),
    "10 points": Regime("10 points", gap=0.10),
}


def model_effects(rng: np.random.Generator) -> np.ndarray:
    """``(25, 2)`` each model's logit shift per label: seed + fold + model-by-label."""
    seed = rng.normal(0, SEED_SD, (SEEDS, 1, 1))
    fold = rng.normal(0, FOLD_SD, (1, FOLDS, 1))
    by_label = rng.normal(0, MODEL_LABEL_SD, (SEEDS, FOLDS, 2))
    return (seed + fold + by_label).reshape(SEEDS * FOLDS, 2)


def intercept(accuracy: float, effects: np.ndarray, spread: float) -> float:
    """The intercept at which these models' mean accuracy over the texts' law is ``accuracy``."""
    grid = effects[:, None] + spread * _NODES[None]

    def excess(mu: float) -> float:
        return float((special.expit(mu + grid) @ _WEIGHTS).mean()) - accuracy

    return float(optimize.brentq(excess, -30, 30, xtol=1e-12))


def simulate(regime: Regime, rng: np.random.Generator, groups: Sequence[str]) -> PerfTexts:
    """One sweep's pooled per-text scores of ``groups`` (the same 25 models for all)."""
    effects = model_effects(rng)
    labels, scores, members, start = [], [], {}, 0
    for group in groups:
        n = SIZES[group]
        spread = regime.spread if group == "za" else regime.others
        gap = regime.gap if group == "za" else 0.0
        mu = np.array([intercept(a - gap, effects[:, j], spread) for j, a in enumerate(ACCURACY)])
        label = (rng.random(n) < rng.uniform(0.4, 0.65)).astype(int)
        logit = mu[label, None] + effects[:, label].T + spread * rng.normal(size=(n, 1))
        scores.append((rng.random(logit.shape) < special.expit(logit)).mean(axis=1))
        labels.append(label)
        members[group] = np.arange(start, start + n)
        start += n
    keys = np.arange(start).astype(str)
    strata = np.concatenate(labels).astype(str)
    values = np.concatenate(scores)[:, None, None]
    return PerfTexts("binary", keys, strata, values, ["pooled"], members)


def sweep_ps(
    texts: PerfTexts,
    pairs: Sequence[tuple[str, str]],
    relabellings: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``(pairs, 2)`` each pair's p: of the plain gap, then of the studentized one."""
    scores = texts.scores()
    out = np.empty((len(pairs), 2))
    for i, (a, b) in enumerate(pairs):
        pair = StratifiedPair.of(texts.group_side(a), texts.group_side(b))
        found = relabel(scores, pair, "accuracy", relabellings, rng)
        out[i] = found.p(studentized=False), found.p()
    return out


def regime_ps(
    regime: Regime,
    sweeps: int,
    relabellings: int,
    seed: int,
    pairs: Sequence[tuple[str, str]],
) -> np.ndarray:
    """``(sweeps, pairs, 2)`` p-values on ``sweeps`` simulated sweeps (seeded per sweep)."""
    groups = list(dict.fromkeys(itertools.chain(*pairs)))
    out = []
    for s in range(sweeps):
        rng = np.random.default_rng([seed, s])
        out.append(sweep_ps(simulate(regime, rng, groups), pairs, relabellings, rng))
    return np.array(out)


REGION_PAIRS = list(itertools.combinations(SIZES, 2))
ZA_PAIRS = [pair for pair in REGION_PAIRS if "za" in pair]


def score_spread(regime: Regime, seed: int, sweeps: int = 20) -> dict[str, float]:
    """The per-text scores' sd within label, ZA's and US's (mean over ``sweeps`` sweeps)."""
    spread: dict[str, list[float]] = {"za": [], "us": []}
    for s in range(sweeps):
        texts = simulate(regime, np.random.default_rng([seed, 10**6 + s]), ["us", "za"])
        scores = texts.scores()[:, 0]
        for group, values in spread.items():
            rows = texts.members[group]
            values += [scores[rows][texts.strata[rows] == label].std() for label in ("0", "1")]
    return {group: float(np.mean(values)) for group, values in spread.items()}


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of ``hits`` in ``n``."""
    interval = stats.binomtest(hits, n).proportion_ci(0.95, method="wilson")
    return float(interval.low), float(interval.high)


def rate_line(p: np.ndarray, alpha: float) -> str:
    """``0.0529 [0.049-0.057] (634/12000; ...)`` for ``p <= alpha`` of ``(sweeps, pairs)`` p.

    The Wilson interval treats the pairs as independent; a sweep's pairs share texts, so the
    sweep-clustered 95% half-width (from the spread of the sweeps' own rates) is given beside it.
    """
    hits, n = int(np.sum(p <= alpha)), p.size
    low, high = wilson(hits, n)
    clustered = 1.96 * (p <= alpha).mean(axis=1).std(ddof=1) / np.sqrt(len(p))
    flag = "twice nominal excluded" if high < 2 * alpha else "twice nominal NOT excluded"
    return (
        f"{hits / n:.4f} [{low:.4f}-{high:.4f}] ({hits}/{n}; {flag}; clustered +-{clustered:.4f})"
    )


def holm_detected(ps: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """``(sweeps, pairs)`` Holm "differs" over each sweep's pairs (one statistic's p)."""
    return np.array([adjust_p(row, "holm") <= alpha for row in ps])


STATISTICS = ("before (plain gap)", "after (studentized)")


def print_rates(title: str, ps: np.ndarray) -> None:
    """Both statistics' rates at 0.05 and 0.01 of ``(sweeps, pairs, 2)`` p-values."""
    print(f"\n{title}")
    for k, statistic in enumerate(STATISTICS):
        for alpha in (0.05, 0.01):
            print(f"  {statistic:20} p <= {alpha}: {rate_line(ps[..., k], alpha)}")


def unequal_spread(pairs: int, relabellings: int, seed: int) -> None:
    """ZA against each region, ``pairs`` independent simulations each (no shared texts)."""
    regime = REGIMES["unequal-spread null"]
    found = {
        g: regime_ps(regime, pairs, relabellings, seed, [(g, "za")]) for g in SIZES if g != "za"
    }
    ps = np.concatenate(list(found.values()))
    print_rates(f"unequal-spread null: {len(ps)} independent za pairs", ps)
    for g, part in found.items():
        at = "   ".join(
            f"{s.split()[0]} {np.mean(part[..., k] <= 0.05):.3f}" for k, s in enumerate(STATISTICS)
        )
        print(f"  {g}-za at 0.05: {at}")


def power(regime: Regime, sweeps: int, relabellings: int, seed: int) -> None:
    """ZA's pairs detected (raw p <= 0.05; Holm over each sweep's 15 pairs) by each statistic."""
    ps = regime_ps(regime, sweeps, relabellings, seed, REGION_PAIRS)
    za = [i for i, pair in enumerate(REGION_PAIRS) if "za" in pair]
    print(f"\n{regime.name} planted in za: {sweeps} sweeps, za's 5 pairs")
    for k, statistic in enumerate(STATISTICS):
        raw = np.mean(ps[:, za, k] <= 0.05)
        holm = np.mean(holm_detected(ps[..., k])[:, za])
        print(f"  {statistic:20} raw p <= 0.05: {raw:.3f}   Holm differs: {holm:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=800, help="strong-null sweeps")
    parser.add_argument("--pairs", type=int, default=600, help="unequal-spread pairs per region")
    parser.add_argument("--power-sweeps", type=int, default=200)
    parser.add_argument("--relabellings", type=int, default=999)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--regimes", nargs="+", choices=list(REGIMES), default=list(REGIMES))
    args = parser.parse_args()
    k, seed = args.relabellings, args.seed
    for name in ("strong null", "unequal-spread null"):
        spread = score_spread(REGIMES[name], seed)
        print(
            f"{name}: per-text scores' sd within label, za {spread['za']:.3f}, "
            f"us {spread['us']:.3f}"
        )
    started = time.perf_counter()
    if "strong null" in args.regimes:
        ps = regime_ps(REGIMES["strong null"], args.sweeps, k, seed, REGION_PAIRS)
        print_rates(f"strong null: {args.sweeps} sweeps of 15 pairs", ps)
    if "unequal-spread null" in args.regimes:
        unequal_spread(args.pairs, k, seed)
    for name in ("5 points", "10 points"):
        if name in args.regimes:
            power(REGIMES[name], args.power_sweeps, k, seed)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
