"""Step timings: accumulated per step, and a sweep's wall time set against them."""

from __future__ import annotations

import time

from regbias.study.timing import SweepTimes, process_started, timed


def test_timed_adds_up_a_step_run_twice() -> None:
    times: dict[str, float] = {}
    for _ in range(2):
        with timed(times, "analysis"):
            pass
    assert list(times) == ["analysis"] and times["analysis"] >= 0


def test_the_line_sets_the_total_against_the_steps_and_start_up() -> None:
    times = SweepTimes(
        steps={"distance_suite": 30.0, "performance": 10.0},
        jobs=2,
        aggregation={"analysis": 8.0, "report": 2.0},
        startup=10.0,
        total=72.0,
    )
    assert times.accounted == 60.0
    line = times.line()
    assert line.startswith("distance_suite 30.0 s, performance 10.0 s (summed over 2 jobs)")
    assert "aggregation 10.0 s (analysis 8.0 s, report 2.0 s)" in line
    assert line.endswith("start-up 10.0 s; total 1 min 12 s = 1.20x the steps and start-up")


def test_nothing_ran() -> None:
    assert SweepTimes().line() == "no stage ran (reused)"


def test_the_process_started_before_now() -> None:
    started = process_started()
    assert started is None or started <= time.time()
