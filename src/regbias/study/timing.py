"""Wall time per step: of a job (``time/<step>_s``), of a sweep's end, of the whole process.

A summary sets the wall time against the sum of the steps and the start-up, so time no step
accounts for shows instead of hiding between the jobs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from regbias.tracking.reaper import process_start

log = logging.getLogger(__name__)
# When this process began setting up each run it started (``time.time()``), by run id.
_SET_UP_AT: dict[str, float] = {}


def note_job_set_up(run_id: str, began: float) -> None:
    """Record that this process set up ``run_id``, beginning at ``began`` (``time.time()``)."""
    _SET_UP_AT[run_id] = began


def job_set_up_at(run_id: str) -> float | None:
    """When this process began setting up ``run_id``; None for a run it did not start."""
    return _SET_UP_AT.get(run_id)


@contextmanager
def timed(times: dict[str, float], step: str) -> Iterator[None]:
    """Add the block's wall seconds to ``times[step]`` and log them.

    The log line also gives the process's CPU seconds in the block (every thread's) and the
    cores that kept busy on average: a step near the machine's core count gains nothing from
    running beside another.
    """
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        times[step] = times.get(step, 0.0) + seconds
        busy = cpu / seconds if seconds > 0 else 0.0
        log.info("%s took %.1f s (CPU %.1f s, %.2f cores busy)", step, seconds, cpu, busy)


def process_started() -> float | None:
    """When this process started (``time.time()`` seconds), from ``/proc``; None elsewhere."""
    try:
        ticks = int(process_start(os.getpid()) or "")
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def format_seconds(seconds: float) -> str:
    """``42.1 s``, ``3 min 05 s``, ``1 h 02 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


@dataclass
class SweepTimes:
    """Where a sweep's wall time went.

    Attributes:
        steps: seconds per job step (``time/<step>_s``), summed over the jobs that ran.
        jobs: how many jobs ran (reused jobs cost nothing now).
        aggregation: seconds per step of the sweep's end.
        startup: from the process's start to the first job's run.
        total: from the process's start (or the sweep's) to now.
    """

    steps: dict[str, float] = field(default_factory=dict)
    jobs: int = 0
    aggregation: dict[str, float] = field(default_factory=dict)
    startup: float | None = None
    total: float | None = None

    @property
    def accounted(self) -> float:
        """The steps, the aggregation and the start-up together."""
        return sum(self.steps.values()) + sum(self.aggregation.values()) + (self.startup or 0)

    def line(self) -> str:
        """One summary line: each step, the aggregation's, start-up, total against the sum."""
        stages = ", ".join(f"{k} {format_seconds(v)}" for k, v in self.steps.items())
        text = stages or "no stage ran (reused)"
        if self.jobs > 1:
            text += f" (summed over {self.jobs} jobs)"
        if self.aggregation:
            parts = ", ".join(f"{k} {format_seconds(v)}" for k, v in self.aggregation.items())
            text += f"; aggregation {format_seconds(sum(self.aggregation.values()))} ({parts})"
        if self.startup is not None:
            text += f"; start-up {format_seconds(self.startup)}"
        if self.total is not None:
            text += f"; total {format_seconds(self.total)}"
            if self.accounted > 0:
                ratio = self.total / self.accounted
                text += f" = {ratio:.2f}x the steps and start-up"
        return text
