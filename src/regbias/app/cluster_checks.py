"""Before a sweep's jobs leave this machine (SLURM, Ray): absolute paths, and what would break.

A cluster job runs on another host, in another working directory, where relative paths point
elsewhere. So, on the submit host, :func:`prepare_cluster_sweep` exports the data directory,
the embedding cache and a SQLite store as absolute ``REGBIAS_DATA_DIR``, ``REGBIAS_CACHE_DIR``
and ``MLFLOW_TRACKING_URI`` (SLURM copies the environment into every job;
``conf/hydra/launcher/ray_cluster.yaml`` hands them to Ray workers) and returns one
:class:`Problem` per thing that would still break on the nodes. Local launchers: nothing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from regbias.app.tasks import DATA_TASKS, TRACKED_TASKS
from regbias.console import exit_with
from regbias.data.data_dir import DATA_DIR_ENV, data_dir_for, data_dir_source
from regbias.redaction import redacted

CACHE_ENV = "REGBIAS_CACHE_DIR"
TRACKING_ENV = "MLFLOW_TRACKING_URI"
_LOOPBACK = ("127.", "localhost", "[::1]", "0.0.0.0")


@dataclass(frozen=True)
class Problem:
    """One thing that breaks (``fatal``) or may break a sweep on a cluster, in one line."""

    fatal: bool
    message: str

    def __str__(self) -> str:
        return f"regbias: {'error' if self.fatal else 'warning'}: {self.message}"


def cluster_kind(config: DictConfig) -> str | None:
    """``slurm`` or ``ray`` when the sweep's launcher runs jobs on other hosts, else None."""
    target = str(OmegaConf.select(config, "hydra.launcher._target_", default="") or "")
    if "hydra_submitit_launcher" in target and "Slurm" in target:
        return "slurm"
    if "hydra_ray_launcher" in target:
        return "ray"
    return None


def presubmit(config: DictConfig) -> list[Problem]:
    """For a cluster launcher: export absolute paths, print problems, exit 2 on a fatal one."""
    problems = prepare_cluster_sweep(config)
    for problem in problems:
        print(redacted(str(problem)), file=sys.stderr)
    if any(problem.fatal for problem in problems):
        exit_with("nothing was submitted; fix the lines above", 2)
    return problems


def prepare_cluster_sweep(config: DictConfig, cwd: Path | None = None) -> list[Problem]:
    """Export absolute paths for the jobs (see the module doc), then what would still break."""
    kind = cluster_kind(config)
    if kind is None:
        return []
    cwd = Path.cwd() if cwd is None else cwd
    _absolutize_env(config, "paths.data_dir", DATA_DIR_ENV, cwd, _absolute_path)
    _absolutize_env(config, "paths.cache_dir", CACHE_ENV, cwd, _absolute_path)
    _absolutize_env(config, "tracking.uri", TRACKING_ENV, cwd, _absolute_store)
    task = config.get("task", "run")
    problems = _check_data_dir(config) if task in DATA_TASKS else []
    cache = _select(config, "paths.cache_dir")
    if task == "run" and cache is not None and not Path(cache).is_absolute():
        problems.append(
            Problem(
                False,
                f"paths.cache_dir '{cache}' is relative: each node resolves it in its own "
                "working directory and the jobs do not share embeddings; pass an absolute "
                "path on a shared filesystem (or set REGBIAS_CACHE_DIR)",
            )
        )
    if task in TRACKED_TASKS:
        problems += _check_store(config, kind)
    sweep_dir = _select(config, "hydra.sweep.dir")
    if kind == "ray" and sweep_dir is not None and not Path(sweep_dir).is_absolute():
        problems.append(
            Problem(
                True,
                f"hydra.sweep.dir '{sweep_dir}' is relative: Ray workers run in the directory "
                "their node's `ray start` ran in, so the jobs could not find the sweep's "
                "parent run; pass an absolute path on a shared filesystem",
            )
        )
    return problems


def _check_data_dir(config: DictConfig) -> list[Problem]:
    configured = _select(config, "paths.data_dir")
    if configured is None:
        return []
    chosen = str(data_dir_for(configured))
    said = f"data directory '{chosen}' (from {data_dir_source(configured)})"
    if not Path(chosen).is_dir():
        why = (
            f"does not exist on the submit host: every job would fail; set {DATA_DIR_ENV} or "
            "paths.data_dir to the data on a filesystem the nodes share"
        )
    elif not Path(chosen).is_absolute():
        why = (
            "is relative: the nodes resolve it in their own working directories; use an "
            "absolute path"
        )
    else:
        return []
    return [Problem(True, f"{said} {why}")]


def _check_store(config: DictConfig, kind: str) -> list[Problem]:
    uri = _select(config, "tracking.uri")
    if uri is None:
        return []
    if _is_relative_store(uri):
        problem = Problem(
            True,
            f"tracking.uri '{uri}' is relative: each node would write its own store and "
            "the sweep could not aggregate its jobs; use an absolute sqlite:////PATH on a "
            "shared filesystem or an MLflow server (tracking.uri=http://HOST:PORT)",
        )
    elif uri.startswith("sqlite:"):
        problem = Problem(
            False,
            f"tracking.uri '{uri}' is a SQLite file: fine on one node, unsafe with "
            "concurrent writers on several hosts over a network filesystem; use an MLflow "
            "server for a real cluster (deploy/mlflow/start-local.sh, docs/scale.md)",
        )
    elif uri.startswith(("http://", "https://")) and uri.split("://", 1)[1].startswith(_LOOPBACK):
        problem = Problem(
            False,
            f"tracking.uri '{uri}' is this host's loopback address: jobs on other "
            f"{kind} nodes cannot reach it; use the server's name or address on the "
            "cluster network",
        )
    else:
        return []
    return [problem]


def _select(config: DictConfig, key: str) -> str | None:
    value = OmegaConf.select(config, key, default=None, throw_on_missing=False)
    return None if value is None else str(value)


def _absolutize_env(config: DictConfig, key: str, env: str, cwd: Path, absolute: Any) -> None:
    """Make ``key`` absolute through ``env`` where the config takes it from ``env``."""
    current = os.environ.get(env)
    if current is not None:
        os.environ[env] = absolute(current, cwd)
        return
    value = _select(config, key)
    if value is None:
        return
    os.environ[env] = absolute(value, cwd)
    if _select(config, key) != os.environ[env]:  # the key does not follow ENV: undo
        del os.environ[env]


def _absolute_path(path: str, cwd: Path) -> str:
    return str((cwd / path).resolve()) if path else path


def _is_relative_store(uri: str) -> bool:
    if uri.startswith("sqlite:///"):
        return not uri.removeprefix("sqlite:///").startswith("/")
    if uri.startswith("file:"):
        return not uri.startswith("file:/")
    return "://" not in uri and not Path(uri).is_absolute()


def _absolute_store(uri: str, cwd: Path) -> str:
    if uri.startswith("sqlite:///") and _is_relative_store(uri):
        return f"sqlite:///{(cwd / uri.removeprefix('sqlite:///')).resolve()}"
    if "://" not in uri and uri and not Path(uri).is_absolute():
        return str((cwd / uri).resolve())
    return uri
