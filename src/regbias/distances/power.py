"""The smallest difference each pair test could see: graded mixtures planted in real data.

A verdict "no pair differs" says nothing unless the test could have found a difference. Here
two pseudo-groups are cut from one real group (the *source*, by default the largest region),
so they are exchangeable; then a share ``pi`` of one side is replaced by texts of another group
(the *donor*). Each distance's pair test runs on the pseudo-pair exactly as in a sweep (the
same draw sizes, repetitions, relabellings and tests) and the share of plants it detects is
its power at ``pi``; at ``pi = 0`` that share is its false-positive rate.

Design, chosen to cost no new embeddings per plant:

- the source's and the donor's tweets are cut once into disjoint passages of
  ``texts_per_passage`` tweets (documents: one each), a *bank* embedded once (cached);
- a pseudo-group holds as many passages as the smallest group of the run gives tweets to a
  matched pool (the pool size / texts per passage): the pair of the hardest size, whose texts
  recur across repetitions as a small region's do;
- in each repetition a pseudo-group's long draw takes a random half of its passages, its short
  draw tweets of those passages, and LDA all but one of them (fitted with the run's other
  groups, as in the run); the mixture replaces whole passages, so a share ``pi`` of both the
  tweets and the passages of one side come from the donor;
- a plant is *detected* when its p is at most ``alpha / m`` (Holm's first step over the ``m``
  pairs of the run: what a lone real difference among ``m`` pairs must reach), and the power
  at ``alpha`` unadjusted is reported beside it.

Passages are fixed per plant rather than re-cut in every repetition, so the power reported is
a slight underestimate for the run's own (re-cut) draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.console import progress_bar as tqdm
from regbias.data.sampling import rng_for
from regbias.distances.energy import energy_matrix
from regbias.distances.lda import LdaSettings, lda_distance_matrix
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, SampleSizeError

__all__ = [
    "DEFAULT_SHARES",
    "PlantDesign",
    "PowerResult",
    "PowerSettings",
    "passage_bank",
    "plant_power",
]

DEFAULT_SHARES = (0.05, 0.1, 0.2, 0.4, 0.8)
#: The power a planted effect must reach to count as detected: the share a pair test's
#: verdict quotes, and the rho the primary test's power table names.
TARGET_POWER = 0.8

Unit = tuple[str, ...]
TokenLookup = Callable[[list[str]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class PowerSettings:
    """``analysis.power``: planted mixtures that measure what each pair test can detect.

    Attributes:
        enabled: run the plants at the end of a sweep (its report gains a power section);
            ``task=power`` runs them whatever this says.
        shares: the mixture shares planted (0 is always added: the false-positive rate).
        plants: plants per share.
        source: the group cut into two pseudo-groups (None: the largest region).
        donor: the group mixed in (None: the largest other region).
        jobs: the sweep's job count the plants emulate (repetitions = distance.repetitions x
            jobs); None: a sweep's own job count (1 for ``task=power``).
        group_passages: passages per pseudo-group; None = the matched pool's (the smallest
            group's size: every repetition re-uses the same texts, the hardest pairs). Larger
            values emulate two large groups: each repetition draws its pool anew.
        seed: seed of the plants.
    """

    enabled: bool = False
    shares: list[float] = field(default_factory=lambda: list(DEFAULT_SHARES))
    plants: int = 20
    source: str | None = None
    donor: str | None = None
    jobs: int | None = 5
    seed: int = 0
    group_passages: int | None = None

    def __post_init__(self) -> None:
        if self.plants < 1:
            raise ConfigError(f"analysis.power.plants must be >= 1, not {self.plants}")
        if not self.shares or any(not 0 < s <= 1 for s in self.shares):
            raise ConfigError(
                "analysis.power.shares must be shares in (0, 1], e.g. [0.1, 0.4]; got "
                f"{self.shares}"
            )
        if self.group_passages is not None and self.group_passages < 4:
            raise ConfigError(
                f"analysis.power.group_passages must be >= 4 or null, not {self.group_passages}"
            )
        if self.jobs is not None and self.jobs < 1:
            raise ConfigError(f"analysis.power.jobs must be >= 1 or null, not {self.jobs}")


@dataclass(frozen=True)
class PlantDesign:
    """The run's sizes a plant reproduces.

    Attributes:
        passages: passages of a pseudo-group's pool in one repetition (the matched pool).
        repetitions: repetitions per plant (the sweep's total).
        short_texts: tweets per short draw (None: no short measurement).
        long_passages: passages per long draw (None: no long measurement).
        lda_passages: passages per LDA draw (None: no LDA).
        sentences: whether sentence vectors are compared (``energy_sentence``: the tweets of a
            random half of a pseudo-group's passages, as the run's main half of a pool).
        n_pairs: pairs in the run's family (the Holm level of a lone difference).
        alpha: the level.
    """

    passages: int
    repetitions: int
    short_texts: int | None
    long_passages: int | None
    lda_passages: int | None
    n_pairs: int
    alpha: float = 0.05
    sentences: bool = False
    group_passages: int | None = None

    @property
    def size(self) -> int:
        """Passages per pseudo-group (its pool in every repetition when not larger)."""
        return max(self.group_passages or self.passages, self.passages)


@dataclass(frozen=True)
class PowerResult:
    """Per distance and planted share: the detection rates over the plants.

    Attributes:
        plants: one row per (distance, share, plant): ``distance, share, plant, p``.
        design: the sizes planted.
        source: the group cut into pseudo-groups; ``donor``: the group mixed in.
    """

    plants: pd.DataFrame
    design: PlantDesign
    source: str
    donor: str

    def rates(self) -> pd.DataFrame:
        """The detection rates of every distance at every planted share.

        Returns:
            One row per distance and share: ``power`` (the share of plants with p at most
            ``alpha / m``), ``power_unadjusted`` (at ``alpha``), the number of plants, and
            the 95% Clopper-Pearson interval of ``power``.
        """
        level = self.design.alpha / self.design.n_pairs
        rows = []
        for (name, share), part in self.plants.groupby(["distance", "share"], sort=True):
            p = part["p"].to_numpy(dtype=np.float64)
            hits = int(np.sum(p <= level))
            low, high = scipy_stats.binomtest(hits, len(p)).proportion_ci(0.95)
            rows.append(
                {
                    "distance": name,
                    "share": share,
                    "plants": len(p),
                    "power": hits / len(p),
                    "power_low": low,
                    "power_high": high,
                    "power_unadjusted": float(np.mean(p <= self.design.alpha)),
                }
            )
        return pd.DataFrame(rows)

    def detectable(self) -> dict[str, float]:
        """Per distance, the smallest planted share detected with :data:`TARGET_POWER` power.

        Returns:
            The share by distance name; NaN where no planted share reaches that power.
        """
        out = {}
        for name, part in self.rates().groupby("distance", sort=False):
            hit = part[(part["share"] > 0) & (part["power"] >= TARGET_POWER)]
            out[str(name)] = float(hit["share"].min()) if len(hit) else math.nan
        return out

    def sentences(self) -> dict[str, str]:
        """Per distance, what its test could have detected, in words for its verdict."""
        out = {}
        rates = self.rates()
        for name, share in self.detectable().items():
            null = rates[(rates["distance"] == name) & (rates["share"] == 0)]
            fp = ""
            if len(null):
                row = null.iloc[0]
                fp = (
                    f", false positives {row['power']:.0%} at no mixture "
                    f"(95% interval {row['power_low']:.0%}-{row['power_high']:.0%})"
                )
            what = (
                f"it detects a {share:.0%} mixture with {TARGET_POWER:.0%} power"
                if math.isfinite(share)
                else f"it detects no planted mixture up to {rates['share'].max():.0%} with "
                f"{TARGET_POWER:.0%} power"
            )
            out[name] = f"{what} (pairs of {self.design.size} passages{fp})"
        return out


def passage_bank(texts: list[str], texts_per_passage: int, seed: int) -> list[Unit]:
    """The texts of one group cut into disjoint passages (a seeded permutation, then chunks)."""
    order = rng_for(seed, "bank").permutation(len(texts))
    n = len(texts) // texts_per_passage
    return [
        tuple(texts[i] for i in order[k * texts_per_passage : (k + 1) * texts_per_passage])
        for k in range(n)
    ]


def _join(unit: Unit) -> str:
    return " ".join(unit)


@dataclass(frozen=True)
class _Plant:
    """Two pseudo-groups of passages: ``a`` pure source, ``b`` with the donor mixed in."""

    a: list[Unit]
    b: list[Unit]


def _plants(
    source: list[Unit], donor: list[Unit], n: int, shares: list[float], plants: int, seed: int
) -> list[tuple[float, int, _Plant]]:
    """``(achieved share, plant, pseudo-groups)`` for every share (0 first) and plant.

    The same plant draws the same pseudo-groups at every share, so the power curve is smooth.
    """
    if len(source) < 2 * n:
        raise SampleSizeError(
            f"the power plants cut two pseudo-groups of {n} passages from a source of "
            f"{len(source)}: choose a larger analysis.power.source"
        )
    if len(donor) < n:
        raise SampleSizeError(
            f"the donor has {len(donor)} passages, fewer than the {n} a plant may mix in: "
            "choose a larger analysis.power.donor"
        )
    out = []
    for plant in range(plants):
        rng = rng_for(seed, "plant", plant)
        order = rng.permutation(len(source))
        a, b = [source[i] for i in order[:n]], [source[i] for i in order[n : 2 * n]]
        mixed_in = [donor[i] for i in rng.permutation(len(donor))[:n]]
        replaced = rng.permutation(n)
        for share in [0.0, *shares]:
            m = round(share * n)
            b_mixed = list(b)
            for k, position in enumerate(replaced[:m]):
                b_mixed[position] = mixed_in[k]
            out.append((m / n, plant, _Plant(a, b_mixed)))
    return out


def _draws(
    plant: _Plant, design: PlantDesign, plant_seed: int
) -> dict[str, list[dict[str, list[Unit]]]]:
    """Per kind and repetition, the units each pseudo-group draws (see the module)."""
    out: dict[str, list[dict[str, list[Unit]]]] = {
        "short": [],
        "long": [],
        "lda": [],
        "sentence": [],
    }
    for r in range(design.repetitions):
        rng = rng_for(plant_seed, "repetition", r)
        short: dict[str, list[Unit]] = {}
        long: dict[str, list[Unit]] = {}
        lda: dict[str, list[Unit]] = {}
        sentence: dict[str, list[Unit]] = {}
        for side, group in (("a", plant.a), ("b", plant.b)):
            # The repetition's pool: the whole pseudo-group when it has the pool's size.
            units = [group[i] for i in rng.permutation(len(group))[: design.passages]]
            order = rng.permutation(len(units))
            half = [units[i] for i in order[: max(1, len(units) // 2)]]
            if design.long_passages:
                long[side] = half[: design.long_passages]
            tweets = [t for unit in half for t in unit]
            if design.short_texts:
                chosen = rng.permutation(len(tweets))[: design.short_texts]
                short[side] = [(tweets[i],) for i in chosen]
            if design.sentences:
                sentence[side] = [(t,) for t in tweets]
            if design.lda_passages:
                lda[side] = [units[i] for i in order[: design.lda_passages]]
        for kind, drawn in (("short", short), ("long", long), ("lda", lda), ("sentence", sentence)):
            if drawn:
                out[kind].append(drawn)
    return out


def plant_power(
    source: list[Unit],
    donor: list[Unit],
    design: PlantDesign,
    *,
    tokens: TokenLookup,
    pooled: Callable[[list[str]], dict[str, np.ndarray]] | None,
    lda_others: list[dict[str, np.ndarray]] | None,
    lda: LdaSettings | None,
    relabellings: dict[str, int],
    relabel_seed: int,
    settings: PowerSettings,
    progress: bool = True,
) -> pd.DataFrame:
    """The p-value of every distance's pair test on every plant.

    Args:
        source: the source group's passage bank (:func:`passage_bank`).
        donor: the donor group's passage bank.
        design: the run's sizes.
        tokens: token vectors of texts (the embedding cache).
        pooled: pooled (sentence) vectors of texts, for LDA and ``energy_sentence`` (None:
            neither).
        lda_others: per repetition of the run, the other groups' LDA passage vectors (fitted
            with the pseudo-groups, as in the run); cycled over the plant's repetitions.
        lda: the LDA settings.
        relabellings: relabellings per tested distance (``energy_short``, ``energy_long``,
            ``energy_sentence``, ``lda``); a distance with 0 is not planted.
        relabel_seed: the relabellings' seed.
        settings: the plant settings.
        progress: show a progress bar.

    Returns:
        One row per (distance, share, plant): ``distance, share, plant, p``.
    """
    planted = _plants(source, donor, design.size, settings.shares, settings.plants, settings.seed)
    rows = []
    with tqdm(total=len(planted), desc="power plants", disable=not progress) as bar:
        for share, plant, pseudo in planted:
            draws = _draws(pseudo, design, settings.seed * 1_000_003 + plant)
            for name, p in _pair_tests(
                draws, tokens, pooled, lda_others, lda, relabellings, relabel_seed
            ):
                rows.append({"distance": name, "share": share, "plant": plant, "p": p})
            bar.update()
    return pd.DataFrame(rows, columns=["distance", "share", "plant", "p"])


def _pair_tests(
    draws: dict[str, list[dict[str, list[Unit]]]],
    tokens: TokenLookup,
    pooled: Callable[[list[str]], dict[str, np.ndarray]] | None,
    lda_others: list[dict[str, np.ndarray]] | None,
    lda: LdaSettings | None,
    relabellings: dict[str, int],
    relabel_seed: int,
) -> list[tuple[str, float]]:
    """``(distance, p)`` of every planted distance's test of the pseudo-pair."""
    out = []
    kinds = [("short", tokens, False), ("long", tokens, False), ("sentence", pooled, True)]
    for kind, lookup, single in kinds:
        name, reps = f"energy_{kind}", draws[kind]
        if reps and relabellings.get(name) and lookup is not None:
            p = _energy_p(name, reps, lookup, single, relabellings[name], relabel_seed)
            out.append((name, p))
    reps = draws["lda"]
    if reps and relabellings.get("lda") and pooled is not None and lda is not None and lda_others:
        out.append(
            ("lda", _lda_p(reps, pooled, lda_others, lda, relabellings["lda"], relabel_seed))
        )
    return out


