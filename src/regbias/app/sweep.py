"""The sweep's parent MLflow run: opened before the jobs, aggregated and closed after them."""

from __future__ import annotations

import atexit
import logging
import shutil
import signal
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hydra.experimental.callback import Callback
from mlflow.exceptions import MlflowException
from omegaconf import DictConfig

from regbias.app.cluster_checks import presubmit
from regbias.app.parent import open_parent, refuse_live_parent
from regbias.app.preflight import preflight, refuse_repeated_values
from regbias.app.settings import read_settings, variant_settings
from regbias.app.start import check_output_folder, start_sweep
from regbias.app.summary import finish_sweep
from regbias.app.tasks import TRACKED_TASKS
from regbias.console import exit_with
from regbias.errors import RegbiasError
from regbias.interrupt import (
    StopRequested,
    check_stop,
    install_sigterm_flag,
    stop_flag,
)
from regbias.redaction import redacted
from regbias.report.publish import write_jobs, write_versions
from regbias.report.report_folder import REPORT_FOLDER, RUN_DIR_KEY, SWEEP_DIR_KEY, open_staging
from regbias.study.record import ParentTests, record_and_power
from regbias.study.settings import StudySettings
from regbias.tracking.ledger import (
    PARENT_FILE,
    JobRecord,
    job_records,
    read_parent,
    write_parent,
)
from regbias.tracking.provenance import package_versions, provenance_tags
from regbias.tracking.reaper import reap_dead_runs, report_reaped
from regbias.tracking.runs import RunLog, connect, tracked_run

if TYPE_CHECKING:
    from regbias.study.aggregate import StudyResults, SweepResult

log = logging.getLogger(__name__)


class SweepCallback(Callback):
    """Hydra callback: one parent run per multirun, the aggregation at its end.

    If the sweep dies before its end (a job's overrides fail to compose, a launcher error,
    Ctrl-C or SIGTERM in the launching process), an exit hook still ends the parent FAILED.
    """

    def __init__(self) -> None:
        self._open: RunLog | None = None
        self._record: dict[str, Any] | None = None  # the parent file this sweep wrote

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Before a single run: Hydra can write its output folder (or one line, exit 2)."""
        check_output_folder(config, RUN_DIR_KEY)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Before any job: output folder, data and cluster paths checked, parent run opened."""
        check_output_folder(config, SWEEP_DIR_KEY)
        start_sweep(config)
        presubmit(config)  # cluster launchers only: absolute paths for the jobs, or exit 2
        # Hydra turns a callback's exception into a warning and runs the jobs anyway: a sweep
        # that cannot check its data or open its parent run stops here, in one line.
        if config.get("task") not in TRACKED_TASKS:
            return
        try:
            refuse_repeated_values([str(o) for o in config.hydra.overrides.task])
            settings = read_settings(config)
            preflight(settings)
            self._open_parent(config, settings)
        except RegbiasError as error:
            exit_with(f"error: {error}", 2)
        except Exception as error:
            exit_with(f"error: the sweep could not start ({_line(error)})", 1)

    def _open_parent(self, config: DictConfig, settings: StudySettings) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        client, experiment_id = connect(settings.tracking)
        report_reaped(reap_dead_runs(client, experiment_id))
        tags = {
            "regbias.role": "sweep",
            "sweep_dir": str(sweep_dir),
            "overrides": " ".join(config.hydra.overrides.task),
            # The packages' versions as one artifact: the parent's page shows its description
            # below its tags, so they are few (every job's run keeps a tag per package).
            **provenance_tags(versions=False),
        }
        _refuse_a_busy_folder(client, sweep_dir)
        parent = open_parent(client, experiment_id, config, tags)
        self._guard(parent)
        write_versions(parent, package_versions())
        record = {
            "run_id": parent.run_id,
            "experiment_id": experiment_id,
            "tracking_uri": settings.tracking.uri,
            "launch": uuid.uuid4().hex,  # the jobs of this start, not of an earlier one here
        }
        write_parent(sweep_dir, record)
        self._record = record
        log.info("sweep parent run %s in experiment %s", parent.run_id, experiment_id)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """After the jobs: pool the finished ones, write the summary, close the parent run."""
        sweep_dir = Path(config.hydra.sweep.dir)
        mine = self._record
        records = job_records(sweep_dir, mine["launch"] if mine else None)
        failed = [r for r in records if not r.done]
        for record in failed:
            print(
                redacted(f"regbias: job {record.job_num} failed: {record.error}"),
                file=sys.stderr,
            )
        if (sweep_dir / PARENT_FILE).exists():
            try:
                with stop_flag(signal.SIGINT):  # never inside SQLAlchemy, where it gets lost
                    parent = mine or read_parent(sweep_dir)
                    assert parent is not None
                    self._close_parent(config, parent, records, failed)
            except StopRequested as stop:  # the parent run is FAILED already
                exit_with(str(stop), 128 + stop.signum)
            except Exception as error:  # disk full, store gone: the sweep must not exit 0
                why = f"the sweep's aggregation failed ({_line(error)}); its parent run is FAILED"
                exit_with(f"error: {why}", 1)
            finally:
                self._open = None
        elif config.get("task") in TRACKED_TASKS:
            exit_with("error: the sweep has no parent run", 1)
        if failed:
            raise SystemExit(1)

    def _close_parent(
        self,
        config: DictConfig,
        parent: dict[str, Any],
        records: list[JobRecord],
        failed: list[JobRecord],
    ) -> None:
        """Aggregate into this sweep's parent run and end it (FAILED when a job failed)."""
        client, _ = _connect_or_exit(config)
        sweep_dir = Path(config.hydra.sweep.dir)
        run = RunLog(client, parent["run_id"])
        staging = None
        try:
            with tracked_run(run):
                # Every artifact is written here too; the end moves it into <sweep dir>/report.
                staging = open_staging(sweep_dir / REPORT_FOLDER, SWEEP_DIR_KEY)
                run = RunLog(client, run.run_id, local=staging)
                write_versions(run, package_versions())  # the copy's; the same as the start's
                _summarise(run, records)
                found = _aggregate(config, run, records) if config.get("task") == "run" else None
                finish_sweep(config, run, records, sweep_dir, found)
                check_stop()  # a Ctrl-C during the last writes still stops the sweep
                if failed:
                    raise _SweepFailed(failed)
        except _SweepFailed:
            pass
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)

    def _guard(self, parent: RunLog) -> None:
        """End ``parent`` FAILED at exit unless the sweep's end closed it."""
        self._open = parent
        atexit.register(self._close_if_open)
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            install_sigterm_flag()  # the running job stops at its next safe point

    def _close_if_open(self) -> None:
        if self._open is None:
            return
        run, self._open = self._open, None
        try:
            run.tags({"error.type": "sweep ended before its aggregation"})
            run.client.set_terminated(run.run_id, status="FAILED")
        except Exception:
            log.exception("could not end the sweep's parent run %s", run.run_id)


