"""Run the app against a temporary MLflow store: in-process (fast) or as ``run.py`` (real).

Most tests of what a user sees call :func:`run_job`, which composes the real config with
Hydra's compose API and calls the same task function ``run.py`` does, in this process. A few
tests keep :func:`run_cli` (a real ``python run.py`` subprocess): Hydra's own command-line
errors, multirun sweeps, and end-to-end reproducibility.
"""

from __future__ import annotations

import contextlib
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

    Tests never download (``REGBIAS_OFFLINE=1``) unless ``env`` says otherwise. A
    ``PYTHONPATH`` in ``env`` is put before the inherited one (which may name the checkout).
    """
    extra = dict(env or {})
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["REGBIAS_CACHE_DIR"] = str(workdir / "cache")
    env["PYTHONUNBUFFERED"] = "1"
    env["REGBIAS_OFFLINE"] = "1"
    if "PYTHONPATH" in extra and env.get("PYTHONPATH"):
        extra["PYTHONPATH"] = os.pathsep.join([extra["PYTHONPATH"], env["PYTHONPATH"]])
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


def run_job(
    workdir: Path, *args: str, data_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python run.py ARGS`` (a single run, no ``-m``) in this process; same result shape.

    The job's Hydra output folder is ``workdir/out``, its store ``workdir/mlruns.db``, its
    cache ``workdir/cache``; ``returncode`` is the ``SystemExit`` code (0 when it returns).
    """
    import io

    from hydra import compose, initialize_config_dir

    from regbias.app import job

    overrides = [
        *args,
        f"tracking.uri=sqlite:///{workdir}/mlruns.db",
        f"tracking.artifact_root={workdir}/mlruns",
    ]
    env = {"REGBIAS_CACHE_DIR": str(workdir / "cache")}
    if data_dir is not None:
        env["REGBIAS_DATA_DIR"] = str(data_dir)
    out, err, code = io.StringIO(), io.StringIO(), 0
    context = job.JobContext(workdir / "out", None, None, list(args))
    with _environment(env), _patched(job, "job_context", lambda: context):
        with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
            cfg = compose("config", overrides=overrides)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                job.main(cfg)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _patched(owner: object, name: str, value: object):
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)