def _energy_p(
    name: str,
    reps: list[dict[str, list[Unit]]],
    lookup: Callable[[list[str]], dict[str, np.ndarray]],
    single: bool,
    relabellings: int,
    relabel_seed: int,
) -> float:
    """The energy test's p of the pseudo-pair (``single``: one vector per text)."""
    vectors = lookup([_join(u) for rep in reps for units in rep.values() for u in units])
    shaped = {t: (v[None, :] if single else v) for t, v in vectors.items()}
    clouds = [{g: [shaped[_join(u)] for u in units] for g, units in rep.items()} for rep in reps]
    matrix = energy_matrix(
        clouds,
        name=name,
        units=reps,
        relabellings=relabellings,
        relabel_seed=relabel_seed,
        progress=False,
    )
    return _pair_p(matrix)


def _lda_p(
    reps: list[dict[str, list[Unit]]],
    pooled: Callable[[list[str]], dict[str, np.ndarray]],
    lda_others: list[dict[str, np.ndarray]],
    lda: LdaSettings,
    relabellings: int,
    relabel_seed: int,
) -> float:
    """The LDA test's p of the pseudo-pair, fitted with the run's other groups."""
    vectors = pooled([_join(u) for rep in reps for units in rep.values() for u in units])
    stacked, units = [], []
    for r, rep in enumerate(reps):
        own = {g: np.stack([vectors[_join(u)] for u in members]) for g, members in rep.items()}
        others = lda_others[r % len(lda_others)]
        n = min(len(v) for v in [*own.values(), *others.values()])
        stacked.append(
            {**{g: v[:n] for g, v in own.items()}, **{g: v[:n] for g, v in others.items()}}
        )
        named = {g: members[:n] for g, members in rep.items()}
        named |= {g: [(f"other/{r}/{g}/{i}",) for i in range(n)] for g in others}
        units.append(named)
    settings = replace(lda, relabellings=relabellings)
    matrix = lda_distance_matrix(stacked, settings, units=units, relabel_seed=relabel_seed)
    return _pair_p(matrix)


def _pair_p(matrix: DistanceMatrix) -> float:
    """The pseudo-pair's p above noise (a planted distance always has relabellings)."""
    p = matrix.p_above_noise
    if p is None:
        raise ValueError(f"{matrix.name} of a plant was not tested: it has no p-value")
    return float(p[0, 1])
