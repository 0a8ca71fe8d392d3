"""The end of a sweep or a run: a local copy of the report, the UI's view, a printed summary.

The report is copied under the Hydra output directory (``report/``), a sweep's variants are
compared in one page, the run gets its UI name, description, params and headline metrics, and
the findings, where the report is, the run's URL and the time per step are printed. Nothing
here may fail the sweep but a full disk: a problem is logged and the summary is shorter.
"""

from __future__ import annotations

import errno
import logging
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from regbias.app.parent import sweep_name
from regbias.app.settings import read_settings, variant_settings
from regbias.app.start import sweep_started
from regbias.errors import RegbiasError
from regbias.redaction import redacted
from regbias.report import comparison
from regbias.report.headline import Headline, read_headline
from regbias.report.publish import Published, copy_report
from regbias.report.report_folder import REPORT_FOLDER, RUN_DIR_KEY, SWEEP_DIR_KEY, move_in
from regbias.study.aggregate import SweepResult, log_inputs
from regbias.study.encoder_compare import sweep_headlines
from regbias.study.timing import SweepTimes, job_set_up_at, process_started
from regbias.study.variant_runs import publish_pages, publish_run
from regbias.tracking import artifacts as paths
from regbias.tracking.ledger import JobRecord
from regbias.tracking.runs import MIN_FREE_MB, RunLog, connect, free_mb
from regbias.tracking.ui import (
    DEFAULT_UI,
    compare_url,
    describe_run,
    run_url,
    shared_and_swept,
    ui_command,
    ui_serving,
)

log = logging.getLogger(__name__)


def finish_sweep(
    config: DictConfig,
    parent: RunLog,
    records: list[JobRecord],
    sweep_dir: Path,
    found: SweepResult | None = None,
) -> None:
    """After the aggregation (``found``), while the parent is open: compare, label, print.

    The report is moved from the parent's local folder (where every artifact was written as
    it was logged) into ``<sweep dir>/report/``.
    """
    try:
        started = time.perf_counter()
        staging, folder = parent.local, sweep_dir / REPORT_FOLDER
        assert staging is not None, "the sweep's parent writes into a local folder"
        try:
            children = _children(parent, records)
            _log_params(parent, [c.data.params for c in children])
            headlines = _headlines(config, parent, records, found, sweep_dir)
            publish_pages(parent, staging)
        finally:
            move_in(staging, folder, SWEEP_DIR_KEY)
        log_inputs(parent, found, config.paths.get("data_dir"))
        first = next(iter(headlines.values()))
        metrics = first.metrics if len(headlines) == 1 else comparison.comparison_metrics(headlines)
        parent.metrics(metrics)
        describe_run(parent, _description(headlines) + _compared(parent, children))
        name = sweep_name(config, [r.overrides for r in records])  # the runs table's
        parent.client.update_run(parent.run_id, name=name)
        summary = time.perf_counter() - started
        parent.metrics({"time/aggregate/summary_s": summary})
        times = _sweep_times(children, records, parent)
        print(_render(parent, headlines, folder, times), flush=True)
    except RegbiasError:
        raise  # a report folder holding a user's files: one line, the sweep fails
    except Exception as error:
        _raise_if_full(sweep_dir, error)
        log.exception("could not write the sweep's summary (the results are in MLflow)")


@dataclass(frozen=True)
class FreshRun:
    """A single run this process wrote: its report's local folder and what the report says.

    Attributes:
        run: the run, writing into ``staging`` (:attr:`RunLog.local`).
        staging: the folder its report was written into as it was logged.
        written: the report the task wrote (None: it wrote none).
    """

    run: RunLog
    staging: Path
    written: Published | None = None

    @property
    def headline(self) -> Headline:
        """The headline of the report it wrote (an empty one if it wrote none)."""
        return self.written.headline if self.written is not None else Headline()


def finish_job(cfg: DictConfig, result: str | FreshRun, output_dir: Path) -> None:
    """After a single run or ``task=analyze``: move or copy the report in, label, print.

    A run this process wrote (``FreshRun``) has its report in a local folder and its headline
    in memory; a reused run (its id) is an earlier process's: its report is copied from the
    store.
    """
    try:
        started = time.perf_counter()
        folder = output_dir / REPORT_FOLDER
        if isinstance(result, FreshRun):
            run, headline = result.run, result.headline
            try:
                try:
                    publish_run(run, headline)  # the pages into the local folder and the run
                finally:
                    move_in(result.staging, folder, RUN_DIR_KEY)
            finally:  # moved in, or refused (a user's files there): none is left behind
                shutil.rmtree(result.staging, ignore_errors=True)
            metrics: Mapping[str, float] = run.logged
        else:
            client, _ = connect(read_settings(cfg).tracking)  # the experiment it logged to
            run = RunLog(client, result)
            folder = copy_report(run, folder)
            publish_pages(run, folder)
            headline = read_headline(folder)
            publish_run(run, headline)
            metrics = client.get_run(result).data.metrics
        times = _job_times(run.run_id, metrics, time.perf_counter() - started)
        print(_render(run, {"": headline}, folder, times), flush=True)
    except RegbiasError:
        raise  # a report folder holding a user's files: one line, exit 2
    except Exception as error:
        _raise_if_full(output_dir, error)
        log.exception("could not write the run's summary (the results are in MLflow)")


def _raise_if_full(folder: Path, error: Exception) -> None:
    """A full disk under ``folder`` fails the job, as what it is.

    MLflow reports a copy that failed for want of space as "Failed to download artifacts";
    logging it would only fail again on the same disk.

    Raises:
        OSError: ENOSPC naming the folder, when its disk has under :data:`MIN_FREE_MB` free.
    """
    where, free = free_mb(folder)
    if free < MIN_FREE_MB:
        message = f"No space left on device ({free:.0f} MB free)"
        raise OSError(errno.ENOSPC, message, str(where)) from error


