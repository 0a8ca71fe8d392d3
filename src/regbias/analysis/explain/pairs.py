"""Explain every pair the test of record calls different, on the texts that test used.

Per differing pair: its distinguishing words (:mod:`.words`), its typical texts
(:mod:`.typical`) and, where a gazetteer is given, the place-name control (:mod:`.places`):
every group's texts with place names masked, and the test of record run again on them by
:func:`~regbias.analysis.pairs.embedding.embedding_pair_tests` itself (the same settings,
seed, caps, pairs, families and Holm), so a masked verdict is a verdict of record.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from regbias.analysis.explain.places import Gazetteer, english_share, name_counts
from regbias.analysis.explain.result import Explanations, PairExplanation
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.explain.typical import typical_texts
from regbias.analysis.explain.words import CountedTexts, distinguishing_words, has_words
from regbias.analysis.pairs.embedding import EmbeddingPairTests, embedding_pair_tests
from regbias.analysis.pairs.pairwise import DIFFERS, GROUP_A, GROUP_B, P_ADJUSTED, PlannedPair

log = logging.getLogger(__name__)
#: Below this share of English stop words a corpus is taken for another language: its words
#: are still computed, no place name is masked (English tweets: about 0.45).
ENGLISH_FLOOR = 0.1


def explain_pairs(
    tests: EmbeddingPairTests,
    groups: Mapping[str, Sequence[str]],
    vectors: Callable[[list[str]], np.ndarray],
    settings: ExplainSettings,
    *,
    references: Sequence[str] = (),
    gazetteer: Gazetteer | None = None,
    progress: Callable[[str], None] | None = None,
) -> Explanations:
    """Words, typical texts and the place-name control of every pair ``tests`` call different.

    ``groups`` and ``references`` as given to the test (its settings choose the texts again);
    ``vectors``: ``(n, d)`` sentence vectors of texts, in order; ``gazetteer``: the place names
    to mask (None: no control); ``progress``: called with each pair's name once explained.
    """
    note = ""
    if gazetteer is not None:
        # Every group's texts, sampled evenly over all of them (not the first group's first).
        share = english_share([t for texts in groups.values() for t in texts])
        if share < ENGLISH_FLOOR:
            note = (
                f"The texts do not read as English ({share:.0%} of their words are English "
                "stop words, against about 45% in English tweets): no place name is masked."
            )
            log.warning("%s", note)
            gazetteer = None
    masked: EmbeddingPairTests | None = None
    changed: dict[str, list[str]] = {}
    if gazetteer is not None:
        found = {g: [gazetteer.mask_found(t) for t in texts] for g, texts in groups.items()}
        masked_groups = {g: [m for m, _ in done] for g, done in found.items()}
        # Each text a name was masked in, with the names masked in it.
        changed = {
            t: names
            for g, texts in groups.items()
            for t, (_, names) in zip(texts, found[g], strict=True)
            if names
        }
        masked = embedding_pair_tests(
            masked_groups, vectors, tests.settings, references=references, alpha=tests.alpha
        )
    counted = CountedTexts.of([t for ts in groups.values() for t in ts])
    corpus = counted.totals() if settings.prior == "corpus" else None
    plans = {(p.group_a, p.group_b): p for p in tests.settings.plans(groups, references)}
    explained = []
    differing = tests.table[tests.table[DIFFERS].astype(bool)]
    for _, row in differing.iterrows():
        plan = plans[(row[GROUP_A], row[GROUP_B])]
        explained.append(_explain(plan, row, vectors, settings, counted, corpus, changed, masked))
        if progress is not None:
            progress(f"{plan.group_a}-{plan.group_b}")
    return Explanations(
        settings, explained, masked, gazetteer.source if gazetteer is not None else "", note
    )


def _explain(
    plan: PlannedPair,
    row: pd.Series,
    vectors: Callable[[list[str]], np.ndarray],
    settings: ExplainSettings,
    counted: CountedTexts,
    corpus: dict[str, int] | None,
    changed: Mapping[str, list[str]],
    masked: EmbeddingPairTests | None,
) -> PairExplanation:
    a, b = plan.side_a, plan.side_b
    words = distinguishing_words(a, b, settings.top_words, corpus, counted)
    typical = typical_texts(a, b, vectors(a), vectors(b), settings.typical_texts)
    effect, p_adjusted = float(row["effect"]), float(row[P_ADJUSTED])
    explanation = PairExplanation(
        plan.group_a,
        plan.group_b,
        words,
        typical,
        effect,
        p_adjusted,
        has_words_a=has_words(a),
        has_words_b=has_words(b),
    )
    if masked is None:
        return explanation
    texts = [*a, *b]
    share = sum(t in changed for t in texts) / len(texts) if texts else math.nan
    table = masked.table
    after = table[(table[GROUP_A] == plan.group_a) & (table[GROUP_B] == plan.group_b)].iloc[0]
    return replace(
        explanation,
        masked_share=share,
        masked_effect=float(after["effect"]),
        masked_p_adjusted=float(after[P_ADJUSTED]),
        masked_differs=bool(after[DIFFERS]),
        masked_names_a=name_counts(n for t in a for n in changed.get(t, ())),
        masked_names_b=name_counts(n for t in b for n in changed.get(t, ())),
    )
