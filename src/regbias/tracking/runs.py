"""MLflow runs: the store, one child run per job, one parent run per sweep.

Stages never import MLflow; they return results and :class:`RunLog` writes them. Every run this
module starts ends FINISHED or FAILED, including on exceptions, Ctrl-C and SIGTERM.

A fresh SQLite store is created (and migrated) on first use. Two sweeps starting at once race
on that migration, and a store created on a full disk is left half-migrated; so the first use
runs under an exclusive lock next to the database, after a free-space check of its folder.
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import os
import shutil
import tempfile
import traceback
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlflow.tracking import MlflowClient

from regbias.errors import ConfigError, TrackingError
from regbias.interrupt import StopRequested, check_stop, ignore_ctrl_c, stop_flag
from regbias.redaction import redacted
from regbias.tracking.artifacts import ERROR_TXT, HYDRA_FOLDER
from regbias.tracking.provenance import flatten
from regbias.tracking.reaper import owner_tags
from regbias.tracking.run_log import RunLog

log = logging.getLogger(__name__)


MIN_FREE_MB = 64
"""Below this many free megabytes in the store's folder a run does not start."""
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
#: The kind MLflow 3's UI opens on the runs table (its "custom model development").
EXPERIMENT_KIND = "custom_model_development"


def local_store_path(uri: str) -> Path | None:
    """The file (SQLite) or folder (file store) behind ``uri``; None for a server."""
    if uri.startswith("sqlite:///"):
        return Path(uri.removeprefix("sqlite:///"))
    if uri.startswith("file://"):
        return Path(uri.removeprefix("file://"))
    if "://" in uri or uri.startswith("databricks"):
        return None
    return Path(uri)


def check_free_space(uri: str, min_mb: float = MIN_FREE_MB) -> None:
    """Raise before touching a local store whose disk is (nearly) full.

    Raises:
        TrackingError: fewer than ``min_mb`` megabytes free; the message names the folder.
    """
    path = local_store_path(uri)
    if path is None:
        return
    folder, free = free_mb(path.parent if path.suffix or not path.is_dir() else path)
    if free < min_mb:
        raise TrackingError(
            f"only {free:.0f} MB free in {folder}, where the MLflow store '{uri}' lives "
            f"(at least {min_mb:.0f} MB needed): free space there or set tracking.uri elsewhere"
        )


def free_mb(path: Path) -> tuple[Path, float]:
    """The nearest folder of ``path`` that exists, and the free megabytes of its disk."""
    folder = path.resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder, shutil.disk_usage(folder).free / 2**20


@contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """Hold an exclusive lock on a local SQLite store while its schema may be created."""
    path = local_store_path(uri)
    if path is None or not uri.startswith("sqlite:///"):
        yield
        return
    lock = path.resolve().with_name(path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # a read-only folder: nobody can migrate there anyway
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


@dataclass(frozen=True)
class TrackingSettings:
    """The ``tracking`` config group.

    Attributes:
        uri: the MLflow store (a SQLite file or a tracking server).
        artifact_root: where experiments this project creates keep their artifacts.
        experiment: the MLflow experiment's name.
        log_models: log every fine-tuned model's weights as artifacts (large).
        random_encoder_experiment: the experiment of runs with a random encoder
            (``encoder=tiny``, a ``RandomEncoder``), instead of ``experiment``; None: the same.
    """

    uri: str
    artifact_root: str
    experiment: str
    log_models: bool
    random_encoder_experiment: str | None


def connect(settings: TrackingSettings) -> tuple[MlflowClient, str]:
    """A client for the store and the id of the experiment (created when missing).

    The experiment is tagged as model training, so the UI opens on its runs table. A local
    store's schema is created under :func:`store_lock`, after :func:`check_free_space`.

    Raises:
        ConfigError: the store cannot be reached or written; the message names the URI.
        TrackingError: a local store's disk is nearly full.
    """
    # MLflow logs each SQL error's traceback (87 lines for a read-only store) before raising
    # it; the error raised here says it in one line.
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)
    try:
        _probe(settings.uri)
        check_free_space(settings.uri)
        with store_lock(settings.uri):
            client = MlflowClient(tracking_uri=settings.uri)  # creates a fresh store's schema
            experiment_id = _experiment_id(client, settings)
            _mark_model_training(client, experiment_id)  # the store's first write
            location = str(client.get_experiment(experiment_id).artifact_location)
    except TrackingError:
        raise
    except Exception as error:  # MLflow raises many types for an unreachable store.
        raise ConfigError(
            f"cannot open the MLflow store at '{redacted(settings.uri)}' ({_first_line(error)}); "
            f"check tracking.uri or MLFLOW_TRACKING_URI, and that the store is writable"
        ) from error
    check_artifact_folder(location)
    return client, experiment_id


