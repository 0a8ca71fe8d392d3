"""The sweep's ledger in its directory: the parent run it opened and each job's outcome.

Plain JSON files (:data:`PARENT_FILE` in the sweep directory, :data:`JOB_FILE` in each job's
folder), so jobs on other machines find their parent and the sweep's end reads every outcome
without asking the store.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regbias.serial import structure, unstructure

log = logging.getLogger(__name__)

#: The sweep's parent run, in the sweep directory.
PARENT_FILE = "regbias_parent.json"
#: A job's outcome, in the job's output folder.
JOB_FILE = "regbias_job.json"
#: Job statuses that count as done: the job ran to its end, or a finished run was reused.
DONE = ("FINISHED", "REUSED")


@dataclass(frozen=True)
class JobRecord:
    """One job's outcome as the ledger holds it (:data:`JOB_FILE`, read by the sweep's end).

    Attributes:
        job_num: Hydra's number of the job (None outside a sweep).
        overrides: the job's overrides, space-separated.
        status: ``RUNNING``, ``FINISHED``, ``REUSED`` or ``FAILED``.
        run_id: its MLflow run ("" where it has none).
        variant: its variant (the config but the seed, hashed; "" where unknown).
        error: why it failed ("" where it did not).
        launch: the sweep launch it belongs to ("" where unknown).
    """

    job_num: int | None = None
    overrides: str = ""
    status: str = "UNKNOWN"
    run_id: str = ""
    variant: str = ""
    error: str = ""
    launch: str = ""

    @property
    def done(self) -> bool:
        """Whether the job ran to its end or reused a finished run (:data:`DONE`)."""
        return self.status in DONE

    @property
    def pooled(self) -> bool:
        """Whether the sweep's end pools it: done, with a run to read."""
        return self.done and bool(self.run_id)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> JobRecord:
        """The record a job file holds (a key it lacks, or null, takes its default)."""
        return structure({k: v for k, v in data.items() if v is not None}, cls)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready record (``jobs.json``)."""
        found: dict[str, Any] = unstructure(self)
        return found


def write_parent(sweep_dir: Path, record: Mapping[str, Any]) -> None:
    """Write the sweep's parent run (``run_id``, ``experiment_id``, ``launch``...) for its jobs."""
    sweep_dir.mkdir(parents=True, exist_ok=True)
    (sweep_dir / PARENT_FILE).write_text(json.dumps(record, indent=2))


def read_parent(sweep_dir: Path | None) -> dict[str, Any] | None:
    """The sweep's parent run, as the sweep's start wrote it; None outside a sweep or before it.

    Raises:
        ValueError: the file is not JSON (a damaged file).
    """
    if sweep_dir is None or not (sweep_dir / PARENT_FILE).exists():
        return None
    return json.loads((sweep_dir / PARENT_FILE).read_text())


def write_job_record(
    output_dir: Path,
    sweep_dir: Path | None,
    job_num: int | None,
    overrides: Sequence[str],
    outcome: Mapping[str, Any],
) -> None:
    """Write one job's outcome (``status``, ``run_id``...) and the sweep's launch, atomically."""
    path = output_dir / JOB_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    record = {"job_num": job_num, "overrides": " ".join(overrides), **outcome}
    launch = (read_parent(sweep_dir) or {}).get("launch")
    if launch:
        record["launch"] = launch
    tmp.write_text(json.dumps(record, indent=2))
    tmp.replace(path)


def job_records(sweep_dir: Path, launch: str | None = None) -> list[JobRecord]:
    """This sweep's job outcome records (of its ``launch``, else the parent file's), by number."""
    launch = launch or (read_parent(sweep_dir) or {}).get("launch")
    records = []
    for path in sweep_dir.glob(f"*/{JOB_FILE}"):
        record = JobRecord.of(json.loads(path.read_text()))
        if launch is not None and record.launch != launch:
            log.info("left out %s: a job of an earlier sweep in this folder", path.parent)
            continue
        records.append(record)
    return sorted(records, key=lambda r: r.job_num or 0)
