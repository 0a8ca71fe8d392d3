"""Readable output: third-party progress bars and start-up chatter off unless asked for.

A job prints one line per stage with its time; MLflow's "Downloading artifacts" bars, Hugging
Face's "Loading weights" bars, MLflow's database-migration lines and Lightning's banners stay
out of it. ``hydra.verbose=true`` (or ``hydra.verbose=[regbias]``) brings them back, together
with regbias's own debug lines (one per fold, ...).
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

__all__ = ["ALWAYS_QUIET_LOGGERS", "QUIET_ENV", "QUIET_LOGGERS", "quiet_libraries", "verbose"]

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


def verbose() -> bool:
    """Whether the user asked for more output (``hydra.verbose`` set regbias to DEBUG)."""
    return logging.getLogger("regbias").isEnabledFor(logging.DEBUG)


def quiet_libraries() -> None:
    """Silence third-party bars and chatter in this process and the jobs it starts.

    Does nothing when :func:`verbose` is true; variables the user set are kept.
    """
    if verbose():
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
