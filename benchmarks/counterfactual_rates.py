"""The counterfactual track's verdicts on nulls and plants built from the shipped tweets.

Every changed text of every direction gets ``--draws`` independent controls (same words, other
same-frequency words: :mod:`regbias.data.rewrite_sets`, draws 0..K-1), embedded by the
configured encoder (MiniLM by default) through the study's embedding cache. Two controls of one
text are exchangeable by construction, so a repetition that takes, per text, two distinct
draws at random as "rewrite" and "control" is a null with the data's real texts, real groups
(the A-B difference of the real sentence vectors) and real reuse (each text in every
repetition, the same A-B difference throughout). Each repetition runs the verdicts' tests as the
track does (:func:`~regbias.analysis.counterfactual.encoder_shift.shift_p`,
:func:`~regbias.analysis.counterfactual.classifier_flips.change_p`).

- Encoder, null: the verdict's rate (the larger p of "toward B" and "beyond the control") and
  that of "beyond the control" alone, at 0.05 and 0.01, per direction with 10 or more texts.
- Encoder, planted: every "rewrite" moved a further ``delta`` of the A-B difference
  (``--plants``), the verdict's detection rate.
- Classifiers, null: ten logistic heads on the encoder's vectors (five bootstrap samples of
  one seed's training sample, two halves each: units of five "seeds"), each scoring every
  version; the verdict's rate and that of "beyond the control" alone.

Repetitions share the draws, so the rates' spread is wider than binomial where K is small;
the intervals printed are Wilson's for independent repetitions.

    python benchmarks/counterfactual_rates.py --draws 8 --repetitions 1200 --plants 0.1 0.3 \
        -- paths.cache_dir=PATH   # the study's cache: its texts are embedded once
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from regbias.analysis.counterfactual.classifier_flips import change_p
from regbias.analysis.counterfactual.encoder_shift import shift_p
from regbias.app.settings import read_settings
from regbias.config_files import CONFIG_DIR
from regbias.data.rewrite_sets import RewriteSet, rewrite_sets
from regbias.data.study import StudyData
from regbias.embeddings.cache import embed_pooled
from regbias.study.counterfactual import Rewrites, study_rewrites
from regbias.study.parts import scored_texts, study_cache, study_encoder
from regbias.study.pipeline import read_study
from regbias.study.settings import StudySettings

LEVELS = (0.05, 0.01)


def settings_for(*overrides: str) -> StudySettings:
    """The shipped default config with ``overrides`` (Hydra compose API)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return read_settings(compose("config", overrides=list(overrides)))


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a share ``hits / n``."""
    share = hits / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def rate(rejected: np.ndarray) -> str:
    """``0.051 [0.042, 0.061]`` (Wilson 95%)."""
    low, high = wilson(int(rejected.sum()), len(rejected))
    return f"{rejected.mean():.3f} [{low:.3f}, {high:.3f}]"


def control_draws(
    groups: dict[str, list[str]], directions: list[tuple[str, str]], seed: int, draws: int
) -> list[list[RewriteSet]]:
    """Every direction's rewrite sets with controls of draw 0..K-1."""
    return [rewrite_sets(groups, directions, seed=seed, draw=k) for k in range(draws)]


