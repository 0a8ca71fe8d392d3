"""Item 15 of issue 20: Ctrl-C during a sweep's aggregation stops it, said in one line.

SQLAlchemy and MLflow lose a ``KeyboardInterrupt`` raised inside them ("Exception ignored")
or turn it into a long traceback; during the aggregation Ctrl-C sets the stop flag instead, the
next safe point ends the parent run FAILED, and the sweep exits 130 with "interrupted".
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from hydra._internal.callbacks import Callbacks

from regbias.app import sweep
from regbias.study import aggregate
from tests.faults.conftest import regbias_lines, runs_of


def ctrl_c_inside_a_library(swallowed: bool) -> None:
    """Ctrl-C arrives while a library runs; SQLAlchemy's clean-up may swallow it."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
    except KeyboardInterrupt:
        if not swallowed:
            raise


@pytest.mark.parametrize("swallowed", [True, False])
def test_ctrl_c_during_aggregation_fails_the_parent_and_exits_130(
    tmp_path, monkeypatch, capsys, sweep_config, swallowed
):
    cfg = sweep_config
    callbacks = Callbacks(cfg)
    callbacks.on_multirun_start(config=cfg)
    parent = json.loads((tmp_path / "sweep" / "regbias_parent.json").read_text())
    record = {"job_num": 0, "status": "FINISHED", "run_id": parent["run_id"], "variant": "v"}
    (tmp_path / "sweep" / "0").mkdir()
    record["launch"] = parent.get("launch")
    (tmp_path / "sweep" / "0" / "regbias_job.json").write_text(json.dumps(record))
    monkeypatch.setattr(
        aggregate, "aggregate_sweep", lambda *a, **k: ctrl_c_inside_a_library(swallowed)
    )
    monkeypatch.setattr(sweep, "finish_sweep", lambda *a, **k: None)
    with pytest.raises(SystemExit) as exit_:
        callbacks.on_multirun_end(config=cfg)
    assert exit_.value.code == 130
    assert regbias_lines(capsys.readouterr().err) == ["regbias: interrupted"]
    assert [r.info.status for r in runs_of(cfg)] == ["FAILED"]
