"""Shared pieces of the fault tests: composed configs, a temporary store, a tiny CSV corpus."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from mlflow.tracking import MlflowClient

from regbias.interrupt import clear_stop
from regbias.tracking.runs import TrackingSettings, connect
from tests.conftest import packaged

CONF = Path(__file__).resolve().parents[2] / "conf"
WORDS = "good bad happy sad great awful fine terrible lovely nasty calm loud".split()


def composed(*overrides: str, hydra: bool = False):
    """The real config, composed as ``run.py`` would (experiment=smoke unless overridden);
    ``hydra`` keeps the ``hydra`` node (sweep dir, overrides) that callbacks read."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(
            config_name="config",
            overrides=["experiment=smoke", *overrides],
            return_hydra_config=hydra,
        )


def write_csv(path: Path, groups: dict[str, int], seed: int = 0) -> Path:
    """A CSV corpus with ``groups[name]`` rows per group (``train`` is the training pool)."""
    import random

    rng = random.Random(seed)
    rows = ["text,label,group"]
    for group, count in groups.items():
        for i in range(count):
            words = " ".join(rng.choice(WORDS) for _ in range(6))
            rows.append(f"{words} {group}{i},{i % 2},{group}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory):
    """One SQLite store for all fault tests (creating a schema takes seconds)."""
    return tmp_path_factory.mktemp("store")


@pytest.fixture
def store(store_dir, tmp_path):
    """The shared store and an experiment of this test's own."""
    uri = f"sqlite:///{store_dir}/mlruns.db"
    return connect(
        packaged(
            TrackingSettings,
            "tracking",
            uri=uri,
            artifact_root=str(tmp_path / "art"),
            experiment=tmp_path.name,
        )
    )


@pytest.fixture(autouse=True)
def no_pending_stop():
    """A test that sends SIGTERM leaves no stop pending for the next one."""
    clear_stop()
    yield
    clear_stop()


@pytest.fixture
def sweep_config(tmp_path, store_dir):
    """A sweep's config: its own experiment in the shared store, its own sweep folder."""
    return composed(
        f"hydra.sweep.dir={tmp_path}/sweep",
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
        hydra=True,
    )


def finished_job_run(tmp_path, store_dir, report: str):
    """A job's config in this test's own experiment, and a FINISHED run of it whose
    ``report.md`` holds ``report`` (for what the end of a job does with it)."""
    from regbias.app.settings import read_settings
    from regbias.tracking.runs import start_run

    cfg = composed(
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
    )
    client, experiment_id = connect(read_settings(cfg).tracking)
    run = start_run(client, experiment_id, "job", {})
    run.text(report, "report.md")
    client.set_terminated(run.run_id)
    return cfg, run


def regbias_lines(text):
    return [line for line in text.splitlines() if line.startswith("regbias:")]


def runs_of(cfg):
    client = MlflowClient(cfg.tracking.uri)
    experiment = client.get_experiment_by_name(cfg.tracking.experiment)
    return client.search_runs([experiment.experiment_id]) if experiment else []


@contextmanager
def mounted_tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``1m``) at ``mount``, unmounted after; skips the test unless root."""
    mount.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
