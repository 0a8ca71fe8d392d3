"""The composed Hydra config, read once into typed, frozen settings.

Every config group maps onto its stage's settings dataclass through
:mod:`regbias.settings_reader`, so a typo or a wrong type fails here, before any work.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from regbias.app.removed_keys import MOVED_KEYS, REMOVED_KEYS, removed_setting
from regbias.app.tasks import task_named
from regbias.data.dataset import DEFAULT_REFERENCE_GROUPS, TASK_PRIMARY_PERFORMANCE
from regbias.errors import ConfigError
from regbias.settings_reader import build
from regbias.study.settings import StudySettings

log = logging.getLogger(__name__)

MAX_SEED = 2**32 - 1


def plain_config(cfg: DictConfig) -> dict[str, Any]:
    """The config as plain, resolved containers (without Hydra's own node)."""
    study = OmegaConf.masked_copy(cfg, [str(k) for k in cfg if k != "hydra"])
    values = OmegaConf.to_container(study, resolve=True, throw_on_missing=True)
    assert isinstance(values, dict)
    return values  # type: ignore[return-value]


def read_settings(cfg: DictConfig) -> StudySettings:
    """The job's settings from the composed config.

    Raises:
        ConfigError: an unknown or missing key, a value of the wrong type or out of range; the
            message names the key and says what to set.
    """
    _check_dataset_package(cfg)
    _corpus_defaults(cfg)
    values = plain_config(cfg)
    set_keys = [key for key in (*REMOVED_KEYS, *MOVED_KEYS) if _holds(values, key)]
    if set_keys:
        raise removed_setting(set_keys[0])
    task_named(values.get("task"))
    validate_seed(values.get("seed"))
    return _random_encoder_apart(build(StudySettings, values, ""))


def _holds(values: dict[str, Any], key: str) -> bool:
    """Whether the plain config ``values`` sets the dotted ``key``."""
    node: Any = values
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _check_dataset_package(cfg: DictConfig) -> None:
    """A dataset file without its ``# @package _global_`` line nests ``dataset:`` in itself."""
    dataset = cfg.get("dataset")
    if isinstance(dataset, DictConfig) and "dataset" in dataset:
        raise ConfigError(
            "the dataset's config file puts its keys under dataset.dataset: make "
            "`# @package _global_` its first line (see conf/dataset/sentiment140.yaml)"
        )


def _corpus_defaults(cfg: DictConfig) -> None:
    """Fill in, in place, what a corpus's config may leave out: primary column, reference groups.

    The analysis's keys interpolate them (without a value OmegaConf's message would say less).
    """
    dataset = cfg.get("dataset")
    if not isinstance(dataset, DictConfig):
        return
    with open_dict(dataset):
        if "primary_performance" not in dataset:
            task = dataset.get("task")
            if task not in TASK_PRIMARY_PERFORMANCE:
                raise ConfigError(
                    f"dataset.task must be one of {', '.join(TASK_PRIMARY_PERFORMANCE)}, not "
                    f"{task!r} (it also implies dataset.primary_performance; see "
                    "conf/dataset/sentiment140.yaml)"
                )
            dataset.primary_performance = TASK_PRIMARY_PERFORMANCE[task]
        if "reference_groups" not in dataset:
            dataset.reference_groups = list(DEFAULT_REFERENCE_GROUPS)


def _random_encoder_apart(settings: StudySettings) -> StudySettings:
    """Send a random encoder's runs to ``tracking.random_encoder_experiment``, apart."""
    apart = settings.tracking.random_encoder_experiment
    if not settings.encoder.random_weights or not apart:
        return settings
    return replace(settings, tracking=replace(settings.tracking, experiment=apart))


def validate_seed(seed: object) -> int:
    """The job's seed as an int in ``0 .. 2**32 - 1`` (numpy's and Lightning's range).

    Raises:
        ConfigError: not an integer, or out of range (0 is a real seed).
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(f"seed must be an integer (0 is a real seed), not {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"seed must be between 0 and {MAX_SEED} (0 is a real seed), not {seed}")
    return seed


def variant_settings(settings: StudySettings, sweep_dir: Path, job_num: object) -> StudySettings:
    """The settings of one variant of a sweep: its job's saved config (else ``settings``)."""
    path = sweep_dir / str(job_num) / ".hydra" / "config.yaml"
    if not path.is_file():
        log.warning("no saved config at %s: the sweep's own settings stand in", path)
        return settings
    config = OmegaConf.load(path)
    return read_settings(config)  # type: ignore[arg-type]
