"""Issue 46, fault list item 6: an output folder on a full disk is one line and a non-zero exit.

It was "Failed to download artifacts" (MLflow's words for a copy that found no space), rc 0,
no findings and no report.
"""

from __future__ import annotations

import re
from collections import namedtuple

import pytest

from regbias.app import job
from regbias.app.job import JobContext
from regbias.tracking import runs as runs_module
from tests.faults.conftest import finished_job_run, mounted_tmpfs, regbias_lines
from tests.faults.test_unwritable_folder import regbias_in_child

Usage = namedtuple("Usage", "total used free")


@pytest.mark.parametrize(
    ("mode", "key"), [([], "hydra.run.dir"), (["-m"], "hydra.sweep.dir")], ids=["run", "sweep"]
)
def test_an_output_folder_on_a_full_disk_is_one_line_before_any_run(
    tmp_path, monkeypatch, mode, key
):
    monkeypatch.setattr(runs_module.shutil, "disk_usage", lambda p: Usage(1, 1, 10 * 2**20))
    code, err = regbias_in_child(*mode, "experiment=smoke", "task=describe", f"{key}={tmp_path}/o")
    assert code == 2, err[-2000:]
    (line,) = regbias_lines(err)
    assert line.startswith(
        f"regbias: error: the disk of the output folder {tmp_path}/o is full: 10 MB free in "
        f"{tmp_path.resolve()}, at least 64 MB needed"
    )
    assert f"{key}=" in line and "Traceback" not in err


def test_a_disk_that_fills_during_the_report_copy_fails_the_job(
    tmp_path, monkeypatch, capsys, store_dir
):
    """The run ended FINISHED in MLflow; its local report copy meets a full disk: exit 1."""
    cfg, run = finished_job_run(tmp_path, store_dir, "x" * 2_000_000)  # 2 MB onto a 1 MB disk
    with mounted_tmpfs(tmp_path / "disk", "1m") as disk:
        monkeypatch.setattr(job, "_dispatch", lambda cfg, context: run.run_id)
        monkeypatch.setattr(job, "job_context", lambda: JobContext(disk / "out", None, None, []))
        with pytest.raises(SystemExit) as exit_:
            job.main(cfg)
    assert exit_.value.code == 1
    (line,) = regbias_lines(capsys.readouterr().err)
    # 0 or 1 MB: what the failed copy's clean-up gives back depends on tmpfs's block rounding
    pattern = rf"regbias: error: No space left on device \([01] MB free\) \({re.escape(str(disk))}"
    assert re.match(pattern, line), line
