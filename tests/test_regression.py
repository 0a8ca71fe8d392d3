"""Refactors keep the numbers: a fixed config and seed give byte-identical result files.

The recorded files under ``tests/regression/`` come from the first complete version (before
the stage packages); a change that moves numbers on purpose re-records them and says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.cli import run_cli, runs

RECORDED = Path(__file__).parent / "regression"
FILES = (
    "performance/per_model.csv",
    "distances/sinkhorn_short.json",
    "distances/sinkhorn_long.json",
    "distances/lda.json",
)


def _check_against(recorded: Path, workdir: Path, *args: str, data_dir: Path) -> None:
    result = run_cli(workdir, *args, "seed=3", "resume=false", data_dir=data_dir)
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = runs(workdir)
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    for path in FILES:
        local = client.download_artifacts(run.info.run_id, path, str(workdir / "dl"))
        assert Path(local).read_bytes() == (recorded / path).read_bytes(), path


def test_smoke_job_reproduces_recorded_numbers(tmp_path, shared_data_dir):
    _check_against(RECORDED / "smoke_seed3", tmp_path, "experiment=smoke", data_dir=shared_data_dir)


@pytest.mark.slow
def test_laptop_job_reproduces_recorded_numbers(tmp_path, shared_data_dir):
    _check_against(RECORDED / "laptop_seed3", tmp_path, data_dir=shared_data_dir)
