"""Step timings: accumulated per step, and a sweep's wall time set against them."""

from __future__ import annotations

import time

import pytest

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


def _logged(caplog, work) -> tuple[float, float, float]:
    """The wall seconds, CPU seconds and cores busy that :func:`timed` logs for ``work``."""
    caplog.clear()
    with caplog.at_level("INFO", logger="regbias.study.timing"), timed({}, "step"):
        work()
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith("step took ")
    wall = float(message.split("took ")[1].split(" s")[0])
    cpu = float(message.split("(CPU ")[1].split(" s,")[0])
    return wall, cpu, float(message.split(", ")[-1].split(" cores busy")[0])


def _spin(seconds: float) -> None:
    """Use ``seconds`` of this process's CPU time (its wall time grows on a busy machine)."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_log_line_says_how_many_cores_the_step_kept_busy(caplog) -> None:
    # A waiting step keeps no core busy, a computing one does: what says whether overlapping
    # steps could gain anything (docs/scale.md, "Where the cores go"). The bounds leave room
    # for another thread of the test process that wakes meanwhile.
    _, cpu, busy = _logged(caplog, lambda: time.sleep(0.3))
    assert cpu < 0.15 and busy < 0.5
    wall, cpu, busy = _logged(caplog, lambda: _spin(0.3))  # slower, not less, on a busy machine
    assert cpu >= 0.3 and busy == pytest.approx(cpu / wall, rel=0.25)
