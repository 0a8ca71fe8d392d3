"""Coverage of the per-group accuracy intervals for the training procedure, with seed effects.

Each simulated study trains 5 seeds x 5 folds of models. A seed draws a training sample, so its
five fold models share a shift in accuracy (the seed effect, ``--seed-effects`` points, half of
it common to every group and half the group's own); each fold model has a shift of its own
(``--fold-effect``) and a tilt between the labels (``--label-effect``). Every regional text
(au 2,160, ca 1,830, nz 330, uk 6,400, us 17,400, za 250) is scored by all 25 models and has a
difficulty every model shares (Beta, dispersion ``--kappa``); ``baseline`` is each model's own
held-out fold (600 texts), scored by that model alone. A model's shift moves a text's chance of
being right by ``shift * 4p(1-p) / E[4p(1-p)]``, so the group's expected accuracy moves by the
shift, and the truth, the procedure's expected accuracy at the group's label mix, is known
exactly. Prints, per regime and group, the share of studies whose interval
(``regbias.analysis.pairs.pooled_scores.group_metric_replicates``, percentile) covers the truth,
with its 95% Wilson interval, and the mean width.

    python benchmarks/accuracy_interval_coverage.py --studies 200
    PYTHONPATH=<a checkout of main before the change>/src python \
        benchmarks/accuracy_interval_coverage.py --studies 200     # before

Figures, not assertions (``tests/analysis/test_accuracy_intervals.py`` asserts a smaller run).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from regbias.analysis.pairs.pooled_scores import (
    PerfTexts,
    group_metric_replicates,
    percentile_interval,
)

SIZES = {"au": 2160, "ca": 1830, "nz": 330, "uk": 6400, "us": 17400, "za": 250}
BASELINE = "baseline"
SEEDS, FOLDS, FOLD_TEXTS = 5, 5, 600
POSITIVE_SHARE = 0.55
#: Seed effects (points) of the regimes: none, small, large.
REGIMES = (0.0, 0.8, 2.0)


@dataclass(frozen=True)
class Study:
    """One simulated study: its texts and each group's true accuracy for the procedure."""

    texts: PerfTexts
    groups: list[str]
    truth: np.ndarray  # (G,) in ``groups`` order


@dataclass(frozen=True)
class Effects:
    """Sizes (accuracy points) of the models' shifts, the texts' dispersion, the groups' sizes."""

    seed: float
    fold: float = 1.0
    label: float = 1.0
    kappa: float = 2.0
    sizes: tuple[tuple[str, int], ...] = tuple(SIZES.items())
    fold_texts: int = FOLD_TEXTS


def _shifts(rng: np.random.Generator, effects: Effects) -> np.ndarray:
    """``(G, 2, M)`` each model's accuracy shift per group and label (in accuracy units)."""
    g, m = len(effects.sizes) + 1, SEEDS * FOLDS
    seed = (rng.normal(size=SEEDS) + rng.normal(size=(g, SEEDS))) / np.sqrt(2)
    fold = (rng.normal(size=m) + rng.normal(size=(g, m))) / np.sqrt(2)
    tilt = rng.normal(size=(g, m))
    shift = effects.seed * np.repeat(seed, FOLDS, axis=1) + effects.fold * fold
    return (shift[:, None, :] + effects.label * tilt[:, None, :] * np.array([-1, 1])[:, None]) / 100


def _correct(
    rng: np.random.Generator, mean: np.ndarray, shift: np.ndarray, kappa: float
) -> np.ndarray:
    """0/1 correctness ``(n, M)`` of texts whose true accuracy is ``mean`` (per text)."""
    p = rng.beta(mean * kappa, (1 - mean) * kappa)
    spread = (4 * mean * (1 - mean) * kappa / (kappa + 1))[:, None]  # E[4p(1-p)]
    shift = np.clip(shift, -spread / 4, spread / 4)  # symmetric: the truth stays ``mean``
    chance = p[:, None] + shift * 4 * (p * (1 - p))[:, None] / spread
    return (rng.random(chance.shape) < chance).astype(np.float64)


