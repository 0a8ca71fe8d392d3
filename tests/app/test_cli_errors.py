"""Each user mistake: one clear message, a non-zero exit, no MLflow run left RUNNING.

Single runs go through the task function in-process (``run_job``); Hydra's own command-line
errors and a failing sweep run as real ``run.py`` subprocesses.
"""

from __future__ import annotations

import pytest

from tests.cli import run_cli, run_job, runs

FAST = ["distance.enabled=false", "experiment=smoke"]


def assert_clean_failure(workdir, done, *fragments):
    assert done.returncode != 0, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("regbias: error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert "Traceback" not in done.stderr
    assert all(r.info.status != "RUNNING" for r in runs(workdir))


def test_missing_data_directory(tmp_path):
    done = run_job(tmp_path, *FAST, data_dir=tmp_path / "nowhere")
    assert_clean_failure(tmp_path, done, "does not exist", "regbias.data.fetch")


def test_missing_data_file(tmp_path):
    (tmp_path / "data").mkdir()
    done = run_job(tmp_path, "task=describe", data_dir=tmp_path / "data")
    assert_clean_failure(tmp_path, done, "regional_sentiment140", "fetch")


def test_unknown_group(tmp_path, shared_data_dir):
    done = run_job(tmp_path, *FAST, "dataset.groups=[au,xx]", data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, "unknown group(s) xx", "au, ca")
    assert [r.info.status for r in runs(tmp_path)] == ["FAILED"]


def test_unknown_task(tmp_path, shared_data_dir):
    done = run_job(tmp_path, "task=nosuch", data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, "unknown task 'nosuch'", "describe")


def test_draw_larger_than_group(tmp_path, shared_data_dir):
    args = ["experiment=smoke", "dataset.groups=[au,ca,nz,za]", "distance.short.texts_per_draw=300"]
    done = run_job(tmp_path, *args, data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, "half the matched pool", "group 'za' has 249")
    args.append("distance.matched_pool=false")
    done = run_job(tmp_path, *args, data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, "group 'za' has 249 texts", "sampling.policy=all")


def test_csv_missing_column(tmp_path):
    (tmp_path / "my.csv").write_text("text,label,dialect\nhello there,1,a\n")
    args = ["dataset=csv", f"dataset.path={tmp_path}/my.csv", "dataset.group_column=region"]
    done = run_job(tmp_path, *FAST, *args, data_dir=tmp_path)
    assert_clean_failure(tmp_path, done, "region", "dialect")


def test_unknown_config_option_is_hydras_clear_error(tmp_path):
    # One real command line (Hydra prints this itself); tests/app/test_config.py checks that
    # every unknown option fails to compose.
    done = run_cli(tmp_path, "encoder=nosuch")
    assert done.returncode != 0
    assert "Could not find" in done.stderr and "Available options" in done.stderr


@pytest.mark.parametrize(
    ("overrides", "fragments", "runs_left"),
    [
        # A bad value is caught when the settings are read: no run is even started.
        (["distance.sinkhorn.epsilon=-1"], ["epsilon must be a finite number > 0"], []),
        (
            ["finetune.optimizer._target_=torch.optim.Adamm", "distance.enabled=false"],
            ["finetune.optimizer._target_=torch.optim.Adamm cannot be imported"],
            [],
        ),
        # What needs the data or the model is found inside the run, which ends FAILED.
        (["finetune.k_folds=500", "distance.enabled=false"], ["500"], ["FAILED"]),
        (
            [
                "encoder=[bert_small,local]",
                "encoder.location=/no/such/model",
                "distance.enabled=false",
            ],
            ["/no/such/model"],
            ["FAILED"],
        ),
    ],
    ids=["epsilon", "optimizer", "k_folds", "encoder_path"],
)
def test_bad_stage_settings(tmp_path, shared_data_dir, overrides, fragments, runs_left):
    args = ["experiment=smoke", "dataset.groups=[au,nz]", *overrides]
    done = run_job(tmp_path, *args, data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, *fragments)
    assert [r.info.status for r in runs(tmp_path)] == runs_left


def test_csv_without_path(tmp_path):
    done = run_job(tmp_path, *FAST, "dataset=csv", data_dir=tmp_path)
    assert_clean_failure(tmp_path, done, "dataset.path has no value")


def test_a_single_group_is_no_study(tmp_path, shared_data_dir):
    done = run_job(tmp_path, *FAST, "dataset.groups=[au]", data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, "at least two")


# A real failing sweep (about 25 s): slow. The default suite covers the same path in-process
# (tests/app/test_aggregate.py: a failed job is named and the parent ends FAILED).
@pytest.mark.slow
def test_sweep_with_failing_jobs_exits_non_zero_and_closes_parent(tmp_path, shared_data_dir):
    done = run_cli(
        tmp_path, "-m", "seed=0,1", *FAST, "dataset.groups=[au,xx]", data_dir=shared_data_dir
    )
    assert done.returncode == 1
    assert "regbias: job 0 failed: unknown group(s) xx" in done.stderr
    assert "regbias: job 1 failed" in done.stderr
    statuses = sorted(r.info.status for r in runs(tmp_path))
    assert statuses == ["FAILED", "FAILED", "FAILED"]  # parent and both children


def test_seed_must_be_an_integer(tmp_path, shared_data_dir):
    done = run_job(tmp_path, *FAST, "seed=null", data_dir=shared_data_dir)
    assert_clean_failure(tmp_path, done, "seed must be an integer")


def test_csv_without_its_training_group_stops_before_any_run(tmp_path):
    """Issue 60: the pool's group is named `general`, not `train`; no FAILED run is left."""
    rows = [f"text {i} of {g},{i % 2},{g}" for g in ("a", "b", "general") for i in range(6)]
    (tmp_path / "my.csv").write_text("text,label,group\n" + "\n".join(rows) + "\n")
    done = run_job(tmp_path, *FAST, "dataset=csv", f"dataset.path={tmp_path}/my.csv")
    assert_clean_failure(tmp_path, done, "no training rows", "dataset.train_group=<group>")
    assert runs(tmp_path) == []
