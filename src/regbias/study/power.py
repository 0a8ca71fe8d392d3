"""``task=power``: what the tests of record could detect, planted in the user's own data.

Builds the plants of :mod:`regbias.analysis.power.embedding` from the configured study: the size
classes of its tested pairs (capped as the test of record caps them, texts shared by a pair
left out), the source and donor groups' sentence vectors through the embedding cache, and the
test of record's own statistic. Logs the plants, the rates, a figure and one sentence per
size class; a sweep with ``analysis.power.enabled`` adds each pair's smallest detectable share
to its verdict. The performance test's plants (planted accuracy gaps) follow
(:mod:`regbias.study.perf_power`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from regbias.analysis.power.embedding import PowerResult, plant_power
from regbias.analysis.tests.embedding import PairTests, cap_groups, plan_pairs, size_classes
from regbias.data.study import StudyData
from regbias.embeddings.cache import EmbeddingCache, embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.errors import ConfigError
from regbias.report.publish import write_power
from regbias.study.parts import record_study, study_encoder
from regbias.study.perf_power import log_perf_power, perf_power_study, perf_power_summary
from regbias.study.settings import StudySettings
from regbias.tracking.runs import RunLog

__all__ = ["log_power", "power_study", "power_summary", "run_power", "tested_classes"]

log = logging.getLogger(__name__)
#: The most texts of the source and donor embedded for plants: fresh texts for every plant
#: without embedding all of a large region.
_POOL_FACTOR = 3


def _pick(
    study: StudyData,
    named: str | None,
    exclude: tuple[str, ...],
    role: str,
    references: list[str],
) -> str:
    """The group named, else the largest region (no reference group) not in ``exclude``."""
    if named is not None:
        if named not in study.groups:
            raise ConfigError(
                f"analysis.power.{role}={named!r} is not a group of this study; groups: "
                f"{', '.join(study.groups)}"
            )
        return named
    candidates = [g for g in study.groups if g not in references and g not in exclude]
    if not candidates:
        raise ConfigError(
            f"no group to serve as the power plants' {role}: set analysis.power.{role}"
        )
    return max(candidates, key=lambda g: len(study.groups[g]))


def tested_classes(settings: StudySettings, study: StudyData) -> list[tuple[int, int, int]]:
    """The size classes of the pairs the test of record tests: ``(n_small, n_large, m)``."""
    groups = {g: t.texts for g, t in study.groups.items()}
    analysis = settings.analysis
    return size_classes(plan_pairs(groups, analysis.tests.embedding, analysis.reference_groups))


def power_study(
    settings: StudySettings,
    study: StudyData,
    encoder: Encoder,
    cache: EmbeddingCache | None,
) -> PowerResult:
    """The plants of ``settings.analysis.power`` at the study's own tested sizes."""
    power = settings.analysis.power
    pair = settings.analysis.tests.embedding
    if 1.0 / (1 + power.relabellings) > settings.analysis.significance:
        raise ConfigError(
            f"analysis.power.relabellings={power.relabellings} cannot give a p below the level "
            f"{settings.analysis.significance:g}: raise it (999 resolves 0.05 / 50 pairs)"
        )
    references = settings.analysis.reference_groups
    source = _pick(study, power.source, (), "source", references)
    donor = _pick(study, power.donor, (source,), "donor", references)
    classes = tested_classes(settings, study)
    most = max(a + b for a, b, _ in classes)
    pools = cap_groups(
        {source: study.groups[source].texts, donor: study.groups[donor].texts},
        _POOL_FACTOR * most,
        power.seed,
    )
    donor_texts = [t for t in pools[donor] if t not in set(pools[source])]
    vectors = {
        name: embed_pooled(encoder, cache, texts)
        for name, texts in ((source, pools[source]), (donor, donor_texts))
    }
    log.info(
        "power plants: %d x %d shares at %d size classes, %s split in two, %s mixed in",
        power.plants,
        len(power.shares) + 1,
        len(classes),
        source,
        donor,
    )
    return plant_power(
        vectors[source],
        vectors[donor],
        classes,
        power,
        statistic=pair.statistic,
        alpha=settings.analysis.significance,
        names=(source, donor),
    )


def log_power(run: RunLog, result: PowerResult) -> None:
    """The plants, the rates, the power figure and the detectable share per size class."""
    write_power(run, result)
    run.metrics(
        {
            f"power/detectable_share/{a}__{b}": share
            for (a, b), share in result.detectable().items()
            if np.isfinite(share)
        }
    )


def run_power(settings: StudySettings, run: RunLog) -> PowerResult:
    """``task=power``: the study's groups, plants at their sizes, the rates logged."""
    study = record_study(settings)
    cache = EmbeddingCache(Path(settings.paths.cache_dir))
    encoder = study_encoder(settings)
    result = power_study(settings, study, encoder, cache)
    log_power(run, result)
    print(power_summary(result))
    classes = tested_classes(settings, study)
    performance = perf_power_study(settings, study, encoder, classes, result.source)
    if performance is not None:
        log_perf_power(run, performance)
        print(perf_power_summary(performance))
    return result


def power_summary(result: PowerResult) -> str:
    """The console's lines: per size class, what the test detects, then the rates."""
    lines = [
        f"regbias: power of the test of record ({result.statistic}; {result.source} split in "
        f"two, {result.donor} mixed in; {result.relabellings} relabellings a plant)"
    ]
    for (a, b), _ in result.detectable().items():
        lines.append(f"  pairs of {a} and {b} texts: {result.sentence(a, b)}")
    rates = result.rates()
    rates["pair sizes"] = rates["n_a"].astype(str) + " + " + rates["n_b"].astype(str)
    table = rates.pivot(index="share", columns="pair sizes", values="power")
    lines += [
        "  detection rate by planted share:",
        *("    " + r for r in table.to_string().splitlines()),
    ]
    return "\n".join(lines)


def sweep_power(
    settings: StudySettings,
    record: PairTests | None,
    *,
    study: StudyData | None = None,
    encoder: Encoder | None = None,
) -> PowerResult | None:
    """The plants of a sweep (or single run) where ``analysis.power.enabled``; else None."""
    if not settings.analysis.power.enabled or record is None:
        return None
    study = study if study is not None else record_study(settings)
    encoder = encoder if encoder is not None else study_encoder(settings)
    return power_study(settings, study, encoder, EmbeddingCache(Path(settings.paths.cache_dir)))
