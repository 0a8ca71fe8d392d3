"""Headless-Chromium screenshots of a run in the MLflow UI: its page and its report artifact.

Starts ``mlflow ui`` on 127.0.0.1 for a store, opens the run's page (Overview: description,
datasets, metrics) and its ``report.html`` in the artifact viewer, and writes PNGs. It checks
what a reader sees, the report's figures included; needs ``chromium`` on PATH
(``apt-get install -y chromium``).

    python deploy/mlflow/screenshots.py --store /tmp/study/mlruns.db --run RUN_ID --out shots/
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from mlflow.tracking import MlflowClient

VIEW = "workflowType=machine_learning"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"no MLflow UI at {url} after {seconds:.0f} s")


def screenshot(url: str, path: Path, size: str, wait_ms: int) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("chromium is not on PATH: apt-get install -y chromium")
    subprocess.run(
        [
            browser,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={size}",
            f"--virtual-time-budget={wait_ms}",
            f"--screenshot={path}",
            url,
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    print(f"{path}: {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="the SQLite store (mlruns.db)")
    parser.add_argument("--run", required=True, help="the run id (a sweep's parent)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNGs")
    parser.add_argument("--artifact", default="report.html", help="the artifact to open")
    parser.add_argument("--wait-ms", type=int, default=20000, help="page time before the shot")
    parser.add_argument(
        "--report-size",
        default="1600,7000",
        help="window of the report's shot: the viewer is as tall as the window, so a tall one "
        "reaches the figures below the findings",
    )
    options = parser.parse_args()
    store = f"sqlite:///{options.store.resolve()}"
    experiment = MlflowClient(store).get_run(options.run).info.experiment_id
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "ui",
            "--backend-store-uri",
            store,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=options.store.resolve().parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"{base}/health")
        options.out.mkdir(parents=True, exist_ok=True)
        run = f"{base}/#/experiments/{experiment}/runs/{options.run}"
        screenshot(f"{run}?{VIEW}", options.out / "run_page.png", "1600,1800", options.wait_ms)
        viewer = f"{run}/artifacts/{options.artifact}?{VIEW}"
        screenshot(
            viewer, options.out / "report_in_mlflow.png", options.report_size, options.wait_ms
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
