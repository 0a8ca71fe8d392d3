"""``task=power``: what each pair test could detect, planted in the user's own data.

Builds the plants of :mod:`regbias.distances.power` from the configured study (its groups,
draw sizes, relabellings and encoder, embeddings through the cache), runs every tested
distance's pair test on them, and logs the rates, a figure and one sentence per distance.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Literal

import numpy as np

from regbias.analysis.primary import NON_REGION_GROUPS
from regbias.app.pipeline import prepare, study_encoder
from regbias.app.settings import StudySettings
from regbias.data.draws import DistanceDraws
from regbias.data.study import StudyData
from regbias.distances.power import PlantDesign, PowerResult, passage_bank, plant_power
from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import Encoder
from regbias.errors import ConfigError
from regbias.report import figures as plots
from regbias.tracking.runs import RunLog

__all__ = ["log_power", "power_study", "power_summary", "run_power", "sweep_power"]

log = logging.getLogger(__name__)
#: Groups that are no region: never a source or donor unless named (``train``: a CSV's
#: training rows).
_NOT_REGIONS = (*NON_REGION_GROUPS, "train")


def _pick(study: StudyData, named: str | None, exclude: tuple[str, ...], role: str) -> str:
    if named is not None:
        if named not in study.groups:
            raise ConfigError(
                f"analysis.power.{role}={named!r} is not a group of this study; groups: "
                f"{', '.join(study.groups)}"
            )
        return named
    candidates = [g for g in study.groups if g not in _NOT_REGIONS and g not in exclude]
    if not candidates:
        raise ConfigError(
            f"no group to serve as the power plants' {role}: set analysis.power.{role}"
        )
    return max(candidates, key=lambda g: len(study.groups[g]))


def _design(settings: StudySettings, study: StudyData, draws: DistanceDraws) -> PlantDesign:
    distance = settings.distance
    per_passage = distance.long.texts_per_passage if settings.dataset.unit == "tweet" else 1
    pool = draws.pool_size or min(len(t) for t in study.groups.values())
    jobs = settings.analysis.power.jobs or 1
    k = len(study.groups)
    return PlantDesign(
        passages=max(4, pool // per_passage),
        repetitions=distance.repetitions * jobs,
        short_texts=distance.short.texts_per_draw if "short" in draws.texts else None,
        long_passages=distance.long.passages_per_draw if "long" in draws.texts else None,
        lda_passages=distance.lda.passages_per_group if "lda" in draws.texts else None,
        n_pairs=k * (k - 1) // 2,
        alpha=settings.analysis.significance,
        sentences="sentence" in draws.texts,
        group_passages=settings.analysis.power.group_passages,
    )


def power_study(
    settings: StudySettings,
    study: StudyData,
    draws: DistanceDraws,
    encoder: Encoder,
    cache: EmbeddingCache | None,
) -> PowerResult:
    """The plants of ``settings.analysis.power`` on ``study``, at the sizes of ``draws``."""
    power = settings.analysis.power
    source = _pick(study, power.source, (), "source")
    donor = _pick(study, power.donor, (source,), "donor")
    per_passage = (
        settings.distance.long.texts_per_passage if settings.dataset.unit == "tweet" else 1
    )
    banks = [passage_bank(study.groups[g].texts, per_passage, power.seed) for g in (source, donor)]
    padding: Literal["real", "max_length"] = (
        "real" if settings.distance.tokens == "real" else "max_length"
    )

    def tokens(texts: list[str]) -> dict[str, np.ndarray]:
        distinct = list(dict.fromkeys(texts))
        return dict(
            zip(distinct, embed_tokens(encoder, cache, distinct, padding=padding), strict=True)
        )

    def pooled(texts: list[str]) -> dict[str, np.ndarray]:
        distinct = list(dict.fromkeys(texts))
        return dict(zip(distinct, embed_pooled(encoder, cache, distinct), strict=True))

    others = None
    if "lda" in draws.texts:
        vectors = pooled(draws.distinct_texts(["lda"]))
        others = [
            {
                g: np.stack([vectors[t] for t in ts])
                for g, ts in rep.items()
                if g not in (source, donor)
            }
            for rep in draws.texts["lda"]
        ]
    distance = settings.distance
    relabellings = {"lda": distance.lda.relabellings if distance.lda.enabled else 0}
    if distance.energy.enabled:
        kinds = ("short", "long", "sentence")
        relabellings |= {f"energy_{k}": distance.energy.relabellings for k in kinds}
    design = _design(settings, study, draws)
    log.info(
        "power plants: %d x %d shares, pseudo-groups of %d passages of %s, donor %s, "
        "%d repetitions",
        power.plants,
        len(power.shares) + 1,
        design.size,
        source,
        donor,
        design.repetitions,
    )
    rows = plant_power(
        banks[0],
        banks[1],
        design,
        tokens=tokens,
        pooled=pooled,
        lda_others=others,
        lda=distance.lda,
        relabellings=relabellings,
        relabel_seed=distance.relabel_seed,
        settings=power,
    )
    return PowerResult(rows, design, source, donor)


def log_power(run: RunLog, result: PowerResult) -> None:
    """The plants, the rates, the power figure and the detectable share per distance."""
    run.table(result.plants, "power/plants.csv")
    rates = result.rates()
    run.table(rates, "power/rates.csv")
    level = f"p <= {result.design.alpha:g} / {result.design.n_pairs}"
    run.figure(plots.power_curves(rates, level), "figures/power.png")
    metrics = {
        f"power/{name}/detectable_share": share
        for name, share in result.detectable().items()
        if np.isfinite(share)
    }
    run.metrics(metrics)
    for name, sentence in result.sentences().items():
        log.info("%s: %s", name, sentence)


def run_power(settings: StudySettings, run: RunLog) -> PowerResult:
    """``task=power``: draw as a job would, plant mixtures, log the power of every test."""
    study, draws = prepare(settings)
    encoder = study_encoder(settings)
    cache = EmbeddingCache(Path(settings.paths.cache_dir))
    result = power_study(settings, study, draws, encoder, cache)
    log_power(run, result)
    print(power_summary(result))
    return result


def power_summary(result: PowerResult) -> str:
    """The console's lines: per distance, what it detects, then the rates table."""
    lines = [
        f"regbias: power of the pair tests ({result.source} split in two, {result.donor} mixed "
        f"in; {result.design.repetitions} repetitions, pairs of {result.design.size} "
        "passages)"
    ]
    lines += [f"  {name}: {sentence}" for name, sentence in result.sentences().items()]
    rates = result.rates().pivot(index="share", columns="distance", values="power")
    lines += [
        "  detection rate by planted share:",
        *("    " + r for r in rates.to_string().splitlines()),
    ]
    return "\n".join(lines)


def sweep_power(
    settings: StudySettings, parent: RunLog, records: list[dict[str, object]]
) -> PowerResult | None:
    """The sweep's plants, logged to its parent run, where ``analysis.power.enabled``.

    The plants emulate the sweep: ``analysis.power.jobs`` jobs, or the sweep's own count when
    that is null.
    """
    power = settings.analysis.power
    if not power.enabled or not settings.distance.enabled:
        return None
    jobs = power.jobs or max(1, len(records))
    settings = replace(
        settings, analysis=replace(settings.analysis, power=replace(power, jobs=jobs))
    )
    study, draws = prepare(settings)
    encoder = study_encoder(settings)
    cache = EmbeddingCache(Path(settings.paths.cache_dir))
    result = power_study(settings, study, draws, encoder, cache)
    log_power(parent, result)
    return result