def _children(parent: RunLog, records: list[JobRecord]) -> list[Any]:
    done = [r.run_id for r in records if r.pooled]
    return [parent.client.get_run(run_id) for run_id in dict.fromkeys(done)]  # each run once


def _log_params(parent: RunLog, params: list[Mapping[str, str]]) -> None:
    """The shared config as params, the swept keys as ``sweep.<key>``; never twice."""
    shared, swept = shared_and_swept(params)
    values = {**shared, **{f"sweep.{k}": v for k, v in swept.items()}}
    logged = parent.client.get_run(parent.run_id).data.params
    fresh = {k: v for k, v in values.items() if k not in logged}
    if fresh:
        parent.params(fresh)


def _headlines(
    config: DictConfig,
    parent: RunLog,
    records: list[JobRecord],
    found: SweepResult | None,
    sweep_dir: Path,
) -> dict[str, Headline]:
    """One headline per variant; several variants also get the comparison page."""
    if found is None:
        return {"": Headline()}
    settings = read_settings(config)
    return sweep_headlines(
        parent, found, records, settings, lambda job: variant_settings(settings, sweep_dir, job)
    )


def _compared(parent: RunLog, children: list[Any]) -> str:
    """A line of the parent's description linking its jobs' side-by-side comparison."""
    if len(children) < 2:
        return ""
    experiment = parent.client.get_run(parent.run_id).info.experiment_id
    link = compare_url("", experiment, [c.info.run_id for c in children])
    return f"\n\n[Its {len(children)} jobs side by side]({link}) (MLflow's comparison view)."


def _description(headlines: Mapping[str, Headline]) -> str:
    if len(headlines) == 1:
        return next(iter(headlines.values())).markdown()
    return "\n\n".join(f"**{label}**\n\n{h.markdown()}" for label, h in headlines.items())


def _step_times(metrics: Mapping[str, float], prefix: str = "time/") -> dict[str, float]:
    """``<prefix><step>_s`` metrics (a job's ``time/<step>_s``) as ``{step: seconds}``."""
    return {
        k.removeprefix(prefix)[:-2]: v
        for k, v in metrics.items()
        if k.startswith(prefix) and k.endswith("_s") and "/" not in k.removeprefix(prefix)
    }


def _job_times(run_id: str, metrics: Mapping[str, float], summary: float) -> SweepTimes:
    """A single run's steps and summary, its start-up and the process's wall time so far.

    The job's set-up begins before its MLflow run does, so the process's start is the total's.
    """
    set_up_at = job_set_up_at(run_id)
    steps = {**_step_times(metrics), "summary": summary} if set_up_at is not None else {}
    times = SweepTimes(steps=steps, jobs=1)
    began = process_started()
    if began is not None:
        times.total = time.time() - began
        times.startup = max(0.0, set_up_at - began) if set_up_at is not None else None
    elif set_up_at is not None:
        times.total = time.time() - set_up_at
    return times


def _sweep_times(children: list[Any], records: list[JobRecord], parent: RunLog) -> SweepTimes:
    """Seconds per step summed over the jobs that ran, the aggregation's steps, the start-up."""
    finished = {r.run_id for r in records if r.status == "FINISHED"}
    ran = [c for c in children if c.info.run_id in finished]
    frame = pd.DataFrame([_step_times(c.data.metrics) for c in ran])
    steps = {k: float(frame[k].sum()) for k in frame.columns} if len(frame) else {}
    # This end's own steps (logged through the parent now), never an earlier one's.
    aggregation = _step_times(parent.logged, "time/aggregate/")
    times = SweepTimes(steps=steps, jobs=len(frame), aggregation=aggregation)
    began = process_started() or sweep_started()
    if began is not None:
        times.total = time.time() - began
        starts = [c.info.start_time / 1000 for c in ran if c.info.start_time]
        times.startup = min(starts) - began if starts else None
    return times


def _render(run: RunLog, headlines: Mapping[str, Headline], folder: Path, times: SweepTimes) -> str:
    lines = ["", "regbias: results"]
    for label, headline in headlines.items():
        lines.append(f"  findings{f' ({label})' if label else ''}:")
        lines += [f"    - {line}" for line in headline.lines()]
        lines += [
            f"    {name} pair: {p[0]}-{p[1]} ({p[3]} {p[2]:.4g})"
            for name, p in headline.pairs.items()
        ]
    lines.append(f"  time per step: {times.line()}")
    report = folder.resolve() / paths.REPORT_HTML
    if report.is_file():
        lines.append(f"  report: {report} (figures embedded; {paths.REPORT_MD}, tables beside it)")
    else:
        lines.append(
            f"  report: {folder.resolve() / paths.REPORT_MD} (tables and figures beside it)"
        )
    lines += [f"  {line}" for line in _where_in_mlflow(run)]
    return "\n".join(lines)


def _where_in_mlflow(run: RunLog) -> list[str]:
    uri = redacted(run.tracking_uri)  # a link to paste: the user's own password stays theirs
    experiment_id = run.client.get_run(run.run_id).info.experiment_id
    if uri.startswith(("http://", "https://")):
        return [f"MLflow: {run_url(uri, experiment_id, run.run_id)}"]
    url = run_url(DEFAULT_UI, experiment_id, run.run_id)
    if ui_serving(DEFAULT_UI, run.run_id):
        return [f"MLflow: {url}"]
    return [f"MLflow: start the UI with `{ui_command(uri)}`, then open {url}"]
