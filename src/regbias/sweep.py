"""The sweep's parent MLflow run: opened before the jobs, aggregated and closed after them."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from regbias.errors import RegbiasError
from regbias.provenance import provenance_tags
from regbias.tracking import (
    JOB_FILE,
    PARENT_FILE,
    RunLog,
    TrackingSettings,
    connect,
    start_run,
    tracked_run,
)

__all__ = ["SweepCallback", "job_records"]

log = logging.getLogger(__name__)
TRACKED_TASKS = ("run", "analyze")


def job_records(sweep_dir: Path) -> list[dict[str, Any]]:
    """Every job's outcome record in the sweep directory, by job number."""
    records = [json.loads(p.read_text()) for p in sweep_dir.glob(f"*/{JOB_FILE}")]
    return sorted(records, key=lambda r: r.get("job_num") or 0)


class SweepCallback(Callback):
    """Hydra callback: one parent run per multirun, the aggregation at its end."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        if config.get("task") not in TRACKED_TASKS:
            return
        sweep_dir = Path(config.hydra.sweep.dir)
        try:
            client, experiment_id = connect(TrackingSettings.from_mapping(config.tracking))
        except RegbiasError as error:
            print(f"regbias: error: {error}", file=sys.stderr)
            raise SystemExit(2) from None
        tags = {
            "regbias.role": "sweep",
            "sweep_dir": str(sweep_dir),
            "overrides": " ".join(config.hydra.overrides.task),
            **provenance_tags(),
        }
        parent = start_run(client, experiment_id, f"sweep-{sweep_dir.name}", tags)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        record = {
            "run_id": parent.run_id,
            "experiment_id": experiment_id,
            "tracking_uri": str(config.tracking.uri),
        }
        (sweep_dir / PARENT_FILE).write_text(json.dumps(record, indent=2))
        log.info("sweep parent run %s in experiment %s", parent.run_id, experiment_id)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        parent_file = sweep_dir / PARENT_FILE
        if not parent_file.exists():
            return
        parent = json.loads(parent_file.read_text())
        client, _ = connect(TrackingSettings.from_mapping(config.tracking))
        records = job_records(sweep_dir)
        failed = [r for r in records if r.get("status") not in ("FINISHED", "REUSED")]
        run = RunLog(client, parent["run_id"])
        try:
            with tracked_run(run):
                _summarise(run, records)
                if config.get("task") == "run":
                    from regbias.aggregate import aggregate_sweep

                    aggregate_sweep(config, run, records)
                if failed:
                    raise _SweepFailed(failed)
        except _SweepFailed:
            for record in failed:
                print(
                    f"regbias: job {record.get('job_num')} failed: {record.get('error')}",
                    file=sys.stderr,
                )
            raise SystemExit(1) from None


class _SweepFailed(Exception):
    def __init__(self, failed: list[dict[str, Any]]) -> None:
        super().__init__(
            f"{len(failed)} job(s) failed: " + ", ".join(str(r.get("job_num")) for r in failed)
        )


def _summarise(run: RunLog, records: list[dict[str, Any]]) -> None:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.get("status", "UNKNOWN")] = counts.get(record.get("status", "UNKNOWN"), 0) + 1
    run.metrics({f"sweep/jobs_{k.lower()}": v for k, v in counts.items()})
    run.json(records, "sweep/jobs.json")
