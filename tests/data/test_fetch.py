"""Dataset download: checksums, atomic writes and one-line errors, all without network."""

from __future__ import annotations

import hashlib
import io
import urllib.error
from pathlib import Path
from typing import BinaryIO

import pytest

from regbias.data import fetch as fetch_module
from regbias.data.data_dir import data_dir_for
from regbias.data.fetch import fetch, fetch_command, main
from regbias.data.registry import fetchable
from regbias.errors import DataError


class SharedDataOpener:
    """Serves each manifest URL from the shared data folder instead of the network."""

    def __init__(self, shared_data_dir: Path, corrupt: str | None = None) -> None:
        self.by_url = {e.url: shared_data_dir / e.path for es in fetchable().values() for e in es}
        self.corrupt = corrupt
        self.opened: list[str] = []

    def __call__(self, url: str) -> BinaryIO:
        self.opened.append(url)
        content = self.by_url[url].read_bytes()
        if self.corrupt and url.endswith(self.corrupt):
            content = content[:-1] + b"!"
        return io.BytesIO(content)


def offline(url: str) -> BinaryIO:
    raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))


def test_manifest_matches_the_shared_checksums(shared_data_dir: Path) -> None:
    sums = {}
    for line in (shared_data_dir / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        sums[name.removeprefix("./")] = digest
    entries = [entry for entries in fetchable().values() for entry in entries]
    assert len(entries) == 8 + 22 + 7
    assert all(sums[entry.path] == entry.sha256 for entry in entries)
    assert all(entry.url.startswith("https://") for entry in entries)


def test_fetch_downloads_verifies_and_skips_good_files(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    opener = SharedDataOpener(shared_data_dir)
    paths = fetch("sentiment140", tmp_path, opener=opener)
    assert len(paths) == len(opener.opened) == 8
    for path in paths:
        relative = path.relative_to(tmp_path)
        assert path.read_bytes() == (shared_data_dir / relative).read_bytes()
    assert not list(tmp_path.rglob("*.tmp"))
    (tmp_path / "regional_sentiment140/nz.csv").write_text("damaged")
    opener.opened.clear()
    fetch("sentiment140", tmp_path, opener=opener)
    assert [url.rsplit("/", 1)[1] for url in opener.opened] == ["nz.csv"]


def test_checksum_mismatch_writes_nothing(shared_data_dir: Path, tmp_path: Path) -> None:
    opener = SharedDataOpener(shared_data_dir, corrupt="za.csv")
    with pytest.raises(DataError, match=r"checksum mismatch for https://\S+/za\.csv") as error:
        fetch("sentiment140", tmp_path, opener=opener)
    assert "\n" not in str(error.value)
    assert not (tmp_path / "regional_sentiment140/za.csv").exists()
    assert not list(tmp_path.rglob("*.tmp"))


def test_offline_error_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(
        DataError, match=r"cannot download https://\S+ \(.*name resolution\)"
    ) as error:
        fetch("reuters21578", tmp_path, opener=offline)
    assert "internet connection" in str(error.value)
    assert "\n" not in str(error.value)
    assert not list(tmp_path.rglob("*.tmp"))


def test_http_error_is_reported(tmp_path: Path) -> None:
    def not_found(url: str) -> BinaryIO:
        raise urllib.error.HTTPError(url, 404, "Not Found", hdrs=None, fp=None)  # type: ignore[arg-type]

    with pytest.raises(DataError, match=r"\(HTTP Error 404: Not Found\)"):
        fetch("reuters21578", tmp_path, opener=not_found)


def test_unknown_dataset(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"unknown dataset 'imdb': choose one of .*sentiment140"):
        fetch("imdb", tmp_path)


def test_main_uses_urlopen_and_reports_one_line(
    shared_data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", lambda url, timeout: offline(url))
    assert main(["sentiment140", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot download") and err.count("\n") == 1

    opener = SharedDataOpener(shared_data_dir)
    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", lambda url, timeout: opener(url))
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "from_env"))
    assert main(["sentiment140"]) == 0
    assert "8 files verified" in capsys.readouterr().out
    assert (tmp_path / "from_env/sentiment140_pool/positive.txt").is_file()
    digest = hashlib.sha256((tmp_path / "from_env/sentiment140_pool/positive.txt").read_bytes())
    assert digest.hexdigest() == fetchable()["sentiment140"][-1].sha256


def test_default_data_dir_and_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REGBIAS_DATA_DIR", raising=False)
    assert data_dir_for() == Path("data")
    monkeypatch.setenv("REGBIAS_DATA_DIR", "/srv/data")
    assert data_dir_for() == Path("/srv/data")
    assert fetch_command("reuters21578") == "python -m regbias.data.fetch reuters21578"
    assert (
        fetch_command("sentiment140", Path("d"))
        == "python -m regbias.data.fetch sentiment140 --data-dir d"
    )
