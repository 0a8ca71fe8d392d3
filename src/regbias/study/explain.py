"""What carries each difference the test of record finds, wired to the configured study.

Run once per sweep in the parent, right after the test of record and on the same groups and
sentence vectors (the embedding cache): :func:`regbias.analysis.explain.pairs.explain_pairs`.
The masked texts of the place-name control are new texts to the cache, embedded once.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from regbias.analysis.explain.pairs import explain_pairs
from regbias.analysis.explain.places import MASK, Gazetteer, load_gazetteer, place_shares
from regbias.analysis.explain.result import Explanations
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import DIFFERS
from regbias.console import progress_bar
from regbias.data.study import StudyData
from regbias.embeddings.cache import embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.errors import ConfigError
from regbias.study.parts import record_study, study_cache, study_encoder
from regbias.study.settings import StudySettings

log = logging.getLogger(__name__)


def run_explain(
    settings: StudySettings,
    record: EmbeddingPairTests | None,
    *,
    study: StudyData | None = None,
    encoder: Encoder | None = None,
) -> Explanations | None:
    """The explanations of every pair ``record`` calls different (None: ``explain`` is off).

    With the test of record off (``record`` None) nothing is explained, and that is said
    (:func:`skipped_explanations`).

    ``study`` and ``encoder`` None: read as :func:`record_study` and ``study_encoder`` do.
    """
    explain = settings.analysis.explain
    if not explain.enabled:
        return None
    if record is None:
        return skipped_explanations(settings)
    differing = int(record.table[DIFFERS].astype(bool).sum())
    if not differing:
        return Explanations(explain)
    study = study if study is not None else record_study(settings)
    encoder = encoder if encoder is not None else study_encoder(settings)
    gazetteer: Gazetteer | None = None
    if explain.mask_places:
        check_mask_token(encoder)
        gazetteer = load_gazetteer(explain.min_population)
    cache = study_cache(settings)
    groups = {name: list(texts.texts) for name, texts in study.groups.items()}
    control = gazetteer.source if gazetteer is not None else "off"
    log.info("explaining %d differing pairs (place-name control: %s)", differing, control)
    with progress_bar(total=differing, desc="explain pairs") as bar:
        explained = explain_pairs(
            record,
            groups,
            lambda texts: embed_pooled(encoder, cache, texts),
            explain,
            references=settings.analysis.reference_groups,
            gazetteer=gazetteer,
            progress=lambda _: bar.update(),
        )
    paired = {g for p in explained.pairs for g in (p.group_a, p.group_b)}
    named = place_named(gazetteer, explain, {g: groups[g] for g in groups if g in paired})
    return replace(explained, place_shares=named)


def place_named(
    gazetteer: Gazetteer | None, explain: ExplainSettings, groups: dict[str, list[str]]
) -> dict[str, float]:
    """Each group's share of texts naming a place, by the control's gazetteer.

    The gazetteer is loaded here where the control is off; empty where it cannot be loaded.
    """
    if gazetteer is None:
        try:
            gazetteer = load_gazetteer(explain.min_population)
        except ConfigError as error:
            log.warning("no place-name shares: %s", error)
            return {}
    return place_shares(gazetteer, groups)


def skipped_explanations(settings: StudySettings) -> Explanations:
    """``analysis.explain`` on with the test of record off: said once, in the log and report.

    The explanations (and the place-name control) explain the pairs the test of record calls
    different; without it there is nothing to explain, which is not "no pair differs".
    """
    explain = settings.analysis.explain
    what = "explanations and the place-name control" if explain.mask_places else "explanations"
    line = (
        f"The {what} did not run: they explain the pairs the test of record finds, and it is "
        "off (analysis.tests.embedding.enabled=false): turn it on to have them."
    )
    if explain.mask_places:
        log.warning("%s", line)
    else:
        log.info("%s", line)
    return Explanations(explain, skipped=line)


def check_mask_token(encoder: Encoder) -> None:
    """Refuse an encoder whose tokenizer has no vocabulary; warn where it lacks the mask word.

    The mask should be one ordinary token to the encoder (not split, not unknown), or masking
    moves the texts in its space more than a word does.

    Raises:
        ConfigError: the tokenizer has no vocabulary.
    """
    name = encoder.spec.name
    try:
        vocabulary = encoder.tokenizer.get_vocab()
    except (AttributeError, NotImplementedError, TypeError):
        vocabulary = None
    if not vocabulary:
        raise ConfigError(
            f"analysis.explain.mask_places needs the encoder's tokenizer vocabulary (to check "
            f"the mask word {MASK!r} is one token), and encoder {name!r} has none; set "
            "analysis.explain.mask_places=false"
        )
    if MASK not in vocabulary and f"\u0120{MASK}" not in vocabulary:
        # A small vocabulary (the tiny test encoder's) splits it: masking still works, but the
        # word itself is then several pieces to the encoder.
        log.warning(
            "the mask word %r is not one token of encoder %r's vocabulary: masked texts carry "
            "its pieces",
            MASK,
            name,
        )
