"""What the MLflow UI shows, through the UI server's own REST API (``mlflow server``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from regbias.app.settings import read_settings
from regbias.app.summary import finish_job
from regbias.tracking.runs import EXPERIMENT_KIND, RunLog, connect, start_run
from tests.app.test_user_path import report_folder
from tests.conftest import compose_config


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(base: str, path: str) -> dict:
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as response:
        return json.loads(response.read())


def _post(base: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"{base}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture
def finished_run(tmp_path: Path, capsys) -> tuple[str, str, str]:
    """A run with a report's tables, finished through the end-of-run path."""
    uri = f"sqlite:///{tmp_path}/mlruns.db"
    cfg = compose_config(f"tracking.uri={uri}", f"tracking.artifact_root={tmp_path}/mlruns")
    client, experiment_id = connect(read_settings(cfg).tracking)
    run = start_run(client, experiment_id, "sentiment140 · tiny · smoke · 1 seed", {})
    run.directory(report_folder(tmp_path / "report_src", -0.83))
    run.text("# report\n", "report.md")
    client.set_terminated(run.run_id)
    finish_job(cfg, run.run_id, tmp_path / "outputs")
    printed = capsys.readouterr().out
    assert "gap_accuracy vs dist_sinkhorn_long: Spearman rho = -0.83" in printed
    assert "closest pair" not in printed and "farthest differing pair: nz-uk" in printed
    assert f"mlflow ui --backend-store-uri {uri}" in printed
    assert (tmp_path / "outputs" / "report" / "analysis" / "correlations.csv").is_file()
    return uri, experiment_id, run.run_id


@pytest.mark.slow
def test_ui_server_shows_the_study(finished_run, tmp_path):
    uri, experiment_id, run_id = finished_run
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri]
    server = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/health", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "no UI server"
                time.sleep(0.5)
        experiment = _get(base, f"/api/2.0/mlflow/experiments/get?experiment_id={experiment_id}")
        tags = {t["key"]: t["value"] for t in experiment["experiment"].get("tags", [])}
        assert tags["mlflow.experimentKind"] == EXPERIMENT_KIND  # the UI opens on the runs table
        found = _post(base, "/api/2.0/mlflow/runs/search", {"experiment_ids": [experiment_id]})
        (run,) = found["runs"]
        assert run["info"]["run_name"] == "sentiment140 · tiny · smoke · 1 seed"
        run_tags = {t["key"]: t["value"] for t in run["data"]["tags"]}
        assert "Spearman rho = -0.83" in run_tags["mlflow.note.content"]
        metrics = {m["key"]: m["value"] for m in run["data"]["metrics"]}
        assert metrics["corr/dist_sinkhorn_long/gap_accuracy/rho"] == pytest.approx(-0.83)
        assert metrics["corr/dist_sinkhorn_long/gap_accuracy/p_perm"] == pytest.approx(0.02)
        listed = _get(base, f"/api/2.0/mlflow/artifacts/list?run_id={run_id}")
        assert {"report.md", "analysis", "distances"} <= {f["path"] for f in listed["files"]}
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_end_of_run_path_without_a_server(finished_run):
    uri, _, run_id = finished_run
    run = MlflowClient(uri).get_run(run_id)
    assert run.data.metrics["dist_mean/sinkhorn_long"] == pytest.approx(3.5)
    assert RunLog(MlflowClient(uri), run_id).run_id == run_id