def check_artifact_folder(location: str) -> None:
    """A local artifact folder (``file:`` or a path) can be made and written (not a server's).

    Raises:
        ConfigError: it cannot (a file in its path, no permission, a read-only disk), in one
            line before any run starts: a run would fail at its first artifact.
    """
    if location.startswith("file:"):
        folder = Path(urllib.request.url2pathname(urllib.parse.urlparse(location).path))
    elif "://" in location:
        return
    else:
        folder = Path(location)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise ConfigError(
            f"cannot write the MLflow artifact folder {folder} ({error.strerror or error}): set "
            "tracking.artifact_root to a folder you can write (and a new tracking.experiment "
            "if this one was created with that folder)"
        ) from error


def _mark_model_training(client: MlflowClient, experiment_id: str) -> None:
    """Tag the experiment as model training, so the UI opens on its runs table."""
    experiment = client.get_experiment(experiment_id)
    if experiment.tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
        client.set_experiment_tag(experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)


def artifact_location(settings: TrackingSettings) -> str | None:
    """Where a new experiment of this store keeps its artifacts (None: the server decides).

    A relative ``tracking.artifact_root`` of a SQLite store lies beside the store, so one store
    keeps its artifacts in one place whatever folder a run starts from.
    """
    if settings.uri.startswith(("http://", "https://", "databricks")):
        return None
    root = Path(settings.artifact_root).expanduser()
    store = local_store_path(settings.uri)
    if not root.is_absolute() and store is not None:
        root = store.expanduser().resolve().parent / root
    return root.resolve().as_uri()


def _experiment_id(client: MlflowClient, settings: TrackingSettings) -> str:
    wanted = artifact_location(settings)
    experiment = client.get_experiment_by_name(settings.experiment)
    if experiment is None:
        found = client.create_experiment(settings.experiment, artifact_location=wanted)
        _say_where(settings.experiment, wanted or "the tracking server's artifact store")
        return found
    kept = str(experiment.artifact_location)
    if wanted is not None and kept.rstrip("/") != wanted.rstrip("/"):
        _warn_other_root(settings.experiment, kept, wanted)
    else:
        _say_where(settings.experiment, kept)
    return str(experiment.experiment_id)


@functools.cache
def _say_where(experiment: str, location: str) -> None:
    log.info("MLflow artifacts of experiment %s go to %s", experiment, location)


@functools.cache
def _warn_other_root(experiment: str, kept: str, wanted: str) -> None:
    log.warning(
        "experiment %s keeps its artifacts in %s (set when it was created), not in "
        "tracking.artifact_root (%s): this run's artifacts go there too, so deleting that "
        "folder deletes them; give this run its own tracking.experiment to keep them apart",
        experiment,
        kept,
        wanted,
    )


def _probe(uri: str) -> None:
    """Fail in seconds, not after MLflow's minutes of retries, when a server is not there."""
    if not uri.startswith(("http://", "https://")):
        return
    try:
        urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=10).close()
    except urllib.error.HTTPError:
        pass  # the server answered; MLflow's own calls will tell what is wrong
    except OSError as error:
        raise ConnectionError(f"no answer ({error})") from error


def start_run(
    client: MlflowClient,
    experiment_id: str,
    name: str,
    tags: Mapping[str, str],
    parent_run_id: str | None = None,
) -> RunLog:
    """Create a RUNNING run (a child when ``parent_run_id`` is given), tagged with its owner.

    Raises:
        TrackingError: the store refused the write (read-only, full disk); names the URI.
    """
    all_tags = {k: redacted(str(v)) for k, v in {**tags, **owner_tags()}.items()}
    if parent_run_id:
        all_tags["mlflow.parentRunId"] = parent_run_id
    try:
        run = client.create_run(experiment_id, run_name=name, tags=all_tags)
    except Exception as error:  # SQLAlchemy, MlflowException, OSError: one line for all
        raise TrackingError(
            f"cannot create a run in the MLflow store at '{redacted(client.tracking_uri)}' "
            f"({_first_line(error)}): check that the store is writable and its disk has space"
        ) from error
    return RunLog(client, run.info.run_id)


#: The tag of a sweep's child run that stands for a run the job reused from elsewhere.
REUSED_TAG = "regbias.reused_run"
#: A reused run's tags a link does not copy: they would make it the run, or another's child.
_NOT_LINKED = ("mlflow.parentRunId", "regbias.config_hash", "mlflow.runName", "mlflow.note.content")


