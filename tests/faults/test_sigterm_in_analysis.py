"""Item 4 of issue 27: SIGTERM during a single run's analysis stops it, exit 143, run FAILED.

The analysis had no safe point: the flag SIGTERM sets was never read, the run finished and
exited 0. Relabellings, bootstrap resamples and planted power simulations are safe points now,
and a stop still pending when a tracked run's work returns fails the run.
"""

from __future__ import annotations

import os
import signal

import pytest

from regbias.analysis import permutations
from regbias.analysis.robustness import bootstrap
from regbias.interrupt import StopRequested, check_stop, request_stop
from regbias.study import analyze as analyze_task
from regbias.tracking.runs import start_run, tracked_run
from tests.app.test_analyze_task import write_table
from tests.cli import run_job, runs
from tests.faults.conftest import regbias_lines


def sigterm_then(function):
    """``function`` that first receives SIGTERM, as from a scheduler or ``timeout``."""

    def wrapped(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return function(*args, **kwargs)

    return wrapped


def analyze(tmp_path):
    return run_job(
        tmp_path, "task=analyze", f"analysis.analyze.input={write_table(tmp_path / 'p.csv')}"
    )


def test_sigterm_during_the_permutation_null_stops_the_analysis(tmp_path, monkeypatch):
    monkeypatch.setattr(permutations, "progress_bar", sigterm_then(permutations.progress_bar))
    resampled = []
    monkeypatch.setattr(bootstrap, "progress_bar", lambda *a, **k: resampled.append(a) or a[0])
    done = analyze(tmp_path)
    assert done.returncode == 143, done.stderr[-3000:]
    assert regbias_lines(done.stderr) == ["regbias: stopped by SIGTERM"]
    assert [r.info.status for r in runs(tmp_path)] == ["FAILED"]
    assert resampled == []  # stopped at the relabellings' safe point, before the bootstrap


def test_sigterm_during_the_bootstrap_stops_the_analysis(tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "progress_bar", sigterm_then(bootstrap.progress_bar))
    done = analyze(tmp_path)
    assert done.returncode == 143, done.stderr[-3000:]
    assert [r.info.status for r in runs(tmp_path)] == ["FAILED"]


def test_sigterm_after_the_last_safe_point_still_fails_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(analyze_task, "log_analysis", sigterm_then(analyze_task.log_analysis))
    done = analyze(tmp_path)
    assert done.returncode == 143, done.stderr[-3000:]
    assert [r.info.status for r in runs(tmp_path)] == ["FAILED"]


def test_a_tracked_run_with_a_pending_stop_ends_failed(store):
    client, experiment = store
    run = start_run(client, experiment, "job", {})
    with pytest.raises(StopRequested) as stop, tracked_run(run):
        request_stop(signal.SIGTERM)
    assert stop.value.code == 143
    assert client.get_run(run.run_id).info.status == "FAILED"
    with pytest.raises(StopRequested):
        check_stop()  # the stop stays pending for the process