def _refuse_a_busy_folder(client: Any, sweep_dir: Path) -> None:
    """Never two parents for one folder: refuse while the folder's parent run is live.

    Raises:
        TrackingError: the folder's parent run is RUNNING and its owner lives.
    """
    try:
        parent = read_parent(sweep_dir)
        if parent is None:
            return
        run = client.get_run(parent["run_id"])
    except (MlflowException, KeyError, ValueError):  # another store's run, a damaged file
        return
    where = f"a sweep in {sweep_dir}"
    refuse_live_parent(run, where, "; or give this sweep another hydra.sweep.dir")


def _line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _connect_or_exit(config: DictConfig) -> tuple[Any, str]:
    """The store, or one clear line and exit 2 before any job starts."""
    try:
        return connect(read_settings(config).tracking)
    except RegbiasError as error:
        exit_with(f"error: {error}", 2)


class _SweepFailed(Exception):
    """Some jobs failed: the parent run ends FAILED (after aggregating the others)."""


def _aggregate(config: DictConfig, run: RunLog, records: list[JobRecord]) -> SweepResult:
    """Pool the jobs into the parent; each step's seconds as ``time/aggregate/<step>_s``.

    Each variant's test of record (and, where enabled, its power plants) runs here, once, on
    the variant's own settings.
    """
    from regbias.study.aggregate import aggregate_sweep

    settings = read_settings(config)
    sweep_dir = Path(config.hydra.sweep.dir)
    times: dict[str, float] = {}
    variants = {r.variant for r in records if r.done}

    def tests_of(members: list[JobRecord], pooled: StudyResults) -> ParentTests:
        own = settings
        if len(variants) > 1:
            own = variant_settings(settings, sweep_dir, members[0].job_num)
        return record_and_power(own, times, pooled)

    found = aggregate_sweep(settings.analysis, run, records, tests_of=tests_of)
    check_stop()  # a safe point: a Ctrl-C during the aggregation stops the sweep here
    times.update(found.times)
    run.metrics({f"time/aggregate/{step}_s": seconds for step, seconds in times.items()})
    return found


def _summarise(run: RunLog, records: list[JobRecord]) -> None:
    counts = Counter(r.status for r in records)
    run.metrics({f"sweep/jobs_{k.lower()}": v for k, v in counts.items()})
    write_jobs(run, records)
