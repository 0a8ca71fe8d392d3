"""Items 10 and 11 of issue 10: one clear line, before any heavy work."""

from __future__ import annotations

import errno
from collections import namedtuple

import numpy as np
import pytest
import sqlalchemy.exc
from mlflow.tracking import MlflowClient

from regbias.app import job, preflight
from regbias.app.job import JobContext
from regbias.app.settings import read_settings, validate_seed
from regbias.data.sampling import long_text_passages
from regbias.errors import ConfigError, DataError, SampleSizeError, TrackingError
from regbias.study.pipeline import prepare as prepare_settings
from regbias.tracking import runs as store_module
from regbias.tracking.runs import TrackingSettings, connect
from tests.conftest import packaged
from tests.faults.conftest import composed, write_csv


def prepare(cfg):
    """``prepare`` of a composed config (the app reads its settings first)."""
    return prepare_settings(read_settings(cfg))


def regbias_lines(text):
    return [line for line in text.splitlines() if line.startswith("regbias:")]


@pytest.mark.parametrize("seed", [-1, 2**32, True, None, "3"])
def test_bad_seed_is_one_config_error(seed):
    with pytest.raises(ConfigError, match="seed must be"):
        validate_seed(seed)


def test_seed_minus_one_fails_before_the_data_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "absent"))
    with pytest.raises(ConfigError, match="seed must be between 0 and 4294967295"):
        prepare(composed("seed=-1"))


def standalone(tmp_path, monkeypatch, store_dir, *overrides):
    """``job.main`` as a single run (no sweep) of ``task=analyze`` against the shared store."""
    monkeypatch.setattr(job, "job_context", lambda: JobContext(tmp_path, None, None, []))
    return composed(
        "task=analyze",
        f"analysis.analyze.input={tmp_path}/pairs.csv",
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
        *overrides,
    )


def test_read_only_store_is_one_line(tmp_path, monkeypatch, capsys, store_dir):
    cfg = standalone(tmp_path, monkeypatch, store_dir)

    def read_only(*args, **kwargs):
        raise sqlalchemy.exc.OperationalError(
            "INSERT INTO runs", {}, Exception("attempt to write a readonly database")
        )

    monkeypatch.setattr(MlflowClient, "create_run", read_only)
    with pytest.raises(SystemExit) as exit_:
        job.main(cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "cannot create a run in the MLflow store" in line and str(store_dir) in line


def test_store_on_a_full_disk_is_refused_before_migrating(tmp_path, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(store_module.shutil, "disk_usage", lambda p: Usage(1, 1, 10 * 2**20))
    database = tmp_path / "fresh" / "mlruns.db"
    settings = packaged(
        TrackingSettings,
        "tracking",
        uri=f"sqlite:///{database}",
        artifact_root=str(tmp_path / "art"),
        experiment="x",
    )
    with pytest.raises(TrackingError, match=rf"only 10 MB free in {tmp_path}"):
        connect(settings)
    assert not database.exists()  # nothing half-migrated


def test_full_disk_while_writing_artifacts_is_one_line(tmp_path, monkeypatch, capsys, store_dir):
    cfg = standalone(tmp_path, monkeypatch, store_dir)

    def full(cfg, context):
        raise OSError(errno.ENOSPC, "No space left on device", "/art/figures/x.png")

    monkeypatch.setattr(job, "_dispatch", full)
    with pytest.raises(SystemExit) as exit_:
        job.main(cfg)
    assert exit_.value.code == 1
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "No space left on device (/art/figures/x.png)" in line


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("finetune.k_folds=1", "finetune.k_folds"),
        ("finetune.max_epochs=0", "finetune.max_epochs"),
        ("finetune.evaluation.repetitions=0", "finetune.evaluation.repetitions"),
        ("finetune.sample_size=-5", "finetune.sample_size"),
        ("finetune.val_fraction=1.5", "finetune.val_fraction"),
    ],
)
def test_fine_tuning_sizes_fail_before_the_data_is_read(tmp_path, monkeypatch, override, key):
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "absent"))
    with pytest.raises(ConfigError, match=key):
        prepare(composed(override))


def csv_config(path, *overrides):
    return composed("dataset=csv", f"dataset.path={path}", *overrides)


def test_csv_with_one_evaluation_group_fails_before_embedding(tmp_path):
    path = write_csv(tmp_path / "one.csv", {"train": 240, "g1": 60})
    with pytest.raises(ConfigError, match="lda n_components=3 exceeds groups - 1 = 1"):
        prepare(csv_config(path, "finetune.sample_size=100"))


@pytest.mark.parametrize("policy", ["error", "all"])
def test_csv_without_training_rows_says_so(tmp_path, policy):
    path = write_csv(tmp_path / "none.csv", {"a": 40, "b": 40, "c": 40})
    with pytest.raises(DataError, match="has no training rows") as error:
        prepare(csv_config(path, f"sampling.policy={policy}"))
    assert "sampling.policy" not in str(error.value)


def test_csv_without_training_rows_runs_distances_without_baseline(tmp_path):
    path = write_csv(tmp_path / "none.csv", {"a": 40, "b": 40, "c": 40, "d": 40})
    study, draws = prepare(csv_config(path, "finetune.enabled=false", "dataset.groups=[a,b,c,d]"))
    assert list(study.groups) == ["a", "b", "c", "d"] and draws.texts


def test_undersized_group_under_policy_all_is_named():
    with pytest.raises(SampleSizeError, match="group 'nz' has only 0"):
        long_text_passages([], 3, 2, np.random.default_rng(0), "nz")


def test_absolute_csv_path_needs_no_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "absent"))
    path = write_csv(tmp_path / "study.csv", {"train": 240, "a": 40, "b": 40, "c": 40})
    cfg = csv_config(path, "paths.data_dir=/no/such/dir")
    study, _ = prepare(cfg)
    assert set(study.groups) == {"a", "b", "c", "baseline"}
    inputs = preflight.resume_inputs(read_settings(cfg))
    assert len(inputs["regbias.data_fingerprint"]) == 16


def test_a_cache_dir_that_is_a_file_is_one_line_before_any_run(tmp_path):
    """``paths.cache_dir`` naming a file: one ConfigError, not a FileExistsError traceback."""
    a_file = tmp_path / "cache"
    a_file.write_text("not a folder")
    settings = read_settings(composed(f"paths.cache_dir={a_file}"))
    with pytest.raises(ConfigError, match=r"paths.cache_dir .*cache is a file, not a folder"):
        preflight.check_cache_dir(settings)


def test_a_read_only_cache_dir_is_one_line_before_any_run(tmp_path, monkeypatch):
    """A cache on a read-only mount: one ConfigError before any run, not an OSError per job."""
    folder = tmp_path / "cache"
    folder.mkdir()

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(preflight.tempfile, "NamedTemporaryFile", refuse)
    settings = read_settings(composed(f"paths.cache_dir={folder}"))
    with pytest.raises(ConfigError, match=r"cannot be written \(Read-only file system\)"):
        preflight.check_cache_dir(settings)
    monkeypatch.undo()
    preflight.check_cache_dir(settings)  # a writable folder passes
