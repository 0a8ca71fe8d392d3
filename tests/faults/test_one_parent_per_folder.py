"""Item 2 of issue 27: a second sweep while the first runs never gives one folder two parents.

A second sweep in the same ``hydra.sweep.dir`` (same store and cache) opened a new parent,
marked the live one superseded and overwrote the folder's parent file, so the first sweep's
end closed the second's parent and its own stayed RUNNING. A live owner now means: refuse in
one line naming it; and each sweep's end closes the parent it opened.
"""

from __future__ import annotations

import atexit
import json
import os
import re
from pathlib import Path

import pytest
from hydra._internal.callbacks import Callbacks
from mlflow.tracking import MlflowClient

from regbias.app import sweep
from regbias.study import aggregate
from tests.faults.conftest import composed, regbias_lines, runs_of


def sweep_config(tmp_path, store_dir, folder="sweep", *overrides):
    return composed(
        f"hydra.sweep.dir={tmp_path}/{folder}",
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
        *overrides,
        hydra=True,
    )


@pytest.fixture
def quick_end(monkeypatch):
    """A sweep's end without jobs to pool or a summary to print."""
    monkeypatch.setattr(aggregate, "aggregate_sweep", lambda *a, **k: aggregate.SweepResult())
    monkeypatch.setattr(sweep, "finish_sweep", lambda *a, **k: None)


def parent_record(cfg):
    return json.loads((tmp_folder(cfg) / "regbias_parent.json").read_text())


def tmp_folder(cfg):
    return Path(cfg.hydra.sweep.dir)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ((), "a sweep in .*/sweep is running now"),  # the same sweep again
        (("seed=7",), "a sweep in .*/sweep is running now"),  # another sweep, same folder
    ],
)
def test_a_second_sweep_in_a_live_sweeps_folder_is_refused_naming_it(
    tmp_path, store_dir, capsys, quick_end, second, message
):
    first_cfg = sweep_config(tmp_path, store_dir)
    first = Callbacks(first_cfg)
    first.on_multirun_start(config=first_cfg)
    written = parent_record(first_cfg)
    cfg = sweep_config(tmp_path, store_dir, "sweep", *second)
    with pytest.raises(SystemExit) as exit_:
        Callbacks(cfg).on_multirun_start(config=cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert f"parent run {written['run_id']}, owned by pid {os.getpid()} on host" in line
    assert line.startswith("regbias: error: ") and re.search(message, line)
    assert parent_record(first_cfg) == written  # the folder still names the first's parent
    assert [r.info.status for r in runs_of(first_cfg)] == ["RUNNING"]
    first.on_multirun_end(config=first_cfg)
    (run,) = runs_of(first_cfg)
    assert run.info.status == "FINISHED" and "regbias.superseded_by" not in run.data.tags


def test_the_same_sweep_in_another_folder_is_refused_while_it_runs(
    tmp_path, store_dir, capsys, quick_end
):
    first_cfg = sweep_config(tmp_path, store_dir, "one")
    first = Callbacks(first_cfg)
    first.on_multirun_start(config=first_cfg)
    cfg = sweep_config(tmp_path, store_dir, "two")
    with pytest.raises(SystemExit):
        Callbacks(cfg).on_multirun_start(config=cfg)
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "the same sweep (same config, overrides and code) is running now" in line
    first.on_multirun_end(config=first_cfg)
    assert [r.info.status for r in runs_of(first_cfg)] == ["FINISHED"]


def test_a_sweeps_end_closes_the_parent_it_opened_not_the_folders_newest(
    tmp_path, store_dir, quick_end
):
    cfg = sweep_config(tmp_path, store_dir)
    callbacks = Callbacks(cfg)
    callbacks.on_multirun_start(config=cfg)
    mine = parent_record(cfg)
    stranger = {**mine, "run_id": "0" * 32, "launch": "another"}
    (tmp_folder(cfg) / "regbias_parent.json").write_text(json.dumps(stranger))
    callbacks.on_multirun_end(config=cfg)
    (run,) = runs_of(cfg)
    assert (run.info.run_id, run.info.status) == (mine["run_id"], "FINISHED")


def test_a_dead_sweeps_folder_is_taken_over(tmp_path, store_dir, quick_end):
    first_cfg = sweep_config(tmp_path, store_dir)
    first = Callbacks(first_cfg)
    first.on_multirun_start(config=first_cfg)
    (run,) = runs_of(first_cfg)
    client = MlflowClient(first_cfg.tracking.uri)
    client.set_tag(run.info.run_id, "regbias.owner.pid", "999999999")  # a process long gone
    cfg = sweep_config(tmp_path, store_dir, "sweep", "seed=7")
    second = Callbacks(cfg)
    second.on_multirun_start(config=cfg)
    assert parent_record(cfg)["run_id"] != run.info.run_id
    second.on_multirun_end(config=cfg)
    assert client.get_run(run.info.run_id).info.status == "FAILED"  # reaped: its owner died
    for callback in first.callbacks:  # the first "died": its exit hook must not run
        atexit.unregister(callback._close_if_open)
