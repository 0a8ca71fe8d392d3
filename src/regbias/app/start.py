"""Before a run or a sweep starts: its output folder, quiet libraries, the data on first use.

A job prints one line per stage with its time; third-party progress bars and start-up lines
stay out of it unless ``hydra.verbose=true`` (or ``hydra.verbose=[regbias]``) asks for them.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import NoReturn

from omegaconf import DictConfig, OmegaConf

from regbias.app.tasks import DATA_TASKS
from regbias.console import exit_with
from regbias.data.first_use import datasets_in_sweep, ensure_data
from regbias.errors import ConfigError, RegbiasError
from regbias.redaction import redact_logging
from regbias.report.report_folder import REPORT_FOLDER, check_report_folder
from regbias.tracking.runs import MIN_FREE_MB, free_mb

_started: list[float] = []

#: Environment variables set (unless the user set them) for a quiet run.
QUIET_ENV = {
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}
#: Start-up lines repeated in every job, quiet even with ``hydra.verbose``: warnings only.
ALWAYS_QUIET_LOGGERS = ("lightning.pytorch.utilities.rank_zero", "jax._src.xla_bridge")
#: Loggers of libraries that repeat start-up lines in every job: warnings only.
QUIET_LOGGERS = (
    "mlflow",
    "alembic",
    *ALWAYS_QUIET_LOGGERS,
    "lightning.fabric.utilities.rank_zero",
    "transformers",
    "huggingface_hub",
)
# Warnings that say nothing to a regbias user (Lightning on a machine that has `srun`).
_IGNORED_WARNINGS = (r".*The `srun` command is available on your system.*",)


def quiet_libraries() -> None:
    """Silence third-party bars and chatter in this process and the jobs it starts.

    Does nothing where the user asked for more output (``hydra.verbose`` set regbias to
    DEBUG); variables the user set are kept. Credentials are redacted from every log line
    either way.
    """
    redact_logging()
    if logging.getLogger("regbias").isEnabledFor(logging.DEBUG):
        return
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for pattern in _IGNORED_WARNINGS:
        warnings.filterwarnings("ignore", message=pattern)
    if "transformers" in sys.modules:  # imported before the variables were set
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


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

    A failure ends the sweep in one ``regbias: error:`` line (exit 2), before any job runs.
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
        exit_with(f"error: {error}", 2)


def check_output_folder(config: DictConfig, key: str) -> None:
    """Hydra's output folder (``key``: ``hydra.run.dir`` or ``hydra.sweep.dir``) can be written.

    Else one ``regbias: error:`` line (exit 2) instead of Hydra's tracebacks: a file is made and
    removed in the folder, or in the nearest one above it that exists, and its disk has at
    least :data:`MIN_FREE_MB` free (a full one failed only at the report's copy, with rc 0).
    """
    folder = Path(str(OmegaConf.select(config, key)))
    existing, free = free_mb(folder)
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        _refuse(f"cannot write the output folder {folder} ({existing}: {error.strerror})", key)
    if free < MIN_FREE_MB:
        _refuse(
            f"the disk of the output folder {folder} is full: {free:.0f} MB free in {existing}, "
            f"at least {MIN_FREE_MB} MB needed",
            key,
        )
    try:
        check_report_folder(folder / REPORT_FOLDER, key)
    except ConfigError as error:
        exit_with(f"error: {error}", 2)


def _refuse(problem: str, key: str) -> NoReturn:
    exit_with(
        f"error: {problem}: regbias writes its outputs, and by default its MLflow store and "
        "cache, under the folder it runs in; run it from another folder, or move the outputs "
        f"with {key}=/other/path (the store and cache with tracking.uri, "
        "tracking.artifact_root and paths.cache_dir)",
        2,
    )
