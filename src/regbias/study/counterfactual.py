"""Same texts, another variety, wired to the configured study.

A job rewrites its scored texts before its models train (:func:`study_rewrites`), so every
model scores each changed text three ways with the originals (``performance/rewrites.csv``).
The parent (or a single run) then measures, once per variant, the encoder's shift toward the
other group through the embedding cache and the classifiers' flips from the pooled scores
(:func:`run_counterfactual`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from regbias.analysis.counterfactual.classifier_flips import classifier_flips
from regbias.analysis.counterfactual.encoder_shift import encoder_shifts
from regbias.analysis.counterfactual.result import Counterfactual
from regbias.data.rewrite_sets import (
    RewriteSet,
    read_word_list,
    rewrite_sets,
    variety_directions,
)
from regbias.data.study import StudyData
from regbias.data.variety_rewrite import LEXIS
from regbias.embeddings.cache import embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.study.parts import scored_texts, study_cache
from regbias.study.settings import StudySettings

log = logging.getLogger(__name__)


class Rewrites(NamedTuple):
    """The study's rewrite sets and the directions they serve (``(A, B)``: A into B's forms)."""

    sets: list[RewriteSet]
    directions: list[tuple[str, str]]


def study_rewrites(settings: StudySettings, study: StudyData) -> Rewrites:
    """Every direction's rewrite set of the scored texts (none where the track is off).

    Raises:
        ConfigError: a pair names no group, a group with no variety, or the word list does
            not parse.
        DataError: no text changes.
    """
    counterfactual = settings.analysis.counterfactual
    if not counterfactual.enabled:
        return Rewrites([], [])
    word_list = counterfactual.word_list
    lexis = read_word_list(Path(word_list)) if word_list is not None else LEXIS
    groups = scored_texts(settings, study)
    directions = variety_directions(list(groups), counterfactual.pairs)
    if not directions:
        log.info("counterfactual track: no two groups are written in different varieties")
        return Rewrites([], [])
    sets = rewrite_sets(groups, directions, seed=settings.analysis.seed, lexis=lexis)
    changed = ", ".join(f"{s.name} {s.changed:,} of {s.examined:,}" for s in sets)
    log.info("texts rewritten into another variety: %s", changed)
    return Rewrites(sets, directions)


def run_counterfactual(
    settings: StudySettings,
    study: StudyData,
    encoder: Encoder,
    scores: pd.DataFrame | None,
) -> Counterfactual | None:
    """The encoder's shifts and, from the models' ``scores`` of the rewrites, their flips.

    None where the track is off or no two groups differ in variety.
    """
    rewrites = study_rewrites(settings, study)
    if not rewrites.sets:
        return None
    analysis = settings.analysis
    cache = study_cache(settings)
    groups = scored_texts(settings, study)  # the texts the test of record uses
    shifts = encoder_shifts(
        rewrites.sets,
        rewrites.directions,
        groups,
        lambda texts: embed_pooled(encoder, cache, texts),
        analysis.counterfactual,
        seed=analysis.seed,
        resamples=analysis.robustness.resamples,
        confidence=analysis.robustness.confidence,
        alpha=analysis.significance,
    )
    if scores is None or not len(scores):
        note = _no_scores_note(settings, study)
        return Counterfactual(shifts, [], note)
    flips = classifier_flips(
        scores,
        analysis.counterfactual,
        seed=analysis.seed,
        resamples=analysis.robustness.resamples,
        confidence=analysis.robustness.confidence,
        alpha=analysis.significance,
    )
    return Counterfactual(shifts, flips)


def _no_scores_note(settings: StudySettings, study: StudyData) -> str:
    if study.corpus.task != "binary":
        return "the classifiers' side is measured for binary tasks only (accuracy flips)"
    if not settings.finetune.enabled:
        return "the classifiers' side did not run: fine-tuning is off (finetune.enabled=false)"
    return (
        "the classifiers' side needs every model's scores of the rewrites "
        "(finetune.evaluation.design=texts)"
    )
