"""Issue 46, fault list item 6: two Ctrl-C 0.3 s apart stop cleanly, with no traceback.

The first Ctrl-C stops the job; the second landed in a ``finally`` that closes the run (left
RUNNING) or in an exit handler (JAX's printed a ``KeyboardInterrupt`` traceback).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from regbias.tracking.runs import start_run, tracked_run
from tests.cli import ROOT

# A job whose first Ctrl-C comes during its work and the second during the exit handlers
# (registered after JAX's, so it runs before them: atexit runs the last one first).
CHILD = textwrap.dedent(
    """
    import atexit, os, signal, time
    import jax
    from regbias.app import job
    from tests.faults.conftest import composed

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal

    def second_ctrl_c():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)

    def first_ctrl_c(cfg, context):
        atexit.register(second_ctrl_c)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)

    job._dispatch = first_ctrl_c
    job.main(composed())
    """
)


def test_a_second_ctrl_c_at_exit_prints_no_traceback(tmp_path):
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 130, done.stderr[-3000:]
    assert done.stderr.strip() == "regbias: interrupted", done.stderr[-3000:]


def test_a_second_ctrl_c_while_the_run_closes_leaves_it_failed(store, monkeypatch):
    client, experiment_id = store
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
    run = start_run(client, experiment_id, "job", {})
    close = client.set_terminated

    def second_ctrl_c(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return close(*args, **kwargs)

    monkeypatch.setattr(client, "set_terminated", second_ctrl_c)
    with pytest.raises(KeyboardInterrupt), tracked_run(run):
        raise KeyboardInterrupt
    assert client.get_run(run.run_id).info.status == "FAILED"
