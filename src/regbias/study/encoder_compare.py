"""A sweep's encoders compared on the same texts, for its comparison page.

Each variant's encoder embeds the test of record's texts (through the cache) for their
separations pair by pair; each variant's tests of record give their agreement, and its pooled
measurements (as its analysis wrote them, in memory) the joint bootstrap of the primary rhos.
What cannot be compared gets a note.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import pandas as pd

from regbias.analysis.encoders.primary import PrimaryEvidence, primary_contrasts
from regbias.analysis.encoders.separation import EncoderContrast, contrast_encoders
from regbias.analysis.pair_table import DISTANCE_PREFIX
from regbias.analysis.study import scored_texts
from regbias.embeddings.cache import embed_pooled
from regbias.report import comparison
from regbias.report.encoder_contrast import EncoderComparison
from regbias.report.encoders import encoder_evidence, encoders_markdown
from regbias.report.headline import Headline
from regbias.report.publish import Published
from regbias.study.aggregate import SweepResult, VariantResult
from regbias.study.parts import record_study, study_cache, study_encoder
from regbias.study.settings import StudySettings
from regbias.tracking.ledger import JobRecord
from regbias.tracking.run_log import RunLog

log = logging.getLogger(__name__)


def sweep_headlines(
    parent: RunLog,
    found: SweepResult,
    records: list[JobRecord],
    settings: StudySettings,
    settings_of: Callable[[int | None], StudySettings],
) -> dict[str, Headline]:
    """One headline per variant, by label; several variants also get the comparison page.

    ``settings``: the sweep's; ``settings_of``: a variant's own, from one of its jobs' numbers.
    """
    # In the sweep's order (encoder=a,b: a first), never the hashes' (they change with the code).
    variants = sorted(found.variants, key=lambda v: min(r.job_num or 0 for r in v.records))
    if len(variants) < 2 or not variants[0].folder:
        return {"": variants[0].written.headline if variants else Headline()}
    done = [r for r in records if r.done]
    labels = comparison.variant_labels(done)
    by_label = {labels.get(v.variant, v.folder): v for v in variants}
    headlines = {label: v.written.headline for label, v in by_label.items()}
    table = comparison.comparison_table(headlines)
    primary = settings.analysis.correlation.primary
    evidence = encoder_evidence({k: (v.folder, v.written) for k, v in by_label.items()}, primary)
    same = comparison.same_override_notes(done)
    for note in same:
        log.warning(note)
    # variants that ran other code or data on the same overrides compare no setting: not compared
    compared = (
        EncoderComparison(notes=[*same, "the variants were not compared on the same texts"])
        if same
        else _compare(settings, by_label, done, settings_of)
    )
    name = " ~ ".join(primary) if primary else "n/a"
    sections = compared.markdown(name) + encoders_markdown(evidence, primary=compared.primary)
    folders = {label: v.folder for label, v in by_label.items()}
    page = comparison.comparison_markdown(table, folders, sections, compared.findings())
    comparison.write_comparison(parent, compared.tables(), table, page)
    return headlines


def _compare(
    settings: StudySettings,
    variants: Mapping[str, VariantResult],
    done: list[JobRecord],
    settings_of: Callable[[int | None], StudySettings],
) -> EncoderComparison:
    """The variants compared on the same texts (``done``: the finished jobs' records)."""
    jobs = {r.variant: r.job_num for r in done}
    try:
        own = {k: settings_of(jobs[v.variant]) for k, v in variants.items()}
        return compare_variants(settings, {k: v.written for k, v in variants.items()}, own)
    except Exception as error:  # nothing here may fail the sweep
        log.exception("could not compare the variants on the same texts")
        return EncoderComparison(
            notes=[f"the variants could not be compared: {type(error).__name__}: {error}"]
        )


def compare_variants(
    settings: StudySettings,
    variants: Mapping[str, Published],
    own: Mapping[str, StudySettings],
) -> EncoderComparison:
    """The variants compared: per label, its pooled analysis as written and its own settings."""
    analysis = settings.analysis
    found = EncoderComparison(confidence=analysis.robustness.confidence)
    if len(variants) < 2:
        return found
    for label, written in variants.items():
        if written.results.record is not None:
            found.records[label] = written.results.record
    if analysis.robustness.resamples <= 0:
        found.notes.append("analysis.robustness.resamples is 0: no intervals, no comparison")
        return found
    found.separation = _separation(own, found.notes)
    found.primary = _primary(own, variants, found.notes)
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


def _primary(
    own: Mapping[str, StudySettings], variants: Mapping[str, Published], notes: list[str]
) -> pd.DataFrame | None:
    analysis = next(iter(own.values())).analysis
    if analysis.correlation.primary is None:
        return None
    distance, performance = analysis.correlation.primary
    evidence = {}
    for label, written in variants.items():
        item = _primary_evidence(written, distance, analysis.reference_groups)
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
    written: Published, distance: str, references: list[str]
) -> PrimaryEvidence | None:
    results, pairs = written.results, written.analysis.pairwise
    matrix = results.distances.get(distance.removeprefix(DISTANCE_PREFIX))
    if matrix is None:
        return None
    regions = ~(pairs["group_a"].isin(references) | pairs["group_b"].isin(references))
    texts = scored_texts(results)
    return PrimaryEvidence(pairs[regions].reset_index(drop=True), matrix, results.per_model, texts)
