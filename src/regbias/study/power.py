"""``task=power``: what the tests of record could detect, planted in the user's own data.

Plants of :mod:`regbias.analysis.power.embedding` at the size classes of the tested pairs, with
the test of record's statistic; the performance test's plants need each text's real score, so
the study's models are trained once (binary corpora only) and accuracy gaps are planted
(:mod:`regbias.analysis.power.performance`).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import cap_groups, size_classes
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.analysis.power.embedding import PowerResult, plant_power
from regbias.analysis.power.performance import PerfPower, perf_plant_power
from regbias.data.groups import BASELINE
from regbias.data.study import StudyData
from regbias.embeddings.cache import EmbeddingCache, embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.errors import ConfigError
from regbias.performance.stage import run_performance_stage
from regbias.report.publish import write_perf_power, write_power
from regbias.study.parts import record_study, study_cache, study_encoder
from regbias.study.settings import StudySettings
from regbias.tracking.run_log import RunLog

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
    return size_classes(analysis.tests.embedding.plans(groups, analysis.reference_groups))


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
    cache = study_cache(settings)
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
    record: EmbeddingPairTests | None,
    *,
    study: StudyData | None = None,
    encoder: Encoder | None = None,
) -> PowerResult | None:
    """The plants of a sweep (or single run) where ``analysis.power.enabled``; else None."""
    if not settings.analysis.power.enabled or record is None:
        return None
    study = study if study is not None else record_study(settings)
    encoder = encoder if encoder is not None else study_encoder(settings)
    return power_study(settings, study, encoder, study_cache(settings))


def perf_power_study(
    settings: StudySettings,
    study: StudyData,
    encoder: Encoder,
    classes: list[tuple[int, int, int]],
    source: str,
) -> PerfPower | None:
    """Planted accuracy gaps in ``source``'s scored texts at ``classes``; None if multilabel."""
    if study.corpus.task != "binary" or not settings.finetune.enabled:
        return None
    power = settings.analysis.power
    only = replace(study, groups={source: study.groups[source]})
    log.info("performance power: training the study's models to score %s's texts", source)
    table = run_performance_stage(
        replace(
            settings.finetune, evaluation=replace(settings.finetune.evaluation, design="texts")
        ),
        settings.trainer,
        only,
        encoder,
        study_cache(settings),
        seed=settings.analysis.tests.embedding.seed,
        policy=settings.sampling.policy,
    )
    assert table.texts is not None
    texts = PerfTexts.of(table.texts[table.texts["group"] != BASELINE])
    return perf_plant_power(texts, source, classes, power, settings.analysis.significance)


def log_perf_power(run: RunLog, result: PerfPower) -> None:
    """The performance plants' rates and each size class's detectable gap."""
    write_perf_power(run, result)
    run.metrics(
        {
            f"power/detectable_gap/{a}__{b}": gap
            for (a, b), gap in result.detectable().items()
            if gap == gap
        }
    )


def perf_power_summary(result: PerfPower) -> str:
    """The console's lines: per size class, the smallest accuracy gap found with 80% power."""
    lines = [
        f"regbias: power of the performance test of record ({result.source}'s scored texts, "
        f"accuracy {result.accuracy:.3f}, a share of one side's correctness flipped; "
        f"{result.relabellings} relabellings a plant, {result.plants} plants a gap)"
    ]
    for (a, b), gap in result.detectable().items():
        said = (
            f"a gap of {100 * gap:.0f} points is found with 80% power"
            if gap == gap
            else "no planted gap is found with 80% power"
        )
        lines.append(f"  accuracy, pairs of {a} and {b} texts: {said}")
    if result.note:
        lines.append(f"  ({result.note})")
    return "\n".join(lines)
