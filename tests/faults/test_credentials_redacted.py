"""Issue 56, item 3: a password in the tracking URI is never printed, logged or stored.

``MLFLOW_TRACKING_URI=http://alice:s3cret@host/`` is how MLflow takes a server's basic-auth
password. regbias printed it in its "cannot open the MLflow store" line, and stored it in the
run's params, its ``.hydra/overrides.yaml`` and its ``error.txt``. Every line and record now
says ``alice:***@host``: the user and host stay (the message still says where), the secret goes.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from regbias.redaction import HIDDEN, RedactingFilter, redact_logging, redacted
from regbias.tracking.runs import log_config, start_run
from tests.cli import ROOT

SECRET = "s3cret"
URI = f"http://alice:{SECRET}@127.0.0.1:9/"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (URI, f"http://alice:{HIDDEN}@127.0.0.1:9/"),
        ("at 'https://u:p%40s:w@h.org:5000/a' (x)", f"at 'https://u:{HIDDEN}@h.org:5000/a' (x)"),
        ("postgresql://bob:pw@db/mlflow", f"postgresql://bob:{HIDDEN}@db/mlflow"),
        ("s3://b/k?X-Amz-Signature=a1&X-Amz-Date=1", f"s3://b/k?X-Amz-Signature={HIDDEN}&X-Amz-Date=1"),
        ("https://h/x?token=abc&sig=zz#f", f"https://h/x?token={HIDDEN}&sig={HIDDEN}#f"),
    ],
)  # fmt: skip
def test_a_secret_in_a_uri_is_hidden_and_the_rest_kept(text, expected):
    assert redacted(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "sqlite:///mlruns.db",
        "sqlite:////tmp/a@b:c/mlruns.db",
        "file:///home/me/x:y@z",
        "http://127.0.0.1:5000/#/experiments/1/runs/abc",
        "http://alice@host/",
        "rho = -0.25 (p = 0.01), key groups au:uk",
    ],
)
def test_text_without_a_secret_is_left_as_it_is(text):
    assert redacted(text) == text


def test_the_store_line_hides_the_password(tmp_path, shared_data_dir):
    """The real ``run.py`` with the password in the environment: one line, no secret."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env |= {"MLFLOW_TRACKING_URI": URI, "REGBIAS_CACHE_DIR": str(tmp_path / "cache")}
    env["REGBIAS_DATA_DIR"] = str(shared_data_dir)
    done = subprocess.run(
        [sys.executable, str(ROOT / "run.py"), "experiment=smoke"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert SECRET not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"alice:{HIDDEN}@127.0.0.1:9" in lines[0], done.stderr
    logs = [p for p in tmp_path.rglob("*.log")]
    assert all(SECRET not in p.read_text() for p in logs)


def test_params_tags_errors_and_the_composed_config_hide_it(store, tmp_path):
    client, experiment_id = store
    run = start_run(client, experiment_id, "job", {"tracking.uri": URI})
    hydra_dir = tmp_path / ".hydra"
    hydra_dir.mkdir()
    (hydra_dir / "overrides.yaml").write_text(f"- tracking.uri={URI}\n- seed=1\n")
    (hydra_dir / "config.yaml").write_text("seed: 1\n")
    log_config(run, {"tracking": {"uri": URI}, "seed": 1}, hydra_dir)
    run.text(f"ConfigError: cannot open the MLflow store at '{URI}'", "error.txt")
    stored = client.get_run(run.run_id).data
    assert stored.params["tracking.uri"] == f"http://alice:{HIDDEN}@127.0.0.1:9/"
    assert stored.tags["tracking.uri"] == stored.params["tracking.uri"]
    folder = Path(client.download_artifacts(run.run_id, "", str(tmp_path / "got")))
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert files == [".hydra/config.yaml", ".hydra/overrides.yaml", "error.txt"]
    assert all(SECRET not in (folder / f).read_text() for f in files)
    assert "seed=1" in (folder / ".hydra/overrides.yaml").read_text()


def test_the_config_without_a_hydra_folder_hides_it(store, tmp_path):
    client, experiment_id = store
    run = start_run(client, experiment_id, "job", {})
    log_config(run, {"tracking": {"uri": URI}}, None)
    folder = Path(client.download_artifacts(run.run_id, ".hydra", str(tmp_path)))
    assert SECRET not in (folder / "config.json").read_text()


def test_a_log_line_and_its_traceback_are_redacted(tmp_path):
    path = tmp_path / "job.log"
    handler = logging.FileHandler(path)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        redact_logging()
        redact_logging()  # once per handler
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
        try:
            raise ConnectionError(f"refused: {URI}")
        except ConnectionError:
            logging.getLogger("regbias.test").exception("store %s unreachable", URI)
    finally:
        root.removeHandler(handler)
        handler.close()
    text = path.read_text()
    assert SECRET not in text
    assert text.count(f"alice:{HIDDEN}@") == 2
