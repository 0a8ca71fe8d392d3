"""The classifiers' side on real tweets: a classifier keyed on British forms flips on the
rewrite and not on its control; one that reads no spelling flips on neither."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from regbias.analysis.counterfactual.classifier_flips import classifier_flips
from regbias.data.rewrite_sets import RewriteSet, rewrite_sets
from regbias.data.variety_rewrite import VarietyRewrite
from regbias.performance.text_scores import text_key

BRITISH_FORMS = frozenset(VarietyRewrite.into("american").words)
MODELS = [f"seed{s}/fold{f}" for s in range(5) for f in range(2)]
OPTIONS = {"seed": 0, "resamples": 199, "confidence": 0.95, "alpha": 0.05}


def _table(sets: list[RewriteSet], model: Callable[[str, int], float]) -> pd.DataFrame:
    """What each model says of each version of each changed text (all labelled positive)."""
    parts = []
    for s in sets:
        for version, texts in (
            ("original", s.originals),
            ("variety", s.rewritten),
            ("control", s.controls),
        ):
            frame = pd.DataFrame(
                {
                    "group": s.group,
                    "target": s.target,
                    "version": version,
                    "key": [text_key(t) for t in s.originals],
                    "label": "1",
                }
            )
            for m, name in enumerate(MODELS):
                frame[f"prob:{name}"] = [model(t, m) for t in texts]
            parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def _keyed(text: str, model: int) -> float:
    """Positive where the text holds a British form (a little noise per model)."""
    british = any(w in BRITISH_FORMS for w in text.lower().split())
    return (0.8 if british else 0.2) + 0.01 * model


def test_a_classifier_keyed_on_british_forms_flips_on_the_rewrite_only(
    tweets, counterfactual_settings
):
    sets = rewrite_sets(tweets, [("us", "uk"), ("uk", "us")], seed=0)
    rows = {
        r.name: r
        for r in classifier_flips(_table(sets, _keyed), counterfactual_settings, **OPTIONS)
    }
    to_british, to_american = rows["us>british"], rows["uk>american"]
    assert to_british.flips.value > 0.5 and to_british.control_flips.value < 0.05
    assert to_british.change.low > 0.4  # every us text labelled positive: it gains accuracy
    assert to_british.verdict.differs and to_british.verdict.adjusted <= 0.01
    assert to_british.texts == sets[0].changed and to_british.models == len(MODELS)
    # uk>american removes the British forms, and so does its control: flips on both.
    assert to_american.flips.value > 0.5 and to_american.control_flips.value > 0.5


def test_a_classifier_that_reads_no_spelling_never_flips(tweets, counterfactual_settings):
    sets = rewrite_sets(tweets, [("us", "uk")], seed=0)
    table = _table(sets, lambda text, model: 0.7 + 0.01 * model)
    (row,) = classifier_flips(table, counterfactual_settings, **OPTIONS)
    assert row.flips.value == 0.0 and row.change.value == 0.0
    assert row.verdict.moved == 1.0 and not row.verdict.differs
    assert np.isfinite(row.change.low)  # five seeds: intervals


def test_two_seeds_get_no_interval_and_a_few_texts_no_test(tweets, counterfactual_settings):
    sets = rewrite_sets(tweets, [("us", "uk")], seed=0)
    table = _table(sets, _keyed)
    two_seeds = table.drop(
        columns=[f"prob:{m}" for m in MODELS if not m.startswith(("seed0", "seed1"))]
    )
    (row,) = classifier_flips(two_seeds, counterfactual_settings, **OPTIONS)
    assert not np.isfinite(row.flips.low) and "2 training units" in row.note
    few = table[table["key"].isin(table["key"].unique()[:5])]
    (row,) = classifier_flips(few, counterfactual_settings, **OPTIONS)
    assert row.texts == 5 and not np.isfinite(row.verdict.p) and "too few" in row.note