def pick_pairs(n: int, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per text two distinct draws: the null's "rewrite" and "control"."""
    first = rng.integers(0, draws, n)
    second = (first + rng.integers(1, draws, n)) % draws
    return first, second


def correct(x: np.ndarray, y: np.ndarray, heads: Sequence[LogisticRegression]) -> np.ndarray:
    """``(n, heads)`` whether each head is right on each text's vector."""
    return np.stack([(h.predict_proba(x)[:, 1] > 0.5) == y for h in heads], axis=1)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=2000)
    parser.add_argument("--relabellings", type=int, default=999)
    parser.add_argument("--plants", type=float, nargs="*", default=[0.02, 0.05])
    parser.add_argument("overrides", nargs="*", help="Hydra overrides (paths.cache_dir=...)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    settings = settings_for(*args.overrides)
    study = read_study(settings)
    encoder, cache = study_encoder(settings), study_cache(settings)
    rewrites = study_rewrites(settings, study)
    groups = scored_texts(settings, study)
    drawn = control_draws(groups, rewrites.directions, settings.analysis.seed, args.draws)

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(embed_pooled(encoder, cache, texts), dtype=np.float64)

    rng = np.random.default_rng(20261206)
    print(
        f"{args.draws} control draws a text, {args.repetitions} repetitions, encoder "
        f"{encoder.spec.name}\n"
    )
    print(
        "encoder: direction | texts | verdict at 0.05 | at 0.01 | beyond alone at 0.05 | "
        "at 0.01 | " + " | ".join(f"planted {d:+.2f}" for d in args.plants)
    )
    for source, other in rewrites.directions:
        target = next(s.target for s in rewrites.sets if s.group == source)
        sets = [next(s for s in d if s.group == source and s.target == target) for d in drawn]
        if sets[0].changed < 10:
            continue
        a = embed(list(dict.fromkeys(groups[source])))
        b = embed(list(dict.fromkeys(groups[other])))
        difference = b.mean(axis=0) - a.mean(axis=0)
        scale = float(difference @ difference)
        original = embed(list(sets[0].originals))
        shares = np.stack([(embed(list(s.controls)) - original) @ difference / scale for s in sets])
        found = {"verdict": [], "beyond": [], **{d: [] for d in args.plants}}
        columns = np.arange(shares.shape[1])
        for _ in range(args.repetitions):
            first, second = pick_pairs(shares.shape[1], args.draws, rng)
            moved, edited = shares[first, columns], shares[second, columns]
            toward, beyond = shift_p(moved, edited, args.relabellings, rng)
            found["verdict"].append(max(toward, beyond))
            found["beyond"].append(beyond)
            for delta in args.plants:
                found[delta].append(max(shift_p(moved + delta, edited, args.relabellings, rng)))
        p = {k: np.array(v) for k, v in found.items()}
        cells = [rate(p[k] <= level) for k in ("verdict", "beyond") for level in LEVELS]
        cells += [rate(p[d] <= 0.05) for d in args.plants]
        print(f"{source}>{other} | {shares.shape[1]} | " + " | ".join(cells))
    classifier_null(study, rewrites, drawn, embed, args, rng)
    print(f"\n{time.perf_counter() - started:.0f} s")


def classifier_null(
    study: StudyData,
    rewrites: Rewrites,
    drawn: list[list[RewriteSet]],
    embed: Callable[[list[str]], np.ndarray],
    args: argparse.Namespace,
    rng: np.random.Generator,
) -> None:
    """The classifiers' verdict on control-against-control, ten logistic heads."""
    sample = study.training
    vectors = embed(list(sample.texts))
    labels = np.asarray(sample.labels)
    heads = []
    for seed in range(5):
        chosen = np.random.default_rng(seed).integers(0, len(labels), len(labels))
        for half in np.array_split(chosen, 2):
            heads.append(LogisticRegression(max_iter=1000).fit(vectors[half], labels[half]))
    units = np.repeat(np.arange(5), 2)
    print(
        "\nclassifiers: rewrite set | texts | verdict at 0.05 | at 0.01 | beyond alone at 0.05 "
        f"| at 0.01 ({len(heads)} heads, {len(np.unique(units))} units)"
    )
    for s0 in rewrites.sets:
        if s0.changed < 10:
            continue
        sets = [next(s for s in d if s.name == s0.name) for d in drawn]
        group = study.groups[s0.group]
        position = {t: i for i, t in enumerate(group.texts)}
        y = np.asarray(group.labels)[[position[t] for t in s0.originals]].astype(bool)

        original = correct(embed(list(s0.originals)), y, heads).astype(float)
        versions = np.stack([correct(embed(list(s.controls)), y, heads) for s in sets])
        versions = versions.astype(float)
        columns = np.arange(len(y))
        verdicts, beyonds = [], []
        for _ in range(args.repetitions):
            first, second = pick_pairs(len(y), args.draws, rng)
            rewritten, control = versions[first, columns], versions[second, columns]
            moved = (rewritten - original).mean(axis=1)
            paired = (rewritten - control).mean(axis=1)
            change, beyond = change_p(moved, paired, args.relabellings, rng)
            verdicts.append(max(change, beyond))
            beyonds.append(beyond)
        cells = [rate(np.array(v) <= level) for v in (verdicts, beyonds) for level in LEVELS]
        print(f"{s0.name} | {len(y)} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
