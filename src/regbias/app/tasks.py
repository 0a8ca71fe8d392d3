"""The values of ``task=``, defined once: what each reads and logs, and the function that does it.

A new task is one :class:`Task` here and its function; the job (:mod:`regbias.app.job`), the
sweep's callbacks, the data-on-first-use check and the cluster checks read these flags.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from regbias.errors import ConfigError


@dataclass(frozen=True)
class Task:
    """One value of ``task=``.

    Attributes:
        name: the value (``task=<name>``).
        does: what it does, in a few words (for help and errors).
        entry: ``module:function``: ``function(settings, run)`` if tracked, else ``(settings)``.
        reads_data: it reads the dataset (which is then downloaded on first use).
        tracked: it runs inside an MLflow run (a sweep's child run).
        resumable: a FINISHED run with the same config is reused (``resume=true``).
        pooled_in_sweep: in a sweep the function gets ``pooled=True``: the parent analyses.
        prints_summary: a single run ends with its report's summary (``finish_job``).
        loads_encoder: the model's packages are checked before any run.
    """

    name: str
    does: str
    entry: str
    reads_data: bool
    tracked: bool
    resumable: bool = False
    pooled_in_sweep: bool = False
    prints_summary: bool = False
    loads_encoder: bool = False

    def function(self) -> Callable[..., Any]:
        """The function that does the task (imported on first use: they pull in torch, JAX)."""
        module, _, name = self.entry.partition(":")
        return getattr(importlib.import_module(module), name)


#: Every task, by name, in the order help lists them.
TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            "run",
            "the study's stages",
            "regbias.study.pipeline:run_pipeline",
            reads_data=True,
            tracked=True,
            resumable=True,
            pooled_in_sweep=True,
            prints_summary=True,
            loads_encoder=True,
        ),
        Task(
            "describe",
            "one row per group",
            "regbias.app.describe:describe_job",
            reads_data=True,
            tracked=False,
        ),
        Task(
            "analyze",
            "re-analyse a pairwise table",
            "regbias.study.analyze:run_analysis",
            reads_data=False,
            tracked=True,
            prints_summary=True,
        ),
        Task(
            "power",
            "what each pair test can detect",
            "regbias.study.power:run_power",
            reads_data=True,
            tracked=True,
            loads_encoder=True,
        ),
    )
}
#: The tasks that read a dataset.
DATA_TASKS: tuple[str, ...] = tuple(name for name, task in TASKS.items() if task.reads_data)
#: The tasks that log an MLflow run.
TRACKED_TASKS: tuple[str, ...] = tuple(name for name, task in TASKS.items() if task.tracked)


def task_named(name: object) -> Task:
    """The task ``task=<name>`` asks for.

    Raises:
        ConfigError: not a task; the message lists them.
    """
    if isinstance(name, str) and name in TASKS:
        return TASKS[name]
    listed = "; ".join(f"{t.name} ({t.does})" for t in TASKS.values())
    raise ConfigError(f"unknown task '{name}': use one of {listed} (task=...)")
