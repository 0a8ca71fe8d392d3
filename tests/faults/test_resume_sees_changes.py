"""Items 7, 8 and 9 of issue 20: resume and pooling see what changed since the last run.

A local model folder whose weights were replaced is another encoder (cache and resume key), a
FINISHED job whose artifacts are gone runs again, and a sweep in a reused ``hydra.sweep.dir``
pools exactly its own jobs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest
import torch
from mlflow.tracking import MlflowClient

from regbias.app import preflight
from regbias.app.job import JobContext
from regbias.app.settings import read_settings
from regbias.embeddings.sources import PathEncoder
from regbias.errors import ConfigError
from regbias.tracking.ledger import PARENT_FILE, job_records
from tests.faults.conftest import composed, write_csv
from tests.faults.test_stale_results import csv_job, run_job


def save_tiny_bert(folder: Path, seed: int) -> None:
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=64, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=32,
    )  # fmt: skip
    BertModel(config).save_pretrained(folder)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"]))


def test_replaced_weights_in_a_local_model_folder_make_another_encoder(tmp_path):
    folder = tmp_path / "model"
    save_tiny_bert(folder, seed=0)
    spec = {"name": "bert_small", "location": str(folder), "revision": "main"}
    spec |= {"max_length": 32, "pooling": "mean"}
    before = PathEncoder(**spec).identity
    assert PathEncoder(**spec).identity == before  # unchanged files: same encoder
    save_tiny_bert(folder, seed=1)  # the README's recipe, then new weights in the same folder
    assert PathEncoder(**spec).identity != before


def test_a_local_model_folder_records_its_content_not_a_copied_revision(tmp_path):
    """A folder configured with ``revision: main`` (copied from a hub encoder's YAML) records
    its files' content hash as its revision, which moves when the weights do."""
    folder = tmp_path / "model"
    save_tiny_bert(folder, seed=0)
    spec = {"name": "bert_small", "location": str(folder), "revision": "main"}
    spec |= {"max_length": 32, "pooling": "mean"}
    before = PathEncoder(**spec).recorded_revision
    assert before.startswith("content:") and "main" not in before
    save_tiny_bert(folder, seed=1)
    assert PathEncoder(**spec).recorded_revision != before


def test_replaced_weights_in_a_local_model_folder_change_the_resume_key(tmp_path):
    folder = tmp_path / "model"
    save_tiny_bert(folder, seed=0)
    data = write_csv(tmp_path / "d.csv", {"train": 20, "a": 5, "b": 5})
    overrides = [
        "encoder=[bert_small,local]",
        f"encoder.location={folder}",
        "dataset=csv",
        f"dataset.path={data}",
        f"paths.cache_dir={tmp_path}/cache",
    ]
    before = preflight.resume_inputs(read_settings(composed(*overrides)))
    save_tiny_bert(folder, seed=1)
    after = preflight.resume_inputs(read_settings(composed(*overrides)))
    assert before["regbias.encoder_identity"] != after["regbias.encoder_identity"]


def test_finished_job_whose_artifacts_are_gone_runs_again(tmp_path, store_dir):
    cfg = csv_job(tmp_path, store_dir)
    first, _ = run_job(cfg, tmp_path)
    client = MlflowClient(f"sqlite:///{store_dir}/mlruns.db")
    artifacts = Path(urlparse(client.get_run(first).info.artifact_uri).path)
    assert artifacts.is_dir()
    shutil.rmtree(artifacts)  # the user cleans up mlruns/ by hand
    again, record = run_job(cfg, tmp_path)
    assert again != first and record["status"] == "FINISHED"


def test_reused_sweep_dir_pools_only_this_sweeps_jobs(tmp_path):
    sweep = tmp_path / "sweep"

    def start(launch):  # what the sweep's start writes; each start has its own launch
        sweep.mkdir(exist_ok=True)
        (sweep / PARENT_FILE).write_text(json.dumps({"run_id": "p", "launch": launch}))

    def finish(num):  # what a job writes at its end
        JobContext(sweep / str(num), sweep, num, [f"seed={num}"]).write_record(status="FINISHED")

    start("first")
    finish(0)
    finish(1)
    assert [r.job_num for r in job_records(sweep)] == [0, 1]
    start("second")  # `-m seed=5 hydra.sweep.dir=<the same>`: one job, number 0
    finish(0)
    assert [r.overrides for r in job_records(sweep)] == ["seed=0"]


def test_a_cut_weights_file_in_a_local_model_folder_is_one_line(tmp_path):
    """A truncated model.safetensors: one ConfigError naming the folder, not a SafetensorError."""
    folder = tmp_path / "model"
    save_tiny_bert(folder, seed=0)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    spec = {"name": "bert_small", "location": str(folder), "revision": "main"}
    spec |= {"max_length": 32, "pooling": "mean"}
    with pytest.raises(ConfigError, match=r"could not be loaded .*cut or damaged.*save_pretrained"):
        PathEncoder(**spec).load_model()
