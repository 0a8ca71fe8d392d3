"""Items 1, 2, 4, 10, 11, 12 and 13 of issue 20: a group's name stays that group's name.

Tables are read back with their names as written (``NA`` is a group, not a missing value),
reserved, path-like and colliding names are refused before any run exists, a duplicated CSV
header is an error, and spaces around the names of an analyze table are layout.
"""

from __future__ import annotations

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from regbias.analysis.pair_table import read_pairwise_csv
from regbias.app import job
from regbias.app.job import JobContext
from regbias.app.settings import plain_config, read_settings
from regbias.data.csv_corpus import read_csv_corpus
from regbias.data.study import select_groups
from regbias.errors import DataError
from regbias.study.aggregate import load_job_results
from regbias.tracking.runs import start_run
from tests.faults.conftest import composed, write_csv

NA_NAMES = ["NA", "None", "null", "nan"]


def test_groups_named_like_missing_values_survive_the_sweeps_read_back(store, tmp_path):
    client, experiment = store
    run = start_run(client, experiment, "job", {})
    rows = [("m0", 0, 0, g, "accuracy", 0.5 + i / 10) for i, g in enumerate(["a", *NA_NAMES])]
    frame = pd.DataFrame(rows, columns=["model", "seed", "fold", "group", "metric", "value"])
    run.table(frame, "performance/per_model.csv")
    run.json({"groups": ["a", *NA_NAMES], "group_sizes": {}, "meta": {}}, "results/study.json")
    results = load_job_results(run, tmp_path / "down")
    assert results is not None and results.per_model is not None
    assert list(results.per_model["group"]) == ["a", *NA_NAMES]
    assert results.per_model["value"].notna().all()


def pair_table(tmp_path, groups, sep=","):
    pairs = [(x, y) for i, x in enumerate(groups) for y in groups[i + 1 :]]
    rows = [sep.join(["group_a", "group_b", "dist_x", "gap_y"])]
    rows += [sep.join([x, y, str(n + 1), str((n * 7) % 5)]) for n, (x, y) in enumerate(pairs)]
    path = tmp_path / "pairs.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_analyze_table_with_a_group_named_NA_is_read(tmp_path):
    table = read_pairwise_csv(pair_table(tmp_path, ["a", "NA", "b", "None"]))
    assert set(table.frame["group_a"]) | set(table.frame["group_b"]) == {"a", "NA", "b", "None"}


def test_spaces_after_the_commas_of_an_analyze_table_are_not_part_of_the_names(tmp_path):
    table = read_pairwise_csv(pair_table(tmp_path, ["a", "b", "c", "d", "e"], sep=", "))
    assert set(table.frame["group_a"]) | set(table.frame["group_b"]) == set("abcde")
    assert table.distance_columns == ["dist_x"] and table.performance_columns == ["gap_y"]


def test_duplicated_csv_header_is_an_error_naming_the_column(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("text,label,group,text\nfine day,1,a,\nbad day,0,b,\n")
    with pytest.raises(DataError, match=r"dup\.csv, line 1: the header names column\(s\) 'text'"):
        read_csv_corpus(path, text_column="text", label_column="label", group_column="group")


@pytest.mark.parametrize("wanted", [None, ["a", "b", "baseline", "c"]])
def test_a_group_named_baseline_in_the_data_is_refused_as_reserved(tmp_path, wanted):
    path = write_csv(tmp_path / "d.csv", {"train": 20, "a": 5, "b": 5, "baseline": 5, "c": 5})
    corpus = read_csv_corpus(
        path, text_column="text", label_column="label", group_column="group", train_group="train"
    )
    with pytest.raises(DataError, match=r"group named 'baseline', a name regbias reserves"):
        select_groups(corpus, wanted, with_baseline=True)


def _csv_job(tmp_path, store_dir, groups):
    counts = {"train": 40, **dict.fromkeys(groups, 10)}
    path = write_csv(tmp_path / "study.csv", counts)
    return composed(
        "dataset=csv",
        f"dataset.path={path}",
        "dataset.train_group=train",
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
        f"paths.cache_dir={tmp_path}/cache",
    )


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (["a", "..", "b"], r"group name '\.\.' cannot name a file or an MLflow key"),
        (["x+y", "x_y", "b"], r"groups 'x\+y' and 'x_y' both become the MLflow key 'x_y'"),
        (["a", "b__c", "a__b", "c"], r"pairs 'a-b__c' and 'a__b-c' both become .*'a__b__c'"),
    ],
)
def test_unsafe_or_colliding_group_names_are_refused_before_any_run(
    tmp_path, store_dir, groups, message
):
    cfg = _csv_job(tmp_path, store_dir, groups)
    context = JobContext(tmp_path / "job", None, None, [])
    with pytest.raises(DataError, match=message):
        job._tracked(read_settings(cfg), plain_config(cfg), context, lambda s, run: None)
    client = MlflowClient(f"sqlite:///{store_dir}/mlruns.db")
    found = client.get_experiment_by_name(tmp_path.name)
    assert found is None or not client.search_runs([found.experiment_id])
