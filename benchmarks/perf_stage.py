"""What scoring every text costs: the performance stage in both designs, and the parent's test.

Runs a real job's performance stage (seed 0 of the default study, its texts' vectors from the
embedding cache: run once to fill it) with ``finetune.evaluation.design=texts`` and with the
first version's ``draws``, interleaved, then the test of record for performance with its
bootstrap on the texts design's scores. Timings on a shared machine are noisy: the machine's
load is printed beside them.

    python benchmarks/perf_stage.py --repeats 2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from regbias.analysis.pairs.performance import performance_pair_tests
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.app.settings import read_settings
from regbias.config_files import CONFIG_DIR
from regbias.embeddings.cache import EmbeddingCache
from regbias.performance.stage import run_performance_stage
from regbias.study.parts import scored_texts, study_encoder
from regbias.study.pipeline import read_study
from regbias.study.settings import StudySettings


def settings_for(*overrides: str) -> StudySettings:
    """The shipped default config with ``overrides`` (Hydra compose API)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return read_settings(compose("config", overrides=list(overrides)))


def stage_seconds(settings: StudySettings) -> tuple[float, object]:
    """One performance stage's wall seconds and its table."""
    study = read_study(settings)
    encoder = study_encoder(settings)
    cache = EmbeddingCache(Path(settings.paths.cache_dir))
    started = time.perf_counter()
    table = run_performance_stage(
        settings.finetune,
        settings.trainer,
        study,
        encoder,
        cache,
        seed=settings.seed,
        policy=settings.sampling.policy,
        scored=scored_texts(settings, study),
    )
    return time.perf_counter() - started, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    designs = {d: settings_for(f"finetune.evaluation.design={d}") for d in ("texts", "draws")}
    seconds: dict[str, list[float]] = {d: [] for d in designs}
    texts = None
    for _ in range(args.repeats):
        for design, settings in designs.items():
            took, table = stage_seconds(settings)
            seconds[design].append(took)
            texts = table.texts if design == "texts" else texts  # type: ignore[attr-defined]
    load = os.getloadavg()[0]
    for design, values in seconds.items():
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"performance stage, design={design}: {shown} s (load {load:.1f})")
    assert texts is not None
    analysis = designs["texts"].analysis
    started = time.perf_counter()
    scores = PerfTexts.of(texts)
    tests = performance_pair_tests(
        scores,
        list(dict.fromkeys(texts["group"])),
        analysis.tests.performance,
        references=analysis.reference_groups,
        n_bootstrap=analysis.robustness.resamples,
        confidence=analysis.robustness.confidence,
    )
    took = time.perf_counter() - started
    relabellings, resamples = analysis.tests.performance.relabellings, analysis.robustness.resamples
    print(
        f"performance test of record: {len(tests.table)} pairs, {len(scores.keys)} texts, "
        f"{len(scores.models)} models, {relabellings} relabellings and {resamples} bootstrap "
        f"replicates: {took:.1f} s (load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
