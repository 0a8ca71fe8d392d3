"""Items 6-9 of issue 10 and Ctrl-C: failures that must fail, and runs that must not stay open."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import sqlalchemy.exc
from hydra._internal.callbacks import Callbacks
from mlflow.tracking import MlflowClient

from regbias.app import job
from regbias.app.job import JobContext
from regbias.interrupt import (
    StopRequested,
    check_stop,
    request_stop,
    stop_flag,
)
from regbias.performance import trainer
from regbias.study import aggregate
from regbias.tracking.reaper import OWNER_HOST, OWNER_PID, OWNER_START, reap_dead_runs
from regbias.tracking.runs import start_run, store_lock, tracked_run
from tests.faults.conftest import composed, regbias_lines, runs_of
from tests.settings import packaged_sinkhorn

# Item 6: Hydra turns a callback's exception into a warning; the sweep must fail instead.


def test_failed_aggregation_exits_non_zero_in_one_line(tmp_path, monkeypatch, capsys, sweep_config):
    cfg = sweep_config
    callbacks = Callbacks(cfg)  # Hydra's own dispatcher, which catches Exception
    callbacks.on_multirun_start(config=cfg)
    parent = json.loads((tmp_path / "sweep" / "regbias_parent.json").read_text())
    record = {"job_num": 0, "status": "FINISHED", "run_id": parent["run_id"], "variant": "v"}
    (tmp_path / "sweep" / "0").mkdir()
    (tmp_path / "sweep" / "0" / "regbias_job.json").write_text(json.dumps(record))

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(aggregate, "aggregate_sweep", disk_full)
    with pytest.raises(SystemExit) as exit_:
        callbacks.on_multirun_end(config=cfg)
    assert exit_.value.code == 1
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "aggregation failed" in line and "No space left on device" in line
    assert [r.info.status for r in runs_of(cfg)] == ["FAILED"]


def test_parent_that_cannot_be_created_stops_the_sweep(tmp_path, monkeypatch, capsys, sweep_config):
    def read_only(*args, **kwargs):
        raise sqlalchemy.exc.OperationalError(
            "INSERT INTO runs", {}, Exception("attempt to write a readonly database")
        )

    monkeypatch.setattr(MlflowClient, "create_run", read_only)
    cfg = sweep_config
    with pytest.raises(SystemExit) as exit_:
        Callbacks(cfg).on_multirun_start(config=cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "cannot create a run in the MLflow store" in line and "readonly" in line
    assert not (tmp_path / "sweep" / "regbias_parent.json").exists()


def test_missing_data_directory_stops_the_sweep_once(tmp_path, monkeypatch, capsys, sweep_config):
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "nowhere"))
    cfg = sweep_config
    with pytest.raises(SystemExit) as exit_:
        Callbacks(cfg).on_multirun_start(config=cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "does not exist" in line and "nowhere" in line
    assert runs_of(cfg) == []  # no parent, no job: it never started


# Item 7: runs whose process died are closed FAILED on the next start.


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def owned_run(client, experiment, pid, host=None, start="1"):
    tags = {OWNER_PID: str(pid), OWNER_HOST: host or socket.gethostname(), OWNER_START: start}
    return client.create_run(experiment, tags=tags).info.run_id


def test_runs_of_dead_owners_are_closed_live_ones_kept(store):
    client, experiment = store
    dead = owned_run(client, experiment, dead_pid())
    recycled = owned_run(client, experiment, os.getpid(), start="1")  # pid reused by someone
    elsewhere = owned_run(client, experiment, dead_pid(), host="another-host")
    alive = start_run(client, experiment, "live", {}).run_id
    assert sorted(reap_dead_runs(client, experiment)) == sorted([dead, recycled])
    status = {r: client.get_run(r).info.status for r in (dead, recycled, elsewhere, alive)}
    assert status == {dead: "FAILED", recycled: "FAILED", elsewhere: "RUNNING", alive: "RUNNING"}
    assert client.get_run(dead).data.tags["error.type"] == "owner process died"


def test_sweep_start_closes_a_killed_sweeps_runs_and_says_so(capsys, sweep_config):
    cfg = sweep_config
    Callbacks(cfg).on_multirun_start(config=cfg)
    client = MlflowClient(cfg.tracking.uri)
    (old,) = runs_of(cfg)
    client.set_tag(old.info.run_id, OWNER_PID, str(dead_pid()))  # as if SIGKILLed
    capsys.readouterr()
    Callbacks(cfg).on_multirun_start(config=cfg)  # the rerun
    lines = regbias_lines(capsys.readouterr().err)
    assert lines == [f"regbias: marked 1 run(s) FAILED whose process had died: {old.info.run_id}"]
    # The rerun of the same sweep then reopens that parent (one parent per sweep), now owned
    # by the live process.
    rerun = client.get_run(old.info.run_id)
    assert rerun.info.status == "RUNNING" and rerun.data.tags["regbias.reopened"] == "1"
    assert rerun.data.tags[OWNER_PID] == str(os.getpid())


KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from regbias.tracking.runs import TrackingSettings, connect, start_run
    settings = TrackingSettings(sys.argv[1], sys.argv[2], sys.argv[3], False, None)
    client, experiment = connect(settings)
    print(start_run(client, experiment, "doomed", {}).run_id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


@pytest.mark.slow
def test_sigkilled_process_leaves_a_run_the_next_start_closes(tmp_path, store, store_dir):
    uri = f"sqlite:///{store_dir}/mlruns.db"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, uri, str(tmp_path / "art"), tmp_path.name],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    run_id = done.stdout.strip()
    client, experiment = store
    assert client.get_run(run_id).info.status == "RUNNING"
    assert reap_dead_runs(client, experiment) == [run_id]
    assert client.get_run(run_id).info.status == "FAILED"


# Item 8: SIGTERM sets a flag; safe points stop the job, and the sweep with it.

libc = ctypes.CDLL(None)
COMPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


def sigterm_inside_a_c_callback():
    """SIGTERM arriving while C code (qsort, as numba/llvmlite do) runs a Python callback."""
    sent = []

    def compare(a, b):
        if not sent:
            sent.append(os.kill(os.getpid(), signal.SIGTERM))
            time.sleep(0.05)  # the handler runs here, inside the callback
        return 0

    values = (ctypes.c_int * 4)(4, 3, 2, 1)
    libc.qsort(values, 4, ctypes.sizeof(ctypes.c_int), COMPARE(compare))


def test_sigterm_in_a_c_callback_is_not_lost(capsys):
    with stop_flag():
        sigterm_inside_a_c_callback()
        with pytest.raises(StopRequested) as stop:
            check_stop()  # the next safe point
    assert stop.value.code == 128 + signal.SIGTERM
    assert "Exception ignored" not in capsys.readouterr().err


def test_stop_at_a_safe_point_fails_the_run_and_the_sweeps_parent(store):
    client, experiment = store
    run = start_run(client, experiment, "job", {})
    aborted = []
    with pytest.raises(StopRequested), tracked_run(run, on_abort=lambda: aborted.append(1)):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        check_stop()
    assert client.get_run(run.run_id).info.status == "FAILED" and aborted == [1]


def sweep_job(tmp_path, monkeypatch, work):
    """``job.main`` as job 0 of a sweep, with ``work`` as its task."""
    context = JobContext(tmp_path / "0", tmp_path, 0, [])
    monkeypatch.setattr(job, "job_context", lambda: context)
    monkeypatch.setattr(job, "_dispatch", lambda cfg, ctx: work())
    return context


def test_stop_in_a_sweep_job_stops_the_sweep(tmp_path, monkeypatch, capsys):
    def work():
        request_stop()  # SIGTERM during the job
        check_stop()

    sweep_job(tmp_path, monkeypatch, work)
    with pytest.raises(StopRequested):
        job.main(composed())  # not recorded as one failed job while the sweep goes on
    assert regbias_lines(capsys.readouterr().err) == ["regbias: stopped by SIGTERM"]


def test_pending_stop_starts_no_next_job(tmp_path, monkeypatch):
    started = []
    sweep_job(tmp_path, monkeypatch, lambda: started.append(1))
    request_stop()
    with pytest.raises(StopRequested):
        job.main(composed())
    assert started == []


def test_sinkhorn_stops_between_solves():
    import numpy as np

    from regbias.distances.sinkhorn import sinkhorn_matrix

    rng = np.random.default_rng(0)
    draws = [{g: rng.normal(size=(6, 3)) for g in "abc"}]
    request_stop()
    with pytest.raises(StopRequested):
        sinkhorn_matrix(draws, packaged_sinkhorn(epsilon=1.0, anneal=False), progress=False)


def test_training_stops_after_the_current_batch():
    request_stop()
    with pytest.raises(StopRequested):
        trainer._StopCheck().on_train_batch_end()


# Item 10 (Ctrl-C): "interrupted", runs FAILED, exit 130, also inside Lightning.


@pytest.mark.parametrize("in_sweep", [False, True])
def test_ctrl_c_prints_interrupted_and_exits_130(tmp_path, monkeypatch, capsys, in_sweep):
    def work():
        raise KeyboardInterrupt

    sweep_job(tmp_path, monkeypatch, work)
    if not in_sweep:
        monkeypatch.setattr(job, "job_context", lambda: JobContext(tmp_path, None, None, []))
    with pytest.raises(SystemExit) as exit_:
        job.main(composed())
    assert exit_.value.code == 130
    assert regbias_lines(capsys.readouterr().err) == ["regbias: interrupted"]


class InterruptedTrainer:
    """What Lightning does on Ctrl-C: mark itself interrupted and ``sys.exit(1)``."""

    interrupted = True

    def fit(self, *args, **kwargs):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise SystemExit(1)


def test_ctrl_c_during_training_stays_a_keyboard_interrupt():
    with pytest.raises(KeyboardInterrupt):
        trainer._fit(InterruptedTrainer(), None, None)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# Item 9: a fresh SQLite store is created once, under a lock.


def test_schema_creation_is_serialised_by_a_file_lock(tmp_path):
    uri = f"sqlite:///{tmp_path}/mlruns.db"
    order = []

    def second():
        with store_lock(uri):
            order.append("second")

    with store_lock(uri):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.3)
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"]


RACER = textwrap.dedent(
    """
    import sys, time
    from regbias.tracking.runs import TrackingSettings, connect, start_run
    while time.time() < float(sys.argv[3]):
        time.sleep(0.005)
    client, experiment = connect(TrackingSettings(sys.argv[1], sys.argv[2], "race", False, None))
    print(start_run(client, experiment, "sweep", {}).run_id)
    """
)


@pytest.mark.slow
def test_two_sweeps_starting_at_once_on_a_fresh_store_both_get_parents(tmp_path):
    uri = f"sqlite:///{tmp_path}/mlruns.db"
    at = str(time.time() + 8)  # both past their imports, then at the same instant
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, uri, str(tmp_path / "art"), at],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [racer.communicate(timeout=120) for racer in racers]
    assert [r.returncode for r in racers] == [0, 0], [err[-1500:] for _, err in outputs]
    assert len({out.strip() for out, _ in outputs}) == 2
