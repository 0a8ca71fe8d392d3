"""One parent per sweep, also on rerun; the end of a run prints where everything is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.test_analyze_task import write_table
from tests.cli import run_cli, run_job, runs


def _parents(workdir: Path) -> list:
    return [r for r in runs(workdir) if r.data.tags.get("regbias.role") == "sweep"]


def test_analyze_prints_findings_and_where_the_report_is(tmp_path):
    # In this process (the task function run.py calls); the real command line's printing is
    # checked on the smoke sweep (tests/app/test_sweep.py).
    table = write_table(tmp_path / "pairs.csv")
    done = run_job(tmp_path, "task=analyze", f"analysis.analyze.input={table}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "regbias: results" in done.stdout
    # The report's Findings: the bottom line, then the questions (the primary's answer).
    assert "Bottom line. " in done.stdout
    assert "Is the primary hypothesis supported? " in done.stdout
    assert "rho = " in done.stdout
    assert "mlflow ui --backend-store-uri sqlite:///" in done.stdout
    assert "workflowType=machine_learning" in done.stdout
    (report,) = tmp_path.glob("out/**/report/report.md")
    assert (report.parent / "analysis" / "correlations.csv").is_file()
    (run,) = runs(tmp_path)
    assert "Is the primary hypothesis supported?" in run.data.tags["mlflow.note.content"]
    assert "corr/dist_sinkhorn_long/gap_accuracy/rho" in run.data.metrics


@pytest.mark.slow  # three sweeps of two jobs: about a minute
def test_rerun_of_a_sweep_reuses_its_parent(tmp_path):
    table = write_table(tmp_path / "pairs.csv")
    sweep = ["-m", "task=analyze", f"analysis.analyze.input={table}", "analysis.seed=0,1"]
    first = run_cli(tmp_path, *sweep)
    assert first.returncode == 0, first.stderr[-3000:]
    (parent,) = _parents(tmp_path)
    assert parent.info.run_name == "sentiment140 · minilm_l6 · default · 1 seed"
    assert parent.data.params["sweep.analysis.seed"] == "0,1"
    assert list(tmp_path.glob("multirun/*/*/report"))
    again = run_cli(tmp_path, *sweep)
    assert again.returncode == 0, again.stderr[-3000:]
    (reused,) = _parents(tmp_path)
    assert reused.info.run_id == parent.info.run_id
    assert reused.info.status == "FINISHED" and reused.data.tags["regbias.reopened"] == "1"
    fresh = run_cli(tmp_path, *sweep, "resume=false")
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    old, new = sorted(_parents(tmp_path), key=lambda r: r.info.start_time)
    assert old.data.tags["regbias.superseded_by"] == new.info.run_id
    assert new.data.tags["regbias.supersedes"] == old.info.run_id
