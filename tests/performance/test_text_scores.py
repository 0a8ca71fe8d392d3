"""The texts design: every distinct text scored once by every model that did not train on it."""

from __future__ import annotations

import numpy as np
import pytest

from regbias.data.corpus import TextSet
from regbias.performance.folds import FoldModel
from regbias.performance.text_scores import (
    per_model_rows,
    scored_subsets,
    text_key,
    text_table,
)


def _model(fold: int, sample: TextSet, train: list[int], test: list[int], groups) -> FoldModel:
    predictions = {g: np.full(len(t), 0.9) for g, t in groups.items()}
    labels = {g: np.asarray(t.labels) for g, t in groups.items()}
    baseline = sample.subset(test)
    predictions["baseline"] = np.full(len(test), 0.1)
    labels["baseline"] = np.asarray(baseline.labels)
    return FoldModel(
        0, fold, np.array(train[:-1]), np.array(train[-1:]), np.array(test), predictions, labels,
        baseline,
    )  # fmt: skip


def test_each_distinct_text_once_and_never_a_models_own_training_text():
    sample = TextSet(["s0", "s1", "s2", "s3"], np.array([1, 0, 1, 0]))
    # Group "a" holds a duplicate and one text of the training sample (s1).
    raw = {"a": TextSet(["x", "y", "x", "s1"], np.array([1, 0, 1, 0]))}
    groups = scored_subsets(raw)
    assert groups["a"].texts == ["x", "y", "s1"]
    models = [
        _model(0, sample, [2, 3, 1], [0], groups),  # saw s1 (as validation)
        _model(1, sample, [0, 2, 3], [1], groups),  # held s1 out
    ]
    table = text_table(models, groups, sample, "binary", ["negative", "positive"])
    a = table[table["group"] == "a"].set_index("key")
    assert list(a.index) == [text_key(t) for t in ("x", "y", "s1")]
    assert np.isnan(a.loc[text_key("s1"), "prob:seed0/fold0"])
    assert a.loc[text_key("s1"), "prob:seed0/fold1"] == pytest.approx(0.9)
    baseline = table[table["group"] == "baseline"].set_index("key")
    # Each held-out text is scored by the one model that held it out.
    assert baseline.loc[text_key("s0"), "prob:seed0/fold0"] == pytest.approx(0.1)
    assert np.isnan(baseline.loc[text_key("s0"), "prob:seed0/fold1"])
    rows = per_model_rows(models, ["baseline", "a"], sample, groups)
    n = rows[(rows["metric"] == "accuracy") & (rows["group"] == "a")].set_index("model")
    assert n.loc["seed0/fold0", "n_texts"] == 2 and n.loc["seed0/fold1", "n_texts"] == 3


def test_scored_subsets_keep_the_named_texts_only():
    raw = {"a": TextSet(["x", "y", "z"], np.array([1, 0, 1]))}
    assert scored_subsets(raw, {"a": ["z", "x", "nope"]})["a"].texts == ["z", "x"]
