"""One Hydra job: dispatch on ``task``, wrap the work in an MLflow run, report user errors.

A user's mistake (``RegbiasError``) prints one line and exits non-zero; in a sweep a failed job
is recorded in the sweep directory instead, so the other jobs run and are aggregated.
"""

from __future__ import annotations

import errno
import functools
import logging
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

from regbias.app.preflight import preflight, resume_inputs
from regbias.app.settings import plain_config, read_settings
from regbias.app.start import ALWAYS_QUIET_LOGGERS, data_for_job, quiet_libraries
from regbias.app.summary import FreshRun, finish_job
from regbias.app.tasks import task_named
from regbias.console import exit_with
from regbias.data.data_dir import data_dir_for
from regbias.errors import ConfigError, RegbiasError
from regbias.interrupt import StopRequested, check_stop, ignore_ctrl_c
from regbias.redaction import redacted
from regbias.report.publish import Published
from regbias.report.report_folder import REPORT_FOLDER, RUN_DIR_KEY, open_staging
from regbias.study.settings import StudySettings
from regbias.study.timing import note_job_set_up
from regbias.tracking.artifacts import STUDY_JSON
from regbias.tracking.ledger import read_parent, write_job_record
from regbias.tracking.provenance import config_hash, git_state, provenance_tags
from regbias.tracking.reaper import reap_dead_runs, report_reaped
from regbias.tracking.runs import (
    RunLog,
    connect,
    find_finished_run,
    link_reused_run,
    log_config,
    start_run,
    tracked_run,
)
from regbias.tracking.ui import without_derived

log = logging.getLogger(__name__)

# A full disk, a read-only folder, a quota: one line, not a traceback.
DISK_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT}
# Settings that do not change results: a rerun with other values of these is the same job.
NEUTRAL = {
    "tracking": None,
    "resume": None,
    "paths": ("cache_dir",),
    "trainer": ("enable_progress_bar", "num_workers"),
}


@dataclass(frozen=True)
class JobContext:
    """Where Hydra put this job."""

    output_dir: Path
    sweep_dir: Path | None
    job_num: int | None
    overrides: list[str]

    def write_record(self, **record: Any) -> None:
        """The job's outcome, read by the sweep's end (:mod:`regbias.tracking.ledger`)."""
        write_job_record(self.output_dir, self.sweep_dir, self.job_num, self.overrides, record)


def job_context() -> JobContext:
    """The running job's directories (a plain temp-like context outside Hydra)."""
    if not HydraConfig.initialized():
        return JobContext(Path("outputs") / "standalone", None, None, [])
    hydra = HydraConfig.get()
    multirun = hydra.mode == RunMode.MULTIRUN
    return JobContext(
        output_dir=Path(hydra.runtime.output_dir),
        sweep_dir=Path(hydra.sweep.dir) if multirun else None,
        job_num=int(hydra.job.num) if multirun else None,
        overrides=list(hydra.overrides.task),
    )


def main(cfg: DictConfig) -> Any:
    """The Hydra task function behind ``run.py``."""
    for name in ALWAYS_QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    quiet_libraries()
    context = job_context()
    try:
        check_stop()  # a SIGTERM between a sweep's jobs: start no new one
        result = _dispatch(cfg, context)
        if context.sweep_dir is None and task_named(cfg.get("task")).prints_summary and result:
            finish_job(cfg, result, context.output_dir)
        return result.run.run_id if isinstance(result, FreshRun) else result
    except KeyboardInterrupt:
        ignore_ctrl_c()  # a second one would land in JAX's exit handler: a traceback
        exit_with("interrupted", 130)
    except StopRequested as stop:
        ignore_ctrl_c()
        print(f"regbias: {redacted(str(stop))}", file=sys.stderr)
        raise
    except (RegbiasError, OmegaConfBaseException) as error:
        if isinstance(error, OmegaConfBaseException):
            error = _config_error(error)
        print(f"regbias: error: {redacted(str(error))}", file=sys.stderr)
        if context.sweep_dir is None:
            raise SystemExit(2) from None
        context.write_record(status="FAILED", error=redacted(str(error)))
    except Exception as error:
        if context.sweep_dir is None:
            _exit_on_disk_error(error)
            raise
        log.exception("job %s failed", context.job_num)
        context.write_record(status="FAILED", error=redacted(f"{type(error).__name__}: {error}"))
    return None


def _exit_on_disk_error(error: Exception) -> None:
    """A full or read-only disk is the user's to fix: one line, not a traceback."""
    cause = error if isinstance(error, OSError) else error.__cause__
    if isinstance(cause, OSError) and cause.errno in DISK_ERRNOS:
        where = f" ({cause.filename})" if cause.filename else ""
        exit_with(
            f"error: {cause.strerror or cause}{where}: free space or fix the permissions of the "
            "output, artifact and cache folders",
            1,
        )


def _config_error(error: OmegaConfBaseException) -> ConfigError:
    """A config problem found while reading the config, in one line that names the key."""
    key = getattr(error, "full_key", None) or "a config value"
    if isinstance(error, MissingMandatoryValue):
        return ConfigError(f"{key} has no value: set it on the command line ({key}=...)")
    return ConfigError(f"{key}: {str(error).splitlines()[0]}")


