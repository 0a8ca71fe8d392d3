"""Before a run or a sweep starts: its output folder, quiet libraries, the data on first use."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from regbias.app.quiet import quiet_libraries
from regbias.app.tasks import DATA_TASKS
from regbias.data.first_use import datasets_in_sweep, ensure_data
from regbias.errors import RegbiasError

__all__ = ["check_output_folder", "data_for_job", "start_sweep", "sweep_started"]
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


def check_output_folder(config: DictConfig, key: str) -> None:
    """Hydra's output folder (``key``: ``hydra.run.dir`` or ``hydra.sweep.dir``) can be written.

    Hydra creates it and writes each run's config and log there before regbias runs; where it
    cannot (a read-only working directory), the start ends here in one ``regbias: error:``
    line (exit 2) instead of Hydra's chained tracebacks. Nothing is created: a file is made and
    removed in the folder, or in the nearest folder above it that exists.
    """
    folder = Path(str(OmegaConf.select(config, key)))
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path.cwd())
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        print(
            f"regbias: error: cannot write the output folder {folder} ({existing.absolute()}: "
            f"{error.strerror or error}): regbias writes its outputs, and by default its MLflow "
            f"store and cache, under the folder it runs in; run it from a writable folder, or "
            f"move the outputs with {key}=/writable/path (the store and cache with tracking.uri, "
            "tracking.artifact_root and paths.cache_dir)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
