"""Issue 56, item 12: a Ctrl-C whose ``KeyboardInterrupt`` is swallowed still stops the job.

One Ctrl-C landed in JAX's gc callback: Python printed "Exception ignored" and dropped the
``KeyboardInterrupt``, and the job ran on for 6 minutes. The command's Ctrl-C handler sets the
stop flag before it raises, so the next safe point (``check_stop``) stops the job, exit 130.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from regbias.interrupt import StopRequested, check_stop, ctrl_c_raises, interrupted_exits
from tests.cli import ROOT

# The job's work: a Ctrl-C raised inside a gc callback (dropped by Python), then the safe
# points of a stage for 5 s.
CHILD = textwrap.dedent(
    """
    import gc, os, runpy, signal, sys, time
    from regbias.app import job
    from regbias.interrupt import check_stop

    sent = []

    def ctrl_c_in_a_gc_callback(phase, info):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the KeyboardInterrupt is raised here, and gc drops it

    def work(cfg, context):
        gc.callbacks.append(ctrl_c_in_a_gc_callback)
        gc.collect()
        gc.callbacks.remove(ctrl_c_in_a_gc_callback)
        print("the work goes on", file=sys.stderr)
        for _ in range(50):
            check_stop()
            time.sleep(0.1)
        print("kept running", file=sys.stderr)

    job._dispatch = work
    sys.argv = ["run.py", "experiment=smoke", "tracking.uri=sqlite:///mlruns.db"]
    runpy.run_path({run_py!r}, run_name="__main__")
    """
)


def test_a_ctrl_c_swallowed_in_a_gc_callback_stops_the_job_at_the_next_safe_point(tmp_path):
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env["REGBIAS_OFFLINE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(run_py=str(ROOT / "run.py"))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "the work goes on" in done.stderr, done.stderr[-3000:]  # it was swallowed
    assert "kept running" not in done.stderr
    assert done.returncode == 130, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == "regbias: interrupted"


def test_the_handler_sets_the_stop_flag_before_it_raises():
    """In this process: the ``KeyboardInterrupt`` caught and dropped, the flag stays set."""
    before = signal.getsignal(signal.SIGINT)
    with ctrl_c_raises():  # a job's work
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            pass  # what a callback's caller does with it
        with pytest.raises(StopRequested) as stop:
            check_stop()  # the next safe point
    assert stop.value.code == 130 and str(stop.value) == "interrupted"
    assert signal.getsignal(signal.SIGINT) is before  # pytest's handler, back


def test_a_ctrl_c_before_the_jobs_work_is_raised_when_it_starts(capsys):
    """While Hydra composes (no job's work yet) Ctrl-C only sets the flag; the work's start
    raises it, before the study is imported: one line, 130."""
    with pytest.raises(SystemExit) as exit_, interrupted_exits():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # nothing raised here, where OmegaConf would be left half-changed
        with ctrl_c_raises():
            pytest.fail("the job's work started after a Ctrl-C")
    assert exit_.value.code == 130
    assert capsys.readouterr().err.strip() == "regbias: interrupted"


def test_a_ctrl_c_after_the_last_safe_point_still_exits_130(capsys):
    with pytest.raises(SystemExit) as exit_, interrupted_exits():
        with ctrl_c_raises():
            pass
        os.kill(os.getpid(), signal.SIGINT)  # the sweep's last writes, Hydra's teardown
        time.sleep(0.2)
    assert exit_.value.code == 130
    assert capsys.readouterr().err.strip() == "regbias: interrupted"


def test_a_second_ctrl_c_outside_a_jobs_work_raises_at_once(capsys):
    with pytest.raises(SystemExit) as exit_, interrupted_exits():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        pytest.fail("a second Ctrl-C did not raise")
    assert exit_.value.code == 130
    assert capsys.readouterr().err.strip() == "regbias: interrupted"
