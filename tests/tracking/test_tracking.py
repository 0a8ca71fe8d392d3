"""MLflow runs always end FINISHED or FAILED; the store is checked before work starts."""

from __future__ import annotations

import pytest

from regbias.errors import ConfigError
from regbias.tracking.provenance import config_hash, flatten, provenance_tags
from regbias.tracking.runs import (
    TrackingSettings,
    connect,
    find_finished_run,
    start_run,
    tracked_run,
)
from tests.conftest import local_tracking, packaged


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("store")
    settings = local_tracking(tmp_path, "t")
    return connect(settings)


def status(client, run_id):
    return client.get_run(run_id).info.status


def test_run_finishes(store):
    client, exp = store
    run = start_run(client, exp, "ok", {"seed": "0"})
    with tracked_run(run):
        run.metrics({"a/b": 1.0})
    assert status(client, run.run_id) == "FINISHED"
    assert client.get_run(run.run_id).data.metrics["a/b"] == 1.0


def test_exception_marks_failed_and_records_error(store):
    client, exp = store
    run = start_run(client, exp, "bad", {})
    with pytest.raises(ValueError), tracked_run(run):
        raise ValueError("boom")
    assert status(client, run.run_id) == "FAILED"
    assert client.get_run(run.run_id).data.tags["error.message"] == "boom"


def test_ctrl_c_marks_failed_and_aborts_parent(store):
    client, exp = store
    parent = start_run(client, exp, "sweep", {})
    child = start_run(client, exp, "job", {}, parent_run_id=parent.run_id)
    aborted = []
    with pytest.raises(KeyboardInterrupt), tracked_run(child, on_abort=lambda: aborted.append(1)):
        raise KeyboardInterrupt
    assert status(client, child.run_id) == "FAILED" and aborted == [1]
    assert client.get_run(child.run_id).data.tags["mlflow.parentRunId"] == parent.run_id


def test_unreachable_store_names_the_uri(tmp_path):
    uri = "http://127.0.0.1:9"  # the discard port: nothing listens there
    with pytest.raises(
        ConfigError, match=r"cannot open the MLflow store at 'http://127\.0\.0\.1:9'"
    ):
        connect(
            packaged(
                TrackingSettings, "tracking", uri=uri, artifact_root=str(tmp_path), experiment="t"
            )
        )


def test_find_finished_run_by_config_hash(store):
    client, exp = store
    digest = config_hash({"seed": 0, "x": {"y": 1}})
    failed = start_run(client, exp, "f", {"regbias.config_hash": digest})
    client.set_terminated(failed.run_id, "FAILED")
    assert find_finished_run(client, exp, digest) is None
    done = start_run(client, exp, "d", {"regbias.config_hash": digest})
    client.set_terminated(done.run_id, "FINISHED")
    assert find_finished_run(client, exp, digest) == done.run_id


def test_config_hash_ignores_listed_keys_only():
    a = {"seed": 0, "tracking": {"uri": "x"}}
    b = {"seed": 0, "tracking": {"uri": "y"}}
    assert config_hash(a, ("tracking",)) == config_hash(b, ("tracking",))
    assert config_hash(a) != config_hash(b)
    assert config_hash({"seed": 0}) != config_hash({"seed": 1})


def test_flatten_and_provenance():
    assert flatten({"a": {"b": 1, "c": [1, 2]}}) == {"a.b": "1", "a.c": "[1, 2]"}
    tags = provenance_tags()
    assert "git.commit" in tags and tags["version.torch"].startswith("2.13")
