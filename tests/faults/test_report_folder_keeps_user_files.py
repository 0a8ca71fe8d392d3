"""Issue 56, item 1: a run never deletes files it did not write in its report folder.

It was ``shutil.rmtree`` on ``<output dir>/report/``: a user's ``notes.txt`` and ``thesis.tex``
there were gone after ``task=analyze ... hydra.run.dir=DIR`` (and a sweep's ``hydra.sweep.dir``).
"""

from __future__ import annotations

import pytest

from regbias.app import job
from regbias.app.job import JobContext
from regbias.app.summary import FreshRun
from regbias.errors import ConfigError
from regbias.report.report_folder import (
    MANIFEST,
    RUN_DIR_KEY,
    check_report_folder,
    open_staging,
    replace_report,
)
from regbias.tracking.run_log import RunLog
from tests.faults.conftest import finished_job_run, regbias_lines
from tests.faults.test_unwritable_folder import regbias_in_child


def _fill(files: dict[str, str]):
    def fill(staging):
        for name, text in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_text(text)

    return fill


def test_a_second_copy_replaces_only_its_own_files(tmp_path):
    folder = tmp_path / "report"
    replace_report(folder, _fill({"report.md": "one", "figures/a.png": "a"}), "hydra.run.dir")
    (folder / "figures" / "mine.png").write_text("the user's")  # added between two copies
    (folder / "notes.txt").write_text("the user's notes")
    replace_report(folder, _fill({"report.md": "two", "figures/b.png": "b"}), "hydra.run.dir")
    assert (folder / "report.md").read_text() == "two"
    assert not (folder / "figures" / "a.png").exists()  # the old copy's file is gone
    assert (folder / "figures" / "b.png").read_text() == "b"
    assert (folder / "figures" / "mine.png").read_text() == "the user's"
    assert (folder / "notes.txt").read_text() == "the user's notes"
    assert (folder / MANIFEST).read_text().splitlines() == ["figures/b.png", "report.md"]


def test_a_folder_of_the_users_is_refused_and_kept_whole(tmp_path):
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "notes.txt").write_text("n")
    (folder / "thesis.tex").write_text("t")
    with pytest.raises(ConfigError, match="holds files regbias did not write") as refused:
        replace_report(folder, _fill({"report.md": "x"}), "hydra.run.dir")
    assert "notes.txt, thesis.tex" in str(refused.value) and "hydra.run.dir=" in str(refused.value)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "thesis.tex"]
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no staging folder left


def test_a_new_file_never_overwrites_a_users_file_of_the_same_name(tmp_path):
    folder = tmp_path / "report"
    replace_report(folder, _fill({"report.md": "one"}), "hydra.run.dir")
    (folder / "table.csv").write_text("the user's table")
    with pytest.raises(ConfigError, match=r"\(table.csv\)"):
        replace_report(folder, _fill({"report.md": "two", "table.csv": "ours"}), "k")
    assert (folder / "table.csv").read_text() == "the user's table"


def test_an_empty_or_absent_folder_is_fine(tmp_path):
    check_report_folder(tmp_path / "absent", "k")
    (tmp_path / "empty").mkdir()
    check_report_folder(tmp_path / "empty", "k")


@pytest.mark.parametrize(
    ("mode", "key"), [([], "hydra.run.dir"), (["-m"], "hydra.sweep.dir")], ids=["run", "sweep"]
)
def test_a_users_report_folder_is_one_line_before_any_run(tmp_path, mode, key):
    report = tmp_path / "o" / "report"
    report.mkdir(parents=True)
    (report / "notes.txt").write_text("mine")
    code, err = regbias_in_child(*mode, "experiment=smoke", "task=describe", f"{key}={tmp_path}/o")
    assert code == 2, err[-2000:]
    (line,) = regbias_lines(err)
    assert line.startswith(f"regbias: error: the report folder {report} holds files regbias did")
    assert f"{key}=/other/path" in line and "Traceback" not in err
    assert (report / "notes.txt").read_text() == "mine"


def test_the_end_of_a_job_keeps_the_users_files(tmp_path, monkeypatch, capsys, store_dir):
    """The files appear while the job runs: the copy refuses in one line, exit 2, files kept."""
    cfg, run = finished_job_run(tmp_path, store_dir, "# report\n")
    (tmp_path / "out" / "report").mkdir(parents=True)
    (tmp_path / "out" / "report" / "thesis.tex").write_text("chapter 1")
    monkeypatch.setattr(job, "_dispatch", lambda cfg, context: run.run_id)
    monkeypatch.setattr(job, "job_context", lambda: JobContext(tmp_path / "out", None, None, []))
    with pytest.raises(SystemExit) as exit_:
        job.main(cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "holds files regbias did not write (thesis.tex)" in line
    assert (tmp_path / "out" / "report" / "thesis.tex").read_text() == "chapter 1"


def test_the_end_of_a_fresh_run_keeps_the_users_files_and_no_staging(
    tmp_path, monkeypatch, capsys, store_dir
):
    """A run this process wrote: its staging folder is refused at the move, then removed."""
    cfg, run = finished_job_run(tmp_path, store_dir, "# report\n")
    out = tmp_path / "out"
    staging = open_staging(out / "report", RUN_DIR_KEY)  # as the run's start opens it
    fresh = FreshRun(RunLog(run.client, run.run_id, local=staging), staging)
    fresh.run.text("# report\n", "report.md")
    (out / "report").mkdir()
    (out / "report" / "thesis.tex").write_text("chapter 1")  # appears while the job runs
    monkeypatch.setattr(job, "_dispatch", lambda cfg, context: fresh)
    monkeypatch.setattr(job, "job_context", lambda: JobContext(out, None, None, []))
    with pytest.raises(SystemExit) as exit_:
        job.main(cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "holds files regbias did not write (thesis.tex)" in line
    assert (out / "report" / "thesis.tex").read_text() == "chapter 1"
    assert not staging.exists() and not list(out.glob(".report-*"))
