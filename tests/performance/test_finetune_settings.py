"""Stage I settings: one field per config key, validated with messages naming the key."""

from __future__ import annotations

import re
from dataclasses import fields, replace

import numpy as np
import pytest

from regbias.errors import ConfigError
from regbias.performance.finetune import (
    EvaluationSettings,
    FinetuneSettings,
    TrainerSettings,
    fold_plans,
    fold_seed,
)
from tests.conftest import compose_config


def _keys(cfg, group: str) -> set[str]:
    return set(cfg[group].keys())


@pytest.mark.parametrize("dataset", ["sentiment140", "reuters21578", "csv"])
def test_finetune_fields_are_the_config_keys(dataset: str) -> None:
    cfg = compose_config(f"dataset={dataset}")
    names = {f.name for f in fields(FinetuneSettings)}
    # sample_size is the only optional key (multilabel corpora train on their whole split).
    assert _keys(cfg, "finetune") | {"sample_size"} == names
    assert set(cfg.finetune.evaluation.keys()) == {f.name for f in fields(EvaluationSettings)}


@pytest.mark.parametrize("trainer", ["auto", "cpu", "gpu"])
def test_trainer_fields_are_the_config_keys(trainer: str) -> None:
    cfg = compose_config(f"trainer={trainer}")
    assert _keys(cfg, "trainer") == {f.name for f in fields(TrainerSettings)}


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"mode": "frozen"}, "finetune.mode"),
        ({"k_folds": 0}, "finetune.k_folds"),
        ({"sample_size": 0}, "finetune.sample_size"),
        ({"val_fraction": 1.0}, "finetune.val_fraction"),
        ({"head_lr": 0.0}, "finetune.head_lr"),
        ({"batch_size": 0}, "finetune.batch_size"),
        ({"max_length": 1}, "finetune.max_length"),
        ({"weight_decay": -0.1}, "finetune.weight_decay"),
        ({"warmup_fraction": 1.0}, "finetune.warmup_fraction"),
        ({"dropout": 1.0}, "finetune.dropout"),
        ({"monitor": "val/f1"}, "finetune.monitor"),
        ({"monitor_mode": "up"}, "finetune.monitor_mode"),
        ({"patience": 0}, "finetune.patience"),
    ],
)
def test_bad_finetune_value_names_its_key(finetune_settings, changes: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)):
        finetune_settings("sentiment140", **changes)


def test_bad_evaluation_and_trainer_values_name_their_keys(trainer_settings) -> None:
    with pytest.raises(ConfigError, match=r"finetune\.evaluation\.draw_size"):
        EvaluationSettings(draw_size=0, repetitions=3)
    with pytest.raises(ConfigError, match=r"finetune\.evaluation\.repetitions"):
        EvaluationSettings(draw_size=None, repetitions=0)
    with pytest.raises(ConfigError, match=r"trainer\.accelerator"):
        replace(trainer_settings, accelerator="tpu")
    with pytest.raises(ConfigError, match=r"trainer\.num_workers"):
        replace(trainer_settings, num_workers=-1)


def test_learning_rate_is_head_lr_in_head_mode(finetune_settings) -> None:
    settings = finetune_settings("sentiment140", lr=1e-3, head_lr=0.05)
    assert replace(settings, mode="head").learning_rate == 0.05
    assert replace(settings, mode="full").learning_rate == 1e-3


def test_settings_are_frozen(finetune_settings) -> None:
    settings = finetune_settings("sentiment140")
    with pytest.raises(AttributeError):
        settings.lr = 1.0  # type: ignore[misc]


def test_binary_plans_cross_validate_and_multilabel_trains_one_model() -> None:
    plans = fold_plans("binary", 30, 3, seed=5)
    assert [p.fold for p in plans] == [0, 1, 2]
    assert sorted(np.concatenate([p.test_index for p in plans]).tolist()) == list(range(30))
    assert [p.seed for p in plans] == [fold_seed(5, j) for j in range(3)]
    assert [p.metric_prefix for p in plans] == ["fold0/", "fold1/", "fold2/"]
    (single,) = fold_plans("multilabel", 30, 3, seed=5)
    assert single.train_index.tolist() == list(range(30)) and len(single.test_index) == 0
    assert (single.seed, single.metric_prefix) == (5, "")
    with pytest.raises(ConfigError, match=r"finetune\.k_folds >= 2"):
        fold_plans("binary", 30, 1, seed=5)
