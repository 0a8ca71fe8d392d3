"""Before a sweep's jobs start: quiet libraries and the data on first use, checked once."""

from __future__ import annotations

import sys
import time

from omegaconf import DictConfig

from regbias.app.quiet import quiet_libraries
from regbias.app.tasks import DATA_TASKS
from regbias.data.first_use import datasets_in_sweep, ensure_data
from regbias.errors import RegbiasError

__all__ = ["data_for_job", "start_sweep", "sweep_started"]
_started: list[float] = []


def sweep_started() -> float | None:
    """When this process's sweep started (``time.time()``), if it did."""
    return _started[-1] if _started else None


def data_for_job(cfg: DictConfig) -> None:
    """Download the job's dataset when it is missing (a no-op when it is there).

    Raises:
        DataError: offline or the download failed (one line with both ways out).
    """
    if cfg.get("task") in DATA_TASKS and cfg.get("dataset") is not None:
        ensure_data(cfg.dataset, cfg.paths.get("data_dir"))


def start_sweep(config: DictConfig) -> None:
    """Once per sweep, before its jobs: quiet libraries, every dataset the jobs read present.

    A failure ends the sweep here in one ``regbias: error:`` line (exit 2), before any job or
    MLflow run exists.
    """
    _started.append(time.time())
    quiet_libraries()
    if config.get("task") not in DATA_TASKS or config.get("dataset") is None:
        return
    default = str(config.dataset.get("name"))
    try:
        for name in datasets_in_sweep(default, list(config.hydra.overrides.task)):
            ensure_data(config.dataset if name == default else name, config.paths.get("data_dir"))
    except RegbiasError as error:
        print(f"regbias: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
