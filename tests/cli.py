"""Run ``run.py`` in a subprocess against a temporary MLflow store (shared by CLI tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    workdir: Path,
    *args: str,
    data_dir: Path | None = None,
    timeout: int = 600,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python run.py ARGS`` in ``workdir`` with its store at ``workdir/mlruns.db``.

    Tests never download (``REGBIAS_OFFLINE=1``) unless ``env`` says otherwise.
    """
    extra = env or {}
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["REGBIAS_CACHE_DIR"] = str(workdir / "cache")
    env["PYTHONUNBUFFERED"] = "1"
    env["REGBIAS_OFFLINE"] = "1"
    env.update(extra)
    if data_dir is not None:
        env["REGBIAS_DATA_DIR"] = str(data_dir)
    command = [
        sys.executable,
        str(ROOT / "run.py"),
        *args,
        f"tracking.uri=sqlite:///{workdir}/mlruns.db",
        f"tracking.artifact_root={workdir}/mlruns",
    ]
    return subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
    )


def runs(workdir: Path) -> list:
    """Every run of every experiment in the store of ``workdir``."""
    if not (workdir / "mlruns.db").exists():
        return []
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    experiments = [e.experiment_id for e in client.search_experiments()]
    return client.search_runs(experiments) if experiments else []
