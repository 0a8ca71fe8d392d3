"""The composed Hydra config, read once into typed, frozen settings.

This is the only module besides ``app/`` that sees OmegaConf. Every config group maps onto the
settings dataclass of the stage that uses it, field name = config key, through the generic
converter of :mod:`regbias.settings_reader`; so a value is written once (``conf/``) and a field
once (its dataclass), and a typo or a wrong type fails here, before any work, with the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from omegaconf import DictConfig, OmegaConf

from regbias.analysis.results import AnalysisSettings
from regbias.data.loading import DatasetSettings, PathSettings
from regbias.distances.suite import DistanceSettings
from regbias.embeddings.encoder import EncoderSpec
from regbias.errors import ConfigError
from regbias.performance.finetune import FinetuneSettings, TrainerSettings
from regbias.settings_reader import build
from regbias.tracking.runs import TrackingSettings

__all__ = ["TASKS", "SamplingSettings", "StudySettings", "read_settings", "plain_config"]

TASKS = ("run", "describe", "analyze")


@dataclass(frozen=True)
class SamplingSettings:
    """The ``sampling`` config group.

    Attributes:
        policy: what a draw does when a group has fewer texts than asked: ``error`` or ``all``
            (take the group whole, as the paper did for NZ; logged).
    """

    policy: Literal["error", "all"]


@dataclass(frozen=True)
class StudySettings:
    """Everything one job reads from its config, typed and validated."""

    task: Literal["run", "describe", "analyze"]
    seed: int
    resume: bool
    paths: PathSettings
    sampling: SamplingSettings
    dataset: DatasetSettings
    finetune: FinetuneSettings
    encoder: EncoderSpec
    distance: DistanceSettings
    trainer: TrainerSettings
    tracking: TrackingSettings
    analysis: AnalysisSettings


def plain_config(cfg: DictConfig) -> dict[str, Any]:
    """The config as plain, resolved containers (without Hydra's own node)."""
    values = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    assert isinstance(values, dict)
    values.pop("hydra", None)
    return values  # type: ignore[return-value]


def read_settings(cfg: DictConfig) -> StudySettings:
    """The job's settings from the composed config.

    Raises:
        ConfigError: an unknown or missing key, a value of the wrong type or out of range; the
            message names the key and says what to set.
    """
    values = plain_config(cfg)
    _check_task_and_seed(values)
    return build(StudySettings, values, "")


def _check_task_and_seed(values: dict[str, Any]) -> None:
    task = values.get("task")
    if task not in TASKS:
        raise ConfigError(f"unknown task '{task}': use one of {', '.join(TASKS)} (task=...)")
    seed = values.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be an integer >= 0 (0 is a real seed), not {seed!r}")
