"""The parent's study: the encoder and groups that a job, the test of record and power share.

One owner below :mod:`regbias.study.pipeline`, :mod:`regbias.study.record` and
:mod:`regbias.study.power`, so none of them imports another for them (the layout test holds
that no two modules import each other).
"""

from __future__ import annotations

from pathlib import Path

from regbias.analysis.pairs.pairwise import cap_groups
from regbias.data.groups import BASELINE
from regbias.data.study import StudyData, build_study
from regbias.embeddings.cache import EmbeddingCache
from regbias.embeddings.encoder import Encoder, load_encoder
from regbias.study.settings import StudySettings


def study_encoder(settings: StudySettings) -> Encoder:
    """The configured encoder on the trainer's device (cpu, cuda or auto)."""
    accelerator = settings.trainer.accelerator
    device = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda"}.get(accelerator, "auto")
    return load_encoder(settings.encoder, device=device, cache_dir=settings.paths.cache_dir)


def study_cache(settings: StudySettings) -> EmbeddingCache:
    """The embedding cache at ``paths.cache_dir``."""
    return EmbeddingCache(Path(settings.paths.cache_dir))


def record_study(settings: StudySettings, seed: int | None = None) -> StudyData:
    """The study's groups as the test of record sees them (a job: as its ``seed`` draws them).

    ``baseline`` is the training sample of ``seed`` (None: ``analysis.seed``).
    """
    dataset = settings.dataset
    corpus = dataset.read(dataset.data_dir(settings.paths.data_dir))
    binary = corpus.task == "binary"
    return build_study(
        corpus,
        dataset.groups,
        settings.finetune.sample_size if binary else None,
        settings.analysis.tests.embedding.seed if seed is None else seed,
        settings.sampling.policy,
    )


def scored_texts(settings: StudySettings, study: StudyData) -> dict[str, list[str]]:
    """The texts each model scores per group: every side it takes in the test of record.

    ``baseline`` is each model's held-out fold and is not listed.
    """
    analysis = settings.analysis
    groups = {g: list(t.texts) for g, t in study.groups.items() if g != BASELINE}
    scored: dict[str, dict[str, None]] = {g: {} for g in groups}
    for plan in analysis.tests.embedding.plans(groups, analysis.reference_groups):
        scored[plan.group_a].update(dict.fromkeys(plan.side_a))
        scored[plan.group_b].update(dict.fromkeys(plan.side_b))
    capped = cap_groups(groups, analysis.tests.embedding.group_cap, analysis.tests.embedding.seed)
    return {g: list(texts) if texts else capped[g] for g, texts in scored.items()}
