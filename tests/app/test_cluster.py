"""Live cluster stacks on this machine: smoke sweeps on a one-node SLURM cluster, on a Ray head
and against an MLflow server on PostgreSQL (`pytest -m slow -k cluster`; `bash .ci/slow` runs
them with the rest of the slow set and fails where a stack cannot run).

Each stack is brought up by its script in deploy/ (idempotent: the test checks that a second
start is a no-op) and stopped at the end when the test started it. Needs root (the scripts
install Debian packages and start daemons) and the extras in the Python running pytest:
``pip install -e ".[slurm,ray,server]"``; a stack whose extra is missing is skipped.
Every check is the same as for SQLite: one parent run, every child FINISHED under it, the
aggregate (pairwise table, report) in the parent. Wall times are printed (``-s`` shows them).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SEEDS = 3
SMOKE = ["-m", f"seed=range({SEEDS})", "experiment=smoke", "trainer.enable_progress_bar=false"]
RAY_PORT = os.environ.get("REGBIAS_RAY_PORT", "6379")
# Named here, not taken from a preset's default (which changed once and left the tests behind).
EXPERIMENT = f"regbias-cluster-test-{uuid.uuid4().hex[:8]}"


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


# A port nobody else uses unless one is given (the script refuses a port taken by another).
MLFLOW_PORT = os.environ.get("REGBIAS_MLFLOW_PORT") or _free_port()


def _needs(module: str, what: str) -> None:
    """Skip when the stack cannot run here; fail instead under ``.ci/slow`` (nothing unseen)."""
    missing = None
    if os.geteuid() != 0:
        missing = "the deploy scripts need root"
    elif importlib.util.find_spec(module) is None:
        missing = f"{what} is not installed in {sys.executable}"
    if missing and os.environ.get("REGBIAS_REQUIRE_STACKS"):
        pytest.fail(f"{missing} (REGBIAS_REQUIRE_STACKS is set: .ci/slow runs every stack)")
    if missing:
        pytest.skip(missing)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI",)}
    env.pop("REGBIAS_CACHE_DIR", None)  # the default, relative: the sweep must export it
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHON"] = sys.executable
    env["PYTHONUNBUFFERED"] = "1"
    env["REGBIAS_MLFLOW_PORT"] = MLFLOW_PORT
    env.update(extra)
    return env


def _script(path: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / path), *args],
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{path} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _start_twice(path: str, env: dict[str, str] | None = None) -> bool:
    """Start a stack; the second start must be a no-op. True when it was down before."""
    first = _script(path, env=env)
    second = _script(path, env=env)
    assert "nothing to do" in second, second
    return "nothing to do" not in first


def _sweep(workdir: Path, *args: str, env: dict[str, str], timeout: int = 1500):
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(ROOT / "run.py"), *SMOKE, *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-4000:]
    return done, elapsed


def _check_sweep(uri: str, experiment: str) -> tuple[str, list]:
    """One parent FINISHED with its aggregate; every child FINISHED under it."""
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment} in {uri}"
    runs = client.search_runs([found.experiment_id], max_results=1000)
    parents = [r for r in runs if r.data.tags.get("regbias.role") == "sweep"]
    assert len(parents) >= 1
    parent = max(parents, key=lambda r: r.info.start_time)
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert parent.info.status == "FINISHED"
    assert len(children) == SEEDS
    assert {c.info.status for c in children} == {"FINISHED"}
    assert {c.data.tags["seed"] for c in children} == {str(s) for s in range(SEEDS)}
    names = {a.path for a in client.list_artifacts(parent.info.run_id)}
    names |= {a.path for a in client.list_artifacts(parent.info.run_id, "analysis")}
    assert {"analysis/pairwise.csv", "analysis/correlations.csv", "report.md"} <= names
    assert parent.data.metrics.get("sweep/jobs_finished") == SEEDS
    return parent.info.run_id, children


def _report(stack: str, seconds: float) -> None:
    print(f"\n[cluster] smoke sweep of {SEEDS} seeds on {stack}: {seconds:.1f} s wall")


def test_cluster_slurm_smoke_sweep(tmp_path: Path, shared_data_dir: Path) -> None:
    _needs("hydra_plugins.hydra_submitit_launcher", "hydra-submitit-launcher (.[slurm])")
    started = _start_twice("deploy/slurm/start-local.sh")
    try:
        sweep_dir = tmp_path / "sweep"
        store = f"sqlite:///{tmp_path}/mlruns.db"
        done, elapsed = _sweep(
            tmp_path,
            "hydra/launcher=slurm",
            f"tracking.uri={store}",
            f"tracking.experiment={EXPERIMENT}",
            f"hydra.sweep.dir={sweep_dir}",
            env=_env(REGBIAS_DATA_DIR=str(shared_data_dir)),
        )
        _report("one-node SLURM (submitit)", elapsed)
        _check_sweep(store, EXPERIMENT)
        # Every job ran as a SLURM job and sacct has it COMPLETED.
        # submitit folders: the array job (ID) and one per task (ID_0, ID_1, ...).
        folders = [p.name for p in (sweep_dir / ".submitit").iterdir() if p.is_dir()]
        job_ids = sorted(name for name in folders if "_" in name)
        assert len(job_ids) == SEEDS, folders
        states: dict[str, str] = {}
        for _ in range(30):
            out = subprocess.run(
                ["sacct", "-n", "-P", "-X", "-o", "JobID,State", "-j", ",".join(job_ids)],
                capture_output=True,
                text=True,
            ).stdout
            states = dict(line.split("|", 1) for line in out.split() if "|" in line)
            if set(job_ids) <= set(states) and set(states.values()) == {"COMPLETED"}:
                break
            time.sleep(1)
        assert {states.get(j) for j in job_ids} == {"COMPLETED"}, states
        # The relative default cache reached the jobs as an absolute path: it is filled here.
        assert list((tmp_path / ".cache" / "regbias").glob("*/shard-*.index.npz"))
        assert "is a SQLite file" in done.stderr  # the pre-submit warning, one line
    finally:
        if started:
            _script("deploy/slurm/stop-local.sh")
    if started:  # stopped cleanly: the controller no longer answers
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
        assert "UP" not in ping.stdout, ping.stdout


def test_cluster_ray_smoke_sweep(tmp_path: Path, shared_data_dir: Path) -> None:
    _needs("hydra_plugins.hydra_ray_launcher", "hydra-ray-launcher (.[ray])")
    ray_env = {
        "RAY_ADDRESS": f"127.0.0.1:{RAY_PORT}",
        # Keep 127.0.0.1 as the address Ray connects to (see deploy/ray/start-local.sh).
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }
    started = _start_twice("deploy/ray/start-local.sh", env=_env(**ray_env))
    try:
        store = f"sqlite:///{tmp_path}/mlruns.db"
        _, elapsed = _sweep(
            tmp_path,
            "hydra/launcher=ray_cluster",
            f"tracking.uri={store}",
            f"tracking.experiment={EXPERIMENT}",
            env=_env(REGBIAS_DATA_DIR=str(shared_data_dir), **ray_env),
        )
        _report("a Ray head (hydra-ray-launcher)", elapsed)
        _check_sweep(store, EXPERIMENT)
        # Workers run in the head's directory: the cache still landed in the submit directory.
        assert list((tmp_path / ".cache" / "regbias").glob("*/shard-*.index.npz"))
        assert list((tmp_path / "multirun").glob("*/*/2/regbias_job.json"))
    finally:
        if started:
            _script("deploy/ray/stop-local.sh", env=_env(**ray_env))


def test_cluster_mlflow_server_on_postgres(tmp_path: Path, shared_data_dir: Path) -> None:
    _needs("psycopg", "psycopg (.[server])")
    started = _start_twice("deploy/mlflow/start-local.sh")
    try:
        uri = f"http://127.0.0.1:{MLFLOW_PORT}"
        experiment = f"regbias-cluster-test-{uuid.uuid4().hex[:8]}"
        args = (f"tracking.uri={uri}", f"tracking.experiment={experiment}")
        env = _env(REGBIAS_DATA_DIR=str(shared_data_dir))
        _, elapsed = _sweep(tmp_path, *args, env=env)
        _report("the MLflow server on PostgreSQL (local launcher)", elapsed)
        parent, _ = _check_sweep(uri, experiment)
        # Resume: the same sweep again reopens its parent (one parent per sweep), reuses every
        # FINISHED job and aggregates them again.
        _, again = _sweep(tmp_path, *args, env=env)
        print(f"[cluster] resumed sweep against the server: {again:.1f} s wall")
        client = MlflowClient(uri)
        found = client.get_experiment_by_name(experiment)
        runs = client.search_runs([found.experiment_id], max_results=1000)
        parents = [r for r in runs if r.data.tags.get("regbias.role") == "sweep"]
        assert len(parents) == 1 and len(runs) == 1 + SEEDS  # no new parent, no new child
        reopened = parents[0]
        assert reopened.info.run_id == parent and reopened.info.status == "FINISHED"
        assert reopened.data.tags.get("regbias.reopened") == "1"
        assert reopened.data.metrics.get("sweep/jobs_reused") == SEEDS
        names = {a.path for a in client.list_artifacts(reopened.info.run_id)}
        assert "report.md" in names
        client.delete_experiment(found.experiment_id)
    finally:
        if started:
            _script("deploy/mlflow/stop-local.sh")
