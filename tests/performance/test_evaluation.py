"""Stage I evaluation: metrics, repeated draws, summaries, gaps and performance dcor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from regbias.errors import ConfigError, DataError, SampleSizeError
from regbias.performance.evaluation import (
    BINARY_METRICS,
    binary_metrics,
    evaluate_groups,
    multilabel_metrics,
    performance_dcor,
    performance_gaps,
    summarise,
)

Y = np.array([0, 0, 0, 1, 1, 1, 1, 0, 1, 0])
P = np.array([0.1, 0.6, 0.3, 0.8, 0.4, 0.9, 0.7, 0.2, 0.55, 0.45])


@dataclass
class Model:
    seed: int
    fold: int
    predictions: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]

    @property
    def name(self) -> str:
        return f"seed{self.seed}/fold{self.fold}"


def test_binary_metrics_equal_scikit_learn() -> None:
    values = binary_metrics(Y, P)
    pred = (P > 0.5).astype(int)
    assert values["accuracy"] == pytest.approx(0.8)  # two errors: 0.6 on a 0, 0.4 on a 1
    assert values["accuracy"] == pytest.approx(skm.accuracy_score(Y, pred))
    assert values["roc_auc"] == pytest.approx(skm.roc_auc_score(Y, P))
    assert values["precision_pos"] == pytest.approx(skm.precision_score(Y, pred))
    assert values["recall_pos"] == pytest.approx(skm.recall_score(Y, pred))
    assert values["precision_neg"] == pytest.approx(skm.precision_score(Y, pred, pos_label=0))
    assert values["recall_neg"] == pytest.approx(skm.recall_score(Y, pred, pos_label=0))
    assert values["f1"] == pytest.approx(skm.f1_score(Y, pred))
    assert tuple(values) == BINARY_METRICS


def test_multilabel_metrics_equal_scikit_learn() -> None:
    y = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 1]])
    p = np.array([[0.9, 0.2, 0.1], [0.3, 0.7, 0.8], [0.6, 0.4, 0.1], [0.2, 0.1, 0.3]])
    values = multilabel_metrics(y, p)
    pred = (p > 0.5).astype(int)
    assert values["subset_accuracy"] == pytest.approx(0.5)
    assert values["micro_precision"] == pytest.approx(skm.precision_score(y, pred, average="micro"))
    assert values["micro_recall"] == pytest.approx(skm.recall_score(y, pred, average="micro"))
    assert values["micro_f1"] == pytest.approx(skm.f1_score(y, pred, average="micro"))


def test_single_class_sample_gives_nan_auc_with_a_warning() -> None:
    with pytest.warns(RuntimeWarning, match="single class"):
        values = binary_metrics(np.ones(4, dtype=int), np.array([0.2, 0.7, 0.9, 0.6]))
    assert np.isnan(values["roc_auc"])
    assert values["accuracy"] == pytest.approx(0.75)
    assert values["precision_neg"] == 0.0  # zero_division=0, no prediction of class 0 is right


def test_labels_outside_zero_one_are_data_errors() -> None:
    with pytest.raises(DataError, match="4"):
        binary_metrics(np.array([0, 4, 4]), np.array([0.1, 0.9, 0.8]))
    with pytest.raises(DataError, match="shape"):
        binary_metrics(np.array([0, 1]), np.array([0.1, 0.9, 0.8]))
    with pytest.raises(DataError):
        multilabel_metrics(np.array([[0, 2]]), np.array([[0.1, 0.9]]))


def _models(n_models: int = 3) -> list[Model]:
    rng = np.random.default_rng(0)
    labels = {"au": np.arange(30) % 2, "nz": np.arange(8) % 2}
    models = []
    for fold in range(n_models):
        predictions = {g: rng.uniform(size=len(y)) for g, y in labels.items()}
        models.append(Model(seed=0, fold=fold, predictions=predictions, labels=labels))
    return models


def test_evaluate_groups_draws_equal_sizes_and_repeats() -> None:
    table = evaluate_groups(_models(), 6, 4, seed=1, groups=["au", "nz"], progress=False)
    expected = ["model", "seed", "fold", "group", "repetition", "metric", "value", "n_texts"]
    assert list(table.columns) == expected
    assert len(table) == 3 * 2 * 4 * len(BINARY_METRICS)
    assert set(table["n_texts"]) == {6}
    assert sorted(table["repetition"].unique()) == [0, 1, 2, 3]
    again = evaluate_groups(_models(), 6, 4, seed=1, groups=["au", "nz"], progress=False)
    pd.testing.assert_frame_equal(table, again)
    other = evaluate_groups(_models(), 6, 4, seed=2, groups=["au", "nz"], progress=False)
    assert not np.allclose(table["value"].fillna(-1), other["value"].fillna(-1))


def test_evaluate_groups_matches_metrics_on_the_drawn_texts() -> None:
    model = _models(1)[0]
    table = evaluate_groups([model], None, 3, seed=0, groups=["nz"], progress=False)
    direct = binary_metrics(model.labels["nz"], model.predictions["nz"])
    assert set(table["repetition"]) == {0}  # evaluated whole
    got = table.set_index("metric")["value"].to_dict()
    assert got == pytest.approx(direct)


def test_small_group_policy() -> None:
    with pytest.raises(SampleSizeError, match=r"'nz' holds 8 texts.*asks for 10"):
        evaluate_groups(_models(), 10, 2, seed=0, progress=False)
    with pytest.warns(RuntimeWarning, match="evaluated whole"):
        table = evaluate_groups(_models(), 10, 2, seed=0, policy="all", progress=False)
    nz = table[table["group"] == "nz"]
    assert set(nz["n_texts"]) == {8} and set(nz["repetition"]) == {0}
    assert set(table[table["group"] == "au"]["repetition"]) == {0, 1}
    with pytest.raises(ConfigError):
        evaluate_groups(_models(), 10, 2, seed=0, policy="some", progress=False)


def test_multilabel_groups_are_evaluated_whole() -> None:
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0]])
    p = np.array([[0.8, 0.1], [0.2, 0.9], [0.7, 0.3], [0.1, 0.2], [0.4, 0.1]])
    model = Model(seed=0, fold=0, predictions={"uk": p}, labels={"uk": y})
    table = evaluate_groups([model], 2, 5, seed=0, progress=False)
    assert set(table["repetition"]) == {0} and set(table["n_texts"]) == {5}
    assert table.set_index("metric")["value"].to_dict() == pytest.approx(multilabel_metrics(y, p))


def _summary(values: dict[str, list[float]], seeds: list[int] | None = None) -> pd.DataFrame:
    rows = []
    for group, per_model in values.items():
        for i, value in enumerate(per_model):
            seed = seeds[i] if seeds else 0
            rows.append((f"m{i}", seed, i, group, "accuracy", value))
    return pd.DataFrame(rows, columns=["model", "seed", "fold", "group", "metric", "value"])


def test_summarise_means_over_repetitions() -> None:
    table = pd.DataFrame(
        [
            ("m0", 0, 0, "au", 0, "accuracy", 0.6, 4),
            ("m0", 0, 0, "au", 1, "accuracy", 0.8, 4),
            ("m0", 0, 0, "au", 0, "roc_auc", np.nan, 4),
            ("m0", 0, 0, "au", 1, "roc_auc", 0.5, 4),
        ],
        columns=["model", "seed", "fold", "group", "repetition", "metric", "value", "n_texts"],
    )
    summary = summarise(table).set_index("metric")["value"]
    assert summary["accuracy"] == pytest.approx(0.7)
    assert summary["roc_auc"] == pytest.approx(0.5)  # an undefined AUC draw is skipped


def test_performance_gaps_by_hand() -> None:
    summary = _summary({"uk": [0.8, 0.6, 0.7], "au": [0.5, 0.5, 0.8], "us": [0.9, 0.9, 0.9]})
    gaps = performance_gaps(summary)
    assert list(zip(gaps["group_a"], gaps["group_b"], strict=True)) == [
        ("uk", "au"),
        ("uk", "us"),
        ("au", "us"),
    ]
    assert gaps["gap"].tolist() == pytest.approx([0.1, 0.2, 0.3])
    reordered = performance_gaps(summary, groups=["us", "uk"])
    assert reordered[["group_a", "group_b"]].values.tolist() == [["us", "uk"]]


def _dcor_by_hand(x: np.ndarray, y: np.ndarray) -> float:
    def centred(v: np.ndarray) -> np.ndarray:
        d = np.abs(v[:, None] - v[None, :])
        return d - d.mean(axis=0) - d.mean(axis=1)[:, None] + d.mean()

    a, b = centred(x), centred(y)
    dcov2, dvar_x, dvar_y = (a * b).mean(), (a * a).mean(), (b * b).mean()
    return float(np.sqrt(dcov2 / np.sqrt(dvar_x * dvar_y)))


def test_performance_dcor_by_hand_on_a_sweep_table() -> None:
    uk, au = [0.8, 0.6, 0.7, 0.65, 0.9], [0.5, 0.55, 0.8, 0.6, 0.7]
    seeds = [0, 0, 1, 1, 2]
    summary = _summary({"uk": uk, "au": au}, seeds=seeds)
    result = performance_dcor(summary)
    assert result[["group_a", "group_b"]].values.tolist() == [["uk", "au"]]
    expected = _dcor_by_hand(np.array(uk), np.array(au))
    assert result["dcor"].iloc[0] == pytest.approx(expected)
    # Concatenated per-job tables of a sweep give the same answer.
    jobs = [summary[summary["seed"] == s] for s in (0, 1, 2)]
    again = performance_dcor(pd.concat(jobs, ignore_index=True))
    assert again["dcor"].iloc[0] == pytest.approx(expected)


def test_performance_dcor_is_nan_when_undefined() -> None:
    with pytest.warns(RuntimeWarning, match="undefined"):
        one_model = performance_dcor(_summary({"uk": [0.8], "au": [0.5]}))
    assert np.isnan(one_model["dcor"].iloc[0])
    with pytest.warns(RuntimeWarning, match="constant"):
        constant = performance_dcor(_summary({"uk": [0.8, 0.7, 0.6], "au": [0.5, 0.5, 0.5]}))
    assert np.isnan(constant["dcor"].iloc[0])


def test_the_whole_chain_on_fold_models() -> None:
    table = evaluate_groups(_models(4), 6, 3, seed=0, progress=False)
    summary = summarise(table)
    assert len(summary) == 4 * 2 * len(BINARY_METRICS)
    gaps = performance_gaps(summary)
    dependence = performance_dcor(summary)
    assert set(gaps["metric"]) == set(BINARY_METRICS) == set(dependence["metric"])
    accuracy = summary[summary["metric"] == "accuracy"].groupby("group")["value"].mean()
    gap = gaps[gaps["metric"] == "accuracy"]["gap"].iloc[0]
    assert gap == pytest.approx(abs(accuracy["au"] - accuracy["nz"]))


def test_performance_table_checks_its_columns():
    from regbias.performance.table import PerformanceTable

    table = PerformanceTable(evaluate_groups(_models(), 6, 2, seed=0, progress=False))
    assert table.groups == ["au", "nz"] and len(table.models) == len(_models())
    with pytest.raises(ValueError, match="n_texts"):
        PerformanceTable(table.frame.drop(columns="n_texts"))
