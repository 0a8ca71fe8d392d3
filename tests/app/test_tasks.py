"""The task registry: a task's entry says what the job does around it."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from regbias.app import job, tasks
from regbias.app.tasks import TASKS, Task


def test_run_and_analyze_print_a_summary() -> None:
    assert [name for name, task in TASKS.items() if task.prints_summary] == ["run", "analyze"]


@pytest.mark.parametrize("prints", [True, False])
def test_a_single_run_prints_the_summary_its_task_asks_for(
    monkeypatch, tmp_path, prints: bool
) -> None:
    toy = Task(
        "toy",
        "a toy task",
        "regbias.study.analyze:run_analysis",
        False,
        True,
        prints_summary=prints,
    )
    monkeypatch.setitem(tasks.TASKS, "toy", toy)
    monkeypatch.setattr(job, "job_context", lambda: job.JobContext(tmp_path, None, None, []))
    monkeypatch.setattr(job, "_dispatch", lambda cfg, context: "run-id")
    summaries: list[str] = []
    monkeypatch.setattr(job, "finish_job", lambda cfg, run_id, folder: summaries.append(run_id))
    assert job.main(OmegaConf.create({"task": "toy"})) == "run-id"
    assert summaries == (["run-id"] if prints else [])
