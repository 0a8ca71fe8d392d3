"""``task=power`` for measure I: what the performance test of record could detect.

The plants need each text's real score, so the task trains the study's models once (the
training sample of ``analysis.seed``, as for the test of record's ``baseline``),
scores the source region's texts with them and plants accuracy gaps at the tested size classes
(:mod:`regbias.analysis.power.performance`). A multilabel corpus gets no performance plants
(flipping
a text's correctness is a binary plant).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from regbias.analysis.power.performance import PerfPower, perf_plant_power
from regbias.analysis.tests.text_scores import PerfTexts
from regbias.data.groups import BASELINE
from regbias.data.study import StudyData
from regbias.embeddings.cache import EmbeddingCache
from regbias.embeddings.encoder import Encoder
from regbias.performance.stage import run_performance_stage
from regbias.report.publish import write_perf_power
from regbias.study.settings import StudySettings
from regbias.tracking.runs import RunLog

__all__ = ["log_perf_power", "perf_power_summary", "perf_power_study"]

log = logging.getLogger(__name__)


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
        EmbeddingCache(Path(settings.paths.cache_dir)),
        seed=settings.analysis.tests.embedding.seed,
        policy=settings.sampling.policy,
    )
    assert table.texts is not None
    texts = PerfTexts.of(table.texts[table.texts["group"] != BASELINE])
    return perf_plant_power(
        texts,
        source,
        classes,
        power.performance_gaps,
        plants=power.plants,
        relabellings=power.relabellings,
        alpha=settings.analysis.significance,
        seed=power.seed,
    )


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
