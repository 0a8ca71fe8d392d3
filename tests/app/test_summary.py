"""The end of a single run: its report moved in from where it was written, never downloaded."""

from __future__ import annotations

from pathlib import Path

from mlflow.tracking import MlflowClient

from regbias.tracking.artifacts import NOT_IN_REPORT
from tests.app.test_analyze_task import write_table
from tests.cli import run_job, runs


def _store_files(client: MlflowClient, run_id: str, path: str | None = None) -> set[str]:
    found: set[str] = set()
    for item in client.list_artifacts(run_id, path):
        if item.path.split("/")[0] in NOT_IN_REPORT:
            continue
        found |= _store_files(client, run_id, item.path) if item.is_dir else {item.path}
    return found


def test_a_fresh_runs_report_is_what_it_logged_and_nothing_is_read_back(tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("the end of a fresh run read its artifacts back from the store")

    monkeypatch.setattr(MlflowClient, "download_artifacts", refused)
    table = write_table(tmp_path / "pairs.csv")
    done = run_job(tmp_path, "task=analyze", f"analysis.analyze.input={table}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "could not write the run's summary" not in done.stderr
    monkeypatch.undo()
    (run,) = runs(tmp_path)
    report = tmp_path / "out" / "report"
    local = {
        p.relative_to(report).as_posix()
        for p in report.rglob("*")
        if p.is_file() and p.name != ".regbias-report"
    }
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns.db")
    assert local == _store_files(client, run.info.run_id)
    assert {"report.md", "report.html", "analysis/correlations.csv"} <= local
    assert not list((tmp_path / "out").glob(".report-*"))  # the staging folder is gone
    page = (report / "report.md").read_text(encoding="utf-8")
    logged = Path(client.download_artifacts(run.info.run_id, "report.md", str(tmp_path / "d")))
    assert page == logged.read_text(encoding="utf-8")
