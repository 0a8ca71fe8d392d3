"""Items 1, 3, 4 and 5 of issue 10: no run ends 0 with stale, split or silently empty results."""

from __future__ import annotations

import json

import pytest

from regbias.analysis.pair_table import read_pairwise_csv
from regbias.app import job, preflight
from regbias.app.job import JobContext
from regbias.app.settings import plain_config, read_settings
from regbias.data import fingerprint
from regbias.data.fingerprint import content_fingerprint
from regbias.errors import ConfigError, DataError
from regbias.study.checks import preflight_job
from regbias.study.pipeline import prepare as prepare_settings
from regbias.tracking.artifacts import STUDY_JSON
from regbias.tracking.ledger import JobRecord
from tests.faults.conftest import composed, write_csv


def prepare(cfg):
    """``prepare`` of a composed config (the app reads its settings first)."""
    return prepare_settings(read_settings(cfg))


def csv_job(tmp_path, store_dir, *overrides):
    """A ``task=run`` config over a tiny CSV with its own experiment and cache."""
    path = write_csv(tmp_path / "study.csv", {"train": 60, "a": 20, "b": 20, "c": 20})
    return composed(
        "dataset=csv",
        f"dataset.path={path}",
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
        f"paths.cache_dir={tmp_path}/cache",
        *overrides,
    )


def run_job(cfg, tmp_path, name="job"):
    """``job._tracked`` with a stage that logs only its (empty) results: what resume decides."""
    context = JobContext(tmp_path / name, None, None, [])
    done = job._tracked(read_settings(cfg), plain_config(cfg), context, _results_only)
    run_id = done if isinstance(done, str) else done.run.run_id  # a fresh one: its report too
    return run_id, json.loads((tmp_path / name / "regbias_job.json").read_text())


def _results_only(settings, run):
    run.json({}, STUDY_JSON)


def test_changed_data_file_is_not_resumed(tmp_path, store_dir):
    cfg = csv_job(tmp_path, store_dir)
    first, record = run_job(cfg, tmp_path)
    assert record["status"] == "FINISHED"
    again, record = run_job(cfg, tmp_path)
    assert (again, record["status"]) == (first, "REUSED")
    path = tmp_path / "study.csv"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:100]))  # head -100
    rerun, record = run_job(cfg, tmp_path)
    assert record["status"] == "FINISHED" and rerun != first


def test_dirty_tree_resumes_only_on_an_identical_diff(tmp_path, store_dir, monkeypatch):
    cfg = csv_job(tmp_path, store_dir)
    state = {"git.commit": "c0ffee", "git.dirty": "true", "git.diff_hash": "diff-one"}
    monkeypatch.setattr(preflight, "git_state", lambda: dict(state))
    first, _ = run_job(cfg, tmp_path)
    assert run_job(cfg, tmp_path)[0] == first  # the same uncommitted diff: same code
    state["git.diff_hash"] = "diff-two"  # an uncommitted edit under src/
    second, record = run_job(cfg, tmp_path)
    assert second != first and record["status"] == "FINISHED"


def test_resume_inputs_are_tagged_on_the_run(tmp_path, store_dir):
    from mlflow.tracking import MlflowClient

    cfg = csv_job(tmp_path, store_dir)
    run_id, _ = run_job(cfg, tmp_path)
    tags = MlflowClient(f"sqlite:///{store_dir}/mlruns.db").get_run(run_id).data.tags
    inputs = preflight.resume_inputs(read_settings(cfg))
    assert tags["regbias.data_fingerprint"] == inputs["regbias.data_fingerprint"]
    assert tags["git.diff_hash"] and "git.commit" in tags


def test_data_hash_is_memoised_by_size_and_mtime(tmp_path, monkeypatch):
    data = write_csv(tmp_path / "d.csv", {"a": 5})
    hashed = []
    original = fingerprint.file_sha256
    monkeypatch.setattr(fingerprint, "file_sha256", lambda p: hashed.append(p) or original(p))
    first = content_fingerprint([data], tmp_path / "memo")
    assert content_fingerprint([data], tmp_path / "memo") == first and len(hashed) == 1
    data.write_text(data.read_text().replace("a0", "b0"))  # same size, new mtime and content
    assert content_fingerprint([data], tmp_path / "memo") != first and len(hashed) == 2


def test_reused_job_keeps_its_variant_so_a_resumed_sweep_pools_as_one(
    tmp_path, store_dir, monkeypatch
):
    cfg = csv_job(tmp_path, store_dir)
    _, finished = run_job(cfg, tmp_path, "job0")
    _, reused = run_job(cfg, tmp_path, "job1")
    assert reused["status"] == "REUSED" and reused["variant"] == finished["variant"]
    from regbias.study import aggregate

    pooled = []

    def analysed(run, members, s, power=None):
        pooled.append(1)
        return None, {}  # nothing written, no seconds

    monkeypatch.setattr(aggregate, "_aggregate_variant", analysed)
    jobs = [JobRecord.of(finished), JobRecord.of(reused)]
    aggregate.aggregate_sweep(read_settings(cfg).analysis, None, jobs)
    assert pooled == [1]  # one analysis at the top level, not one per "variant"


@pytest.mark.parametrize(
    "override",
    [
        "distance.repetitions=-1",
        "distance.repetitions=0",
        "distance.short.texts_per_draw=0",
        "distance.long.texts_per_passage=-2",
        "distance.lda.passages_per_group=0",
    ],
)
def test_distance_sizes_are_validated_up_front(tmp_path, override, monkeypatch):
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "no-data-yet"))
    key = override.split("=")[0]
    with pytest.raises(ConfigError, match=rf"{key} must be an integer >= 1"):
        prepare(composed(override))  # before the (missing) data directory is even looked at


def test_disabled_distances_accept_any_repetitions():
    preflight_job(read_settings(composed("distance.enabled=false", "distance.repetitions=0")))


def pair_table(tmp_path, cell: str):
    groups = ["a", "b", "c", "d"]
    rows = ["group_a,group_b,dist_x,gap_y"]
    pairs = [(x, y) for i, x in enumerate(groups) for y in groups[i + 1 :]]
    for n, (x, y) in enumerate(pairs):
        rows.append(f"{x},{y},{cell if n == 2 else n + 1},{(n * 7) % 5}")
    path = tmp_path / "pairs.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("cell", ["inf", "-inf", "Infinity"])
def test_infinite_cell_in_an_analyze_table_is_refused_with_row_and_column(tmp_path, cell):
    with pytest.raises(DataError, match=r"column 'dist_x' holds an infinite value in row 3"):
        read_pairwise_csv(pair_table(tmp_path, cell))


def test_empty_cell_is_still_a_missing_value(tmp_path):
    table = read_pairwise_csv(pair_table(tmp_path, ""))
    assert table.frame["dist_x"].isna().sum() == 1