def simulate(rng: np.random.Generator, effects: Effects) -> Study:
    """One study of the groups' sizes, 25 models and a held-out baseline."""
    m = SEEDS * FOLDS
    shifts = _shifts(rng, effects)
    accuracy = 0.72 + 0.1 * rng.random((len(effects.sizes) + 1, 2))  # per group and label
    values, labels, members, truth = [], [], {}, []
    start = 0
    for gi, (group, n) in enumerate(effects.sizes):
        label = (np.arange(n) < round(POSITIVE_SHARE * n)).astype(int)
        correct = _correct(rng, accuracy[gi, label], shifts[gi, label], effects.kappa)
        values.append(correct)
        labels.append(label)
        members[group] = np.arange(start, start + n)
        truth.append(accuracy[gi, label].mean())
        start += n
    label = (rng.random(m * effects.fold_texts) < 0.5).astype(int)
    model = np.repeat(np.arange(m), effects.fold_texts)
    own = shifts[-1, label, model][:, None]
    correct = _correct(rng, accuracy[-1, label], own, effects.kappa)
    held_out = np.full((len(label), m), np.nan)
    held_out[np.arange(len(label)), model] = correct[:, 0]
    values.append(held_out)
    labels.append(label)
    members[BASELINE] = np.arange(start, start + len(label))
    truth.append(accuracy[-1, label].mean())
    strata = np.concatenate(labels).astype(str)
    names = [f"seed{s}/fold{f}" for s in range(SEEDS) for f in range(FOLDS)]
    texts = PerfTexts(
        "binary",
        np.arange(len(strata)).astype(str),
        strata,
        np.concatenate(values)[:, :, None],
        names,
        members,
    )
    return Study(texts, list(members), np.array(truth))


def covered(study: Study, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """``(2, G)`` per group: did its 95% interval cover the truth, and the interval's width."""
    replicates = group_metric_replicates(study.texts, study.groups, n_bootstrap, rng)
    ends = np.array([percentile_interval(r, 0.95) for r in replicates["accuracy"].T])
    inside = (ends[:, 0] <= study.truth) & (study.truth <= ends[:, 1])
    return np.stack([inside, ends[:, 1] - ends[:, 0]])


def coverage(effects: Effects, studies: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """``(studies, 2, G)`` :func:`covered` over simulated studies of one regime."""
    draws = np.random.default_rng([seed, round(effects.seed * 10), 1])  # the bootstrap's own
    rng = np.random.default_rng([seed, round(effects.seed * 10)])  # the same studies, any method
    return np.stack([covered(simulate(rng, effects), n_bootstrap, draws) for _ in range(studies)])


def wilson(hits: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a binomial share ``hits / n``."""
    z = stats.norm.ppf((1 + confidence) / 2)
    share = hits / n
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(share * (1 - share) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return float(centre - half), float(centre + half)


def main() -> None:
    """Print coverage per regime and group."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=299)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--seed-effects", type=float, nargs="+", default=list(REGIMES))
    parser.add_argument("--fold-effect", type=float, default=1.0)
    parser.add_argument("--label-effect", type=float, default=1.0)
    parser.add_argument("--kappa", type=float, default=2.0)
    args = parser.parse_args()
    for seed_effect in args.seed_effects:
        effects = Effects(seed_effect, args.fold_effect, args.label_effect, args.kappa)
        start = time.time()
        result = coverage(effects, args.studies, args.bootstrap, args.seed)
        print(
            f"\nseed effect {effects.seed}, fold {effects.fold}, label {effects.label} points, "
            f"kappa {effects.kappa}: {args.studies} studies, {args.bootstrap} replicates"
        )
        print(f"{'group':10}{'coverage':>10}{'95% Wilson':>18}{'mean width':>12}")
        for g, group in enumerate([*SIZES, BASELINE]):
            hits = int(result[:, 0, g].sum())
            low, high = wilson(hits, args.studies)
            interval = f"[{low:.3f}-{high:.3f}]"
            width = result[:, 1, g].mean()
            print(f"{group:10}{hits / args.studies:>10.3f}{interval:>18}{width:>12.4f}")
        print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
