"""first_hour's steps carry their CPU seconds, so a table says how busy the cores were."""

from __future__ import annotations

import os
import sys

from tests.benchmark_module import load_benchmark

first_hour = load_benchmark("first_hour")


def _seconds(tmp_path, code: str) -> tuple[float, float]:
    command = [sys.executable, "-c", code]
    return first_hour.timed_command(command, tmp_path, dict(os.environ), tmp_path / "log")


def test_a_child_that_computes_counts_its_cpu_and_one_that_waits_does_not(tmp_path) -> None:
    # Spun until the child itself has used 0.5 CPU seconds: a busy machine slows it, no more.
    spin = "import time\nwhile time.process_time() < 0.5: pass"
    wall, cpu = _seconds(tmp_path, spin)
    assert 0.5 <= cpu <= wall + 0.1
    wall, cpu = _seconds(tmp_path, "import time; time.sleep(0.5)")
    assert wall >= 0.5 and cpu < 0.3


def test_the_row_gives_cpu_seconds_and_cores_busy() -> None:
    step = first_hour.Timed("job, cold cache", 280.8, 0.2, 1.9, cpu_seconds=497.0)
    assert step.row() == "| job, cold cache | 280.8 | 4 min 41 s | 497 | 1.77 | 0.2 / 1.9 |"
