"""Same config and seed, same numbers on CPU; fine-tuned weights are logged only when asked."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from tests.cli import run_cli, runs

ARGS = [
    "experiment=smoke",
    "dataset.groups=[au,nz,za,baseline]",
    "resume=false",
    "trainer.enable_progress_bar=false",
]


def read(workdir, run_id, path):
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    with open(client.download_artifacts(run_id, path, str(workdir / "dl" / run_id))) as handle:
        return handle.read()


# Two real runs (about 50 s): slow. The default suite pins same-config-same-numbers through
# tests/app/test_regression.py, which reproduces recorded files bit for bit.
@pytest.mark.slow
def test_same_seed_same_numbers_and_models_logged_on_request(tmp_path, shared_data_dir):
    first = run_cli(tmp_path, *ARGS, "tracking.log_models=true", data_dir=shared_data_dir)
    assert first.returncode == 0, first.stderr[-3000:]
    second = run_cli(tmp_path, *ARGS, data_dir=shared_data_dir)  # warm embedding cache
    assert second.returncode == 0, second.stderr[-3000:]
    one, two = sorted(runs(tmp_path), key=lambda r: r.info.start_time)
    for path in (
        "performance/per_model.csv",
        "distances/sinkhorn_short.json",
        "distances/sinkhorn_long.json",
        "distances/lda.json",
    ):
        assert read(tmp_path, one.info.run_id, path) == read(tmp_path, two.info.run_id, path), path
    per_model = pd.read_csv(
        io.StringIO(read(tmp_path, one.info.run_id, "performance/per_model.csv"))
    )
    assert set(per_model["group"]) == {"au", "nz", "za", "baseline"}
    lda = json.loads(read(tmp_path, one.info.run_id, "distances/lda.json"))
    assert lda["groups"] == ["au", "nz", "za", "baseline"]
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns.db")
    logged = {a.path for a in client.list_artifacts(one.info.run_id, "models")}
    assert logged == {"models/seed0_fold0.pt", "models/seed0_fold1.pt"}
    assert not client.list_artifacts(two.info.run_id, "models")
    assert two.data.metrics["cache/hits"] > 0 and two.data.metrics["cache/misses"] == 0
