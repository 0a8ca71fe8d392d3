"""The sweep's ledger: the parent file its jobs find, their records its end reads."""

from __future__ import annotations

import json

from regbias.tracking.ledger import (
    JOB_FILE,
    PARENT_FILE,
    JobRecord,
    job_records,
    read_parent,
    write_job_record,
    write_parent,
)


def test_no_parent_outside_a_sweep_or_before_its_start(tmp_path) -> None:
    assert read_parent(None) is None
    assert read_parent(tmp_path) is None


def test_jobs_find_the_parent_their_sweep_wrote(tmp_path) -> None:
    sweep = tmp_path / "multirun" / "sweep"  # not there yet: the start makes it
    write_parent(sweep, {"run_id": "p", "experiment_id": "1", "launch": "a"})
    assert read_parent(sweep) == {"run_id": "p", "experiment_id": "1", "launch": "a"}
    assert (sweep / PARENT_FILE).is_file()


def test_a_record_carries_its_job_and_its_sweeps_launch(tmp_path) -> None:
    write_parent(tmp_path, {"run_id": "p", "launch": "a"})
    outcome = {"status": "FINISHED", "run_id": "r"}
    write_job_record(tmp_path / "3", tmp_path, 3, ["seed=3", "encoder=tiny"], outcome)
    record = json.loads((tmp_path / "3" / JOB_FILE).read_text())
    overrides = "seed=3 encoder=tiny"
    assert record == {"job_num": 3, "overrides": overrides, **outcome, "launch": "a"}
    assert not list(tmp_path.glob("3/*.tmp"))  # written whole, then renamed


def test_a_single_run_records_no_launch(tmp_path) -> None:
    write_job_record(tmp_path, None, None, [], {"status": "FINISHED"})
    assert "launch" not in json.loads((tmp_path / JOB_FILE).read_text())


def test_the_sweeps_end_reads_its_own_launchs_records_by_job_number(tmp_path) -> None:
    write_parent(tmp_path, {"run_id": "p", "launch": "old"})
    write_job_record(tmp_path / "2", tmp_path, 2, ["seed=2"], {"status": "FINISHED"})
    write_parent(tmp_path, {"run_id": "p", "launch": "new"})  # the folder reused, 2 jobs
    for num in (1, 0):
        write_job_record(tmp_path / str(num), tmp_path, num, [f"seed={num}"], {"status": "FAILED"})
    assert [r.job_num for r in job_records(tmp_path)] == [0, 1]
    assert {r.launch for r in job_records(tmp_path)} == {"new"}
    assert [r.job_num for r in job_records(tmp_path, launch="old")] == [2]


def test_a_job_file_is_read_as_a_typed_record(tmp_path):
    """Keys it lacks take their defaults, keys it does not know are dropped, types are kept."""
    job = tmp_path / "0"
    job.mkdir()
    (job / JOB_FILE).write_text(
        json.dumps({"job_num": 0, "status": "REUSED", "run_id": "r0", "extra": [1], "launch": "x"})
    )
    (record,) = job_records(tmp_path, launch="x")
    assert record == JobRecord(0, status="REUSED", run_id="r0", launch="x")
    assert record.done and record.pooled and record.variant == ""
    assert not JobRecord(1, status="REUSED").pooled  # no run to read
    assert not JobRecord(2, status="FAILED", run_id="r2").done
    assert JobRecord.of(record.to_dict()) == record
