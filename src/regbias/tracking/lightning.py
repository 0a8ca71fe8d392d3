"""Stage I's records into the job's MLflow run: the Lightning logger and the stage's sink."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

import torch
from lightning.pytorch.loggers import Logger, MLFlowLogger

from regbias.tracking.artifacts import MODELS_FOLDER
from regbias.tracking.run_log import RunLog


class JobRunLogger(MLFlowLogger):
    """Lightning's MLflow logger writing into the job's own run, which it never ends."""

    def finalize(self, status: str = "success") -> None:
        """Leave the run open: the job ends it once, when the job does."""
        return None

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log metrics, with Lightning's ``epoch`` under the fold's prefix (``fold0/epoch``)."""
        prefixes = {key.split("/", 1)[0] for key in metrics if "/" in key}
        if "epoch" in metrics and len(prefixes) == 1:
            metrics = dict(metrics)
            metrics[f"{prefixes.pop()}/epoch"] = metrics.pop("epoch")
        super().log_metrics(metrics, step)


class RunPerformanceSink:
    """A :class:`regbias.performance.stage.PerformanceSink` that writes into one job's run."""

    def __init__(self, run: RunLog) -> None:
        self.run = run
        self._logger = JobRunLogger(
            tracking_uri=run.tracking_uri, run_id=run.run_id, log_model=False
        )

    @property
    def logger(self) -> Logger:
        """The job run's Lightning logger."""
        return self._logger

    def metrics(self, values: Mapping[str, float]) -> None:
        """Log ``values`` as metrics of the run."""
        if values:
            self.run.metrics(dict(values))

    def model(self, seed: int, fold: int, module: torch.nn.Module) -> None:
        """Log one fine-tuned model's weights under ``models/``."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"seed{seed}_fold{fold}.pt"
            torch.save(module.state_dict(), path)
            self.run.file(path, MODELS_FOLDER)
