"""A sweep's encoders compared on the same texts, for its comparison page.

Each variant's encoder embeds the test of record's texts (through the cache) for their
separations pair by pair; each variant's tests of record give their agreement, and its pooled
measurements the joint bootstrap of the primary rhos. What cannot be compared gets a note.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from regbias.analysis.encoders.primary import PrimaryEvidence, primary_contrasts
from regbias.analysis.encoders.separation import EncoderContrast, contrast_encoders
from regbias.analysis.pair_table import DISTANCE_PREFIX
from regbias.analysis.pairs.pooled_scores import PerfTexts, pool_text_tables
from regbias.embeddings.cache import embed_pooled
from regbias.report.encoder_contrast import EncoderComparison
from regbias.report.record import read_record
from regbias.study.parts import record_study, study_cache, study_encoder
from regbias.study.settings import StudySettings
from regbias.tracking import artifacts as paths
from regbias.tracking.runs import RunLog

#: A variant's settings from one of its jobs' numbers.
SettingsOf = Callable[[object], StudySettings]
#: A variant's pooled per-text scores from its jobs' run IDs (None: a job has none).
TextsOf = Callable[[Sequence[str]], PerfTexts | None]

log = logging.getLogger(__name__)


def compare_variants(
    settings: StudySettings,
    folder: Path,
    variants: Mapping[str, tuple[str, object]],
    settings_of: SettingsOf,
    texts_of: TextsOf | None = None,
) -> EncoderComparison:
    """The variants compared: ``variants`` per label, its folder under ``folder`` and a job.

    ``settings_of``: a variant's own settings from one of its jobs' numbers; ``texts_of``:
    reads a variant's per-text scores back (:func:`jobs_texts`; None: the primary rhos'
    bootstrap resamples models and repetitions only).
    """
    analysis = settings.analysis
    found = EncoderComparison(confidence=analysis.robustness.confidence)
    unknown = [label for label, (_, job) in variants.items() if job is None]
    if unknown:  # a variant of an earlier sweep of the same parent: no job, no saved config
        found.notes.append(f"not compared (no job of this sweep): {', '.join(unknown)}")
        variants = {k: v for k, v in variants.items() if v[1] is not None}
    if len(variants) < 2:
        return found
    own = {label: settings_of(job) for label, (_, job) in variants.items()}
    for label, (name, _) in variants.items():
        record = read_record(folder / name)
        if record is not None:
            found.records[label] = record
    if analysis.robustness.resamples <= 0:
        found.notes.append("analysis.robustness.resamples is 0: no intervals, no comparison")
        return found
    found.separation = _separation(own, found.notes)
    folders = {k: v[0] for k, v in variants.items()}
    found.primary = _primary(own, folder, folders, found.notes, texts_of)
    return found


def _same_texts(own: Mapping[str, StudySettings]) -> bool:
    """Whether every variant's test of record draws the same texts."""

    def key(s: StudySettings) -> tuple[object, ...]:
        pair = s.analysis.tests.embedding
        return (repr(s.dataset), pair.cap, pair.seed, s.finetune.sample_size, s.sampling.policy)

    return len({key(s) for s in own.values()}) == 1


def _separation(own: Mapping[str, StudySettings], notes: list[str]) -> list[EncoderContrast]:
    first = next(iter(own.values()))
    if not all(s.analysis.tests.embedding.enabled for s in own.values()):
        notes.append("separation not compared: analysis.tests.embedding is off in a variant")
        return []
    if not _same_texts(own):
        notes.append("separation not compared: the variants' tests of record use other texts")
        return []
    study = record_study(first)
    groups = {name: list(texts.texts) for name, texts in study.groups.items()}
    vectors = {}
    for label, settings in own.items():
        encoder, cache = study_encoder(settings), study_cache(settings)
        vectors[label] = lambda texts, e=encoder, c=cache: embed_pooled(e, c, texts)
    analysis = first.analysis
    log.info("encoders compared on the same texts: %s", ", ".join(own))
    return contrast_encoders(
        groups,
        vectors,
        analysis.tests.embedding,
        references=analysis.reference_groups,
        n_bootstrap=analysis.robustness.resamples,
        confidence=analysis.robustness.confidence,
        alpha=analysis.significance,
        seed=analysis.seed,
    )


def jobs_texts(parent: RunLog) -> TextsOf:
    """Reads the jobs' ``performance/texts.csv`` back and pools them as the variant's report did."""

    def read(run_ids: Sequence[str]) -> PerfTexts | None:
        tables = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, run_id in enumerate(run_ids):
                path = RunLog(parent.client, run_id).download(paths.TEXTS_CSV, Path(tmp) / str(i))
                if path is None:
                    return None
                tables.append(paths.read_text_table(path))
        return PerfTexts.of(pool_text_tables(tables)) if tables else None

    return read


def _primary(
    own: Mapping[str, StudySettings],
    folder: Path,
    folders: Mapping[str, str],
    notes: list[str],
    texts_of: TextsOf | None = None,
) -> pd.DataFrame | None:
    analysis = next(iter(own.values())).analysis
    if analysis.correlation.primary is None:
        return None
    distance, performance = analysis.correlation.primary
    evidence = {}
    for label, name in folders.items():
        item = _primary_evidence(folder / name, distance, analysis.reference_groups, texts_of)
        if item is None:
            notes.append(f"primary rhos not compared: {label} has no pooled {distance}")
            return None
        evidence[label] = item
    return primary_contrasts(
        evidence,
        (distance, performance),
        n_bootstrap=analysis.robustness.resamples,
        confidence=analysis.robustness.confidence,
        seed=analysis.seed,
    )


def _primary_evidence(
    path: Path, distance: str, references: list[str], texts_of: TextsOf | None = None
) -> PrimaryEvidence | None:
    pairs = paths.read_table_at(path, paths.PAIRWISE_CSV)
    matrix = paths.read_distance(path, distance.removeprefix(DISTANCE_PREFIX))
    if pairs is None or matrix is None:
        return None
    regions = ~(pairs["group_a"].isin(references) | pairs["group_b"].isin(references))
    per_model = paths.read_table_at(path, paths.PER_MODEL_CSV)
    texts = None
    study = paths.read_study(path)
    if texts_of is not None and study is not None:
        texts = texts_of(list(study.get("runs", [])))
    return PrimaryEvidence(pairs[regions].reset_index(drop=True), matrix, per_model, texts)