def _dispatch(cfg: DictConfig, context: JobContext) -> Any:
    settings = read_settings(cfg)
    data_for_job(cfg)
    task = task_named(settings.task)
    work = task.function()
    if not task.tracked:
        return work(settings)
    if task.pooled_in_sweep:
        # A sweep's parent pools every job and draws the figures and report once.
        work = functools.partial(work, pooled=read_parent(context.sweep_dir) is not None)
    return _tracked(settings, plain_config(cfg), context, work)


def _tracked(
    settings: StudySettings, resolved: dict[str, Any], context: JobContext, work: Any
) -> Any:
    """Run ``work(settings, run)`` in a child (sweep) or standalone run; set-up timed.

    Returns the run's id, or for a standalone run that prints its summary the run with the
    local folder its report was written into (:class:`FreshRun`).
    """
    preflight(settings)  # before any run exists
    started, began = time.perf_counter(), time.time()
    parent = read_parent(context.sweep_dir)
    client, experiment_id = connect(settings.tracking)
    if parent is not None:
        experiment_id = parent["experiment_id"]
    else:
        report_reaped(reap_dead_runs(client, experiment_id))
    resumable = task_named(settings.task).resumable
    inputs = resume_inputs(settings) if resumable else {}
    digest, variant = fingerprints(resolved, inputs)
    if settings.resume and resumable:
        previous = find_finished_run(client, experiment_id, digest, STUDY_JSON)
        if previous is not None:
            log.info("job already FINISHED as run %s (resume=false reruns it)", previous)
            if parent is not None:  # the study lists it among its jobs, as a link
                name = f"{_run_name(settings, context)} (reused)"
                link_reused_run(client, experiment_id, parent["run_id"], previous, name)
            context.write_record(status="REUSED", run_id=previous, variant=variant)
            return previous
    # A standalone run writes its report into a folder beside <output dir>/report as it logs
    # it; its end moves it in (refused here, before the run, if a user's files are there).
    summary = context.sweep_dir is None and task_named(settings.task).prints_summary
    staging = open_staging(context.output_dir / REPORT_FOLDER, RUN_DIR_KEY) if summary else None
    try:
        run = start_run(
            client,
            experiment_id,
            _run_name(settings, context),
            {**_tags(settings, context, digest), **inputs, "regbias.variant": variant},
            parent["run_id"] if parent else None,
        )
        run = RunLog(client, run.run_id, local=staging)
        note_job_set_up(run.run_id, began)
        on_abort = (lambda: _abort_parent(client, parent)) if parent else None
        with tracked_run(run, on_abort=on_abort):
            context.write_record(status="RUNNING", run_id=run.run_id, variant=variant)
            log_config(run, without_derived(resolved), context.output_dir / ".hydra")
            setup = time.perf_counter() - started
            written = work(settings, run)
            run.metrics({"time/job_setup_s": setup})
    except BaseException:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    context.write_record(status="FINISHED", run_id=run.run_id, variant=variant)
    if staging is None:
        return run.run_id
    return FreshRun(run, staging, written if isinstance(written, Published) else None)


def fingerprints(resolved: dict[str, Any], inputs: dict[str, str] | None = None) -> tuple[str, str]:
    """The job's hash (what makes two jobs the same) and its variant (the same without seed).

    Both cover the resolved config but :data:`NEUTRAL`, the data directory read, the commit and
    ``inputs`` (:func:`resume_inputs`): a change of code or data makes a new job.
    """
    kept = {k: v for k, v in resolved.items() if k not in NEUTRAL or NEUTRAL[k] is not None}
    for key, fields in NEUTRAL.items():
        if fields and isinstance(kept.get(key), dict):
            kept[key] = {k: v for k, v in kept[key].items() if k not in fields}
    kept["_data_dir"] = str(data_dir_for(resolved.get("paths", {}).get("data_dir")).resolve())
    kept["_commit"] = git_state()["git.commit"]
    kept["_inputs"] = dict(sorted((inputs or {}).items()))
    return config_hash(kept), config_hash(kept, ("seed",))


def _run_name(settings: StudySettings, context: JobContext) -> str:
    prefix = f"job{context.job_num}-" if context.job_num is not None else ""
    if settings.task in ("analyze", "power"):
        return f"{prefix}{settings.task}"
    return f"{prefix}{settings.dataset.name}-{settings.encoder.name}-seed{settings.seed}"


def _tags(settings: StudySettings, context: JobContext, digest: str) -> dict[str, str]:
    tags = {
        "regbias.task": settings.task,
        "regbias.config_hash": digest,
        "seed": str(settings.seed),
        "dataset": settings.dataset.name,
        "encoder": settings.encoder.name,
        "overrides": " ".join(context.overrides),
        **provenance_tags(),
    }
    if context.job_num is not None:
        tags["job_num"] = str(context.job_num)
    return tags


def _abort_parent(client: Any, parent: dict[str, str]) -> None:
    """Ctrl-C or SIGTERM stops the whole sweep: its parent run ends FAILED too."""
    try:
        RunLog(client, parent["run_id"]).tags({"error.type": "interrupted"})
        client.set_terminated(parent["run_id"], status="FAILED")
    except Exception:
        log.exception("could not end the sweep's parent run")
