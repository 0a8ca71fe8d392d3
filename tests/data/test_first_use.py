"""Data on first use: downloads from a local HTTP server that serves copies of the study files."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from regbias.data.first_use import (
    MIRROR_ENV,
    OFFLINE_ENV,
    datasets_in_sweep,
    ensure_data,
    missing_files,
)
from regbias.data.registry import fetchable
from regbias.errors import DataError
from tests.cli import run_cli, runs


class _Server:
    """A static file server on 127.0.0.1 that records the paths it was asked for."""

    def __init__(self, root: Path) -> None:
        self.requests: list[str] = []
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def mirror(tmp_path_factory, shared_data_dir) -> Path:
    """Copies of the sentiment140 files, as the public sources would serve them."""
    root = tmp_path_factory.mktemp("mirror")
    for entry in fetchable()["sentiment140"]:
        (root / entry.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared_data_dir / entry.path, root / entry.path)
    return root


@pytest.fixture
def server(mirror, monkeypatch) -> Iterator[_Server]:
    serving = _Server(mirror)
    monkeypatch.setenv(MIRROR_ENV, serving.url)
    monkeypatch.delenv(OFFLINE_ENV, raising=False)
    yield serving
    serving.close()


def test_missing_data_is_downloaded_once(server, tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    assert ensure_data({"name": "sentiment140"}, data_dir) == data_dir
    assert missing_files("sentiment140", data_dir) == []
    assert len(server.requests) == len(fetchable()["sentiment140"])
    assert not list(data_dir.rglob("*.tmp"))
    ensure_data({"name": "sentiment140"}, data_dir)  # present: nothing asked again
    assert len(server.requests) == len(fetchable()["sentiment140"])


def test_corrupted_download_leaves_nothing(tmp_path, mirror, monkeypatch):
    broken = tmp_path / "broken"
    shutil.copytree(mirror, broken)
    first = broken / fetchable()["sentiment140"][0].path
    first.write_bytes(first.read_bytes()[:-10] + b"corrupted!")
    serving = _Server(broken)
    monkeypatch.setenv(MIRROR_ENV, serving.url)
    monkeypatch.delenv("REGBIAS_DATA_DIR", raising=False)
    try:
        with pytest.raises(DataError) as caught:
            ensure_data("sentiment140", tmp_path / "data")
    finally:
        serving.close()
    message = str(caught.value)
    assert "\n" not in message
    assert "checksum mismatch" in message
    assert "REGBIAS_DATA_DIR" in message
    assert "python -m regbias.data.fetch sentiment140" in message
    assert not (tmp_path / "data").exists()  # no empty folders, no half-written file


def test_offline_fails_fast_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "data"))
    start = time.perf_counter()
    with pytest.raises(DataError) as caught:
        ensure_data("sentiment140", None)
    assert time.perf_counter() - start < 10
    message = str(caught.value)
    assert "does not exist" in message and "could not be downloaded" in message
    assert "REGBIAS_DATA_DIR" in message and "regbias.data.fetch sentiment140" in message
    assert not (tmp_path / "data").exists()


def test_offline_switch_asks_nobody(server, tmp_path, monkeypatch):
    monkeypatch.setenv(OFFLINE_ENV, "1")
    monkeypatch.delenv("REGBIAS_DATA_DIR", raising=False)
    (tmp_path / "data").mkdir()
    with pytest.raises(DataError, match=r"lacks regional_sentiment140/au.csv and 7 more files"):
        ensure_data("sentiment140", tmp_path / "data")
    assert server.requests == []


def test_csv_needs_no_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, "http://127.0.0.1:9")
    dataset = {"name": "csv", "path": str(tmp_path / "my.csv")}
    assert ensure_data(dataset, tmp_path / "nowhere") is None
    assert not (tmp_path / "nowhere").exists()


def test_datasets_of_a_sweep():
    assert datasets_in_sweep("sentiment140", ["seed=0,1"]) == ["sentiment140"]
    assert datasets_in_sweep("sentiment140", ["dataset=reuters21578,csv", "seed=1"]) == [
        "reuters21578",
        "csv",
    ]


@pytest.mark.slow
def test_sweep_downloads_once_before_its_jobs(server, tmp_path):
    done = run_cli(
        tmp_path,
        "-m",
        "task=describe",
        "seed=0,1",
        data_dir=tmp_path / "data",
        env={MIRROR_ENV: server.url, OFFLINE_ENV: "0"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(server.requests) == len(fetchable()["sentiment140"])  # once, not once per job
    assert missing_files("sentiment140", tmp_path / "data") == []


def test_offline_sweep_stops_before_any_job(tmp_path):
    done = run_cli(tmp_path, "-m", "seed=0,1", "experiment=smoke", data_dir=tmp_path / "data")
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("regbias: error:")]
    assert len(errors) == 1 and "REGBIAS_DATA_DIR" in errors[0], done.stderr[-2000:]
    assert "Launching" not in done.stdout + done.stderr
    assert runs(tmp_path) == []
    assert not (tmp_path / "data").exists()
