"""Stage I settings: one field per config key, validated with messages naming the key."""

from __future__ import annotations

import re
from dataclasses import fields, replace

import numpy as np
import pytest
from omegaconf import OmegaConf

from regbias.errors import ConfigError
from regbias.performance.folds import fold_plans, fold_seed
from regbias.performance.settings import EvaluationSettings, FinetuneSettings, TrainerSettings
from regbias.settings_reader import build
from tests.conftest import compose_config, packaged, packaged_values


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
        packaged(EvaluationSettings, "finetune.evaluation", draw_size=0, repetitions=3)
    with pytest.raises(ConfigError, match=r"finetune\.evaluation\.repetitions"):
        packaged(EvaluationSettings, "finetune.evaluation", draw_size=None, repetitions=0)
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
    assert hash(settings) == hash(finetune_settings("sentiment140"))


def _finetune(**changes: object) -> FinetuneSettings:
    return packaged(FinetuneSettings, "finetune", **changes)


def test_the_optimizer_is_named_by_its_target() -> None:
    assert _finetune().optimizer.target == "torch.optim.Adagrad"
    reuters = packaged(FinetuneSettings, "finetune", "dataset=reuters21578")
    assert reuters.optimizer.target == "torch.optim.AdamW" and reuters.sample_size is None


@pytest.mark.parametrize(
    ("optimizer", "message"),
    [
        ({"_target_": "torch.optim.Adagrade", "_partial_": True}, "cannot be imported"),
        ({"_target_": "torch.nn.Linear", "_partial_": True}, "not a concrete subclass"),
        ({"_target_": "no_such_package.Adam", "_partial_": True}, "cannot be imported"),
    ],
)
def test_unknown_optimizer_target_fails_naming_the_key(optimizer: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^finetune\.optimizer\._target_=") as info:
        _finetune(optimizer=optimizer)
    assert message in str(info.value) and "torch.optim.optimizer.Optimizer" in str(info.value)


@pytest.mark.parametrize(
    ("optimizer", "key"),
    [
        ("Adagrad", "finetune.optimizer must be a group"),
        ({"_partial_": True}, "finetune.optimizer._target_ has no value"),
        ({"_target_": "torch.optim.Adagrad"}, "finetune.optimizer._partial_ must be true"),
        ({"_target_": "torch.optim.SGD", "_partial_": True, "lr": 0.1}, "finetune.optimizer.lr"),
    ],
)
def test_bad_optimizer_group_names_its_key(optimizer: object, key: str) -> None:
    # the whole optimizer group replaced (packaged() would merge a mapping into the shipped one)
    values = {**packaged_values("finetune"), "optimizer": optimizer}
    with pytest.raises(ConfigError, match=re.escape(key)):
        build(FinetuneSettings, values, "finetune")


def test_callbacks_are_checked_when_the_settings_are_read() -> None:
    monitor = "lightning.pytorch.callbacks.LearningRateMonitor"
    cfg = compose_config(f"+finetune.callbacks.lr_monitor._target_={monitor}")
    settings = build(FinetuneSettings, OmegaConf.to_container(cfg.finetune), "finetune")
    ((name, target),) = settings.callbacks.entries
    assert (name, target.target) == ("lr_monitor", monitor)
    assert type(settings.callbacks.instantiate()[0]).__name__ == "LearningRateMonitor"
    with pytest.raises(ConfigError, match=r"finetune\.callbacks\.x\._target_=torch\.nn\.Linear"):
        _finetune(callbacks={"x": {"_target_": "torch.nn.Linear"}})
    assert _finetune().callbacks.entries == ()


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
