"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real study data: ``$REGBIAS_DATA_DIR``, else ``../shared/data`` next to the project."""
    configured = os.environ.get("REGBIAS_DATA_DIR")
    path = Path(configured) if configured else Path(__file__).parents[1] / "../shared/data"
    path = path.resolve()
    assert (path / "regional_sentiment140").is_dir(), f"no study data in {path}"
    return path


ROOT = Path(__file__).resolve().parents[1]


def compose_config(*overrides: str) -> Any:
    """The real ``conf/config.yaml`` composed in-process with ``overrides`` (Hydra compose API)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def _group(cfg: Any, name: str) -> dict[str, Any]:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg[name], resolve=True)


@pytest.fixture(scope="session")
def finetune_settings() -> Callable[..., Any]:
    """``finetune_settings(dataset, **changes)``: the composed ``finetune`` group as settings.

    Field names are config keys, so the settings are built from the group as it stands; tests
    change only what they are about (``**changes``, e.g. ``max_epochs=1``).
    """
    from regbias.performance.settings import FinetuneSettings
    from regbias.settings_reader import build

    composed: dict[str, Any] = {}

    def make(dataset: str = "sentiment140", **changes: Any) -> FinetuneSettings:
        if dataset not in composed:
            values = _group(compose_config(f"dataset={dataset}"), "finetune")
            composed[dataset] = build(FinetuneSettings, values, "finetune")
        return replace(composed[dataset], **changes)

    return make


@pytest.fixture(scope="session")
def trainer_settings() -> Any:
    """The composed ``trainer`` group as settings, on the CPU and without progress bars."""
    from regbias.performance.settings import TrainerSettings
    from regbias.settings_reader import build

    composed = build(TrainerSettings, _group(compose_config(), "trainer"), "trainer")
    return replace(composed, accelerator="cpu", enable_progress_bar=False)