def link_reused_run(
    client: MlflowClient, experiment_id: str, parent_run_id: str, reused: str, name: str
) -> str | None:
    """A FINISHED child of ``parent_run_id`` that stands for ``reused`` (a run finished elsewhere).

    None where ``reused`` is in this study already (its child, or a child of one of its
    variants' runs: a rerun of the same sweep). The link carries the reused
    run's params, metrics (their latest values) and tags, and a description pointing at it, so
    the parent lists every job of its study and the UI compares them; the reused run itself is
    left where it is.
    """
    original = client.get_run(reused)
    if _under(client, original.data.tags.get("mlflow.parentRunId"), parent_run_id):
        return None  # in this study already (its child, or a child of one of its variants)
    tags = {k: v for k, v in original.data.tags.items() if k not in _NOT_LINKED}
    note = (
        f"Reused run {reused} (finished earlier, not run again; resume=true): this run links "
        "it into the study, with its params and metrics. Its artifacts stay in that run."
    )
    tags |= {REUSED_TAG: reused, "mlflow.note.content": note}
    link = start_run(client, experiment_id, name, tags, parent_run_id)
    link.params(original.data.params)  # logged through a RunLog once: the same values again
    link.metrics(original.data.metrics)
    client.set_terminated(link.run_id, "FINISHED")
    return link.run_id


def _under(client: MlflowClient, parent: str | None, study: str) -> bool:
    """Whether a run whose parent is ``parent`` sits under ``study``, one or two levels down."""
    if parent is None:
        return False
    return parent == study or client.get_run(parent).data.tags.get("mlflow.parentRunId") == study


def linked_runs(client: MlflowClient, run_id: str) -> list[str]:
    """The links :func:`link_reused_run` made to ``run_id`` (in its experiment)."""
    experiment = client.get_run(run_id).info.experiment_id
    found = client.search_runs([experiment], f"tags.`{REUSED_TAG}` = '{run_id}'")
    return [r.info.run_id for r in found]


def _first_line(error: BaseException) -> str:
    """The first line of the error's first cause: SQLite's words, not SQLAlchemy's wrapping."""
    while error.__cause__ is not None:
        error = error.__cause__
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


@contextmanager
def tracked_run(run: RunLog, on_abort: Any = None) -> Iterator[RunLog]:
    """End ``run`` FINISHED when the block completes, FAILED on any exception or interrupt.

    ``on_abort`` runs on Ctrl-C/SIGTERM; an error's traceback is logged as ``error.txt``.
    """
    status = "FAILED"
    try:
        with stop_flag():
            yield run
            check_stop()  # a stop asked for after the block's last safe point: not FINISHED
        status = "FINISHED"
    except BaseException as error:
        stopping = isinstance(error, KeyboardInterrupt | StopRequested)
        if stopping:
            ignore_ctrl_c()  # a second Ctrl-C must not leave the run RUNNING
        _record_error(run, error)
        if stopping and on_abort is not None:
            on_abort()
        raise
    finally:
        try:
            run.client.set_terminated(run.run_id, status=status)
        except Exception:  # never hide the original error behind a logging failure
            log.exception("could not end MLflow run %s", run.run_id)


def _record_error(run: RunLog, error: BaseException) -> None:
    try:
        run.tags({"error.type": type(error).__name__, "error.message": str(error)[:1000]})
        run.text("".join(traceback.format_exception(error)), ERROR_TXT)
    except Exception:
        log.exception("could not record the error in MLflow run %s", run.run_id)


def find_finished_run(
    client: MlflowClient, experiment_id: str, config_hash: str, required: str | None = None
) -> str | None:
    """The newest FINISHED job run whose config hash equals ``config_hash``, if any.

    A run that lacks the artifact ``required`` (its folder was deleted) does not count.
    """
    runs = client.search_runs(
        [experiment_id],
        filter_string=(
            f"tags.`regbias.config_hash` = '{config_hash}' and attributes.status = 'FINISHED'"
        ),
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    if not runs:
        return None
    run_id = runs[0].info.run_id
    if required is not None and not has_artifact(client, run_id, required):
        log.warning(
            "run %s is FINISHED but its %s is gone: running the job again", run_id, required
        )
        return None
    return run_id


def has_artifact(client: MlflowClient, run_id: str, path: str) -> bool:
    """Whether the run's artifacts hold ``path`` (False when its artifact folder is gone)."""
    parent = path.rsplit("/", 1)[0] if "/" in path else None
    try:
        return path in {a.path for a in client.list_artifacts(run_id, parent)}
    except Exception:  # a missing folder or bucket: the artifact is not there either
        return False


def log_config(run: RunLog, config: Mapping[str, Any], hydra_dir: Path | None) -> None:
    """The resolved config flattened into params, and the composed ``.hydra/`` files."""
    run.params(flatten(config))
    if hydra_dir is not None and hydra_dir.is_dir():
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / HYDRA_FOLDER
            copy.mkdir()
            for path in sorted(hydra_dir.iterdir()):
                if path.is_file():  # an override may carry tracking.uri with its password
                    (copy / path.name).write_text(redacted(path.read_text(errors="replace")))
            run.directory(copy, HYDRA_FOLDER)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "config.json"
            path.write_text(redacted(json.dumps(config, indent=2, default=str)))
            run.file(path, HYDRA_FOLDER)
