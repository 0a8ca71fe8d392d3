"""Item 2 and 14 of issue 10: a cache that checks itself, reports, quarantines and recomputes."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

from regbias.embeddings import cache as cache_module
from regbias.embeddings.cache import EmbeddingCache
from regbias.errors import CacheError
from tests.faults.conftest import mounted_tmpfs

KIND, IDENTITY = "pooled-mean", "fake-encoder"
TEXTS = [f"text number {i}" for i in range(40)]


def fake_pooled(texts: list[str]) -> np.ndarray:
    return np.stack([np.full(8, float(len(t)) + i / 100) for i, t in enumerate(texts)])


def truth(texts: list[str]) -> np.ndarray:
    """What a correct cache returns: each text's vector as first computed for TEXTS."""
    table = dict(zip(TEXTS, fake_pooled(TEXTS), strict=True))
    return np.stack([table[t] for t in texts]).astype(np.float32)


class Counting:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        table = dict(zip(TEXTS, fake_pooled(TEXTS), strict=True))
        return np.stack([table[t] for t in texts])


def filled(root: Path) -> Path:
    """A cache holding TEXTS in one shard; returns the shard's data file."""
    EmbeddingCache(root).get_or_compute(KIND, IDENTITY, TEXTS, Counting())
    (data,) = root.glob("*/shard-*.data.npy")
    return data


@pytest.mark.parametrize("garbage", ["finite", "nan"])
def test_overwritten_shard_rows_are_detected_quarantined_and_recomputed(tmp_path, caplog, garbage):
    data = filled(tmp_path)
    rows = np.load(data, mmap_mode="r+")
    fill = np.random.default_rng(0).normal(size=(5, 8)) if garbage == "finite" else np.nan
    rows[10:15] = fill  # same size, so only a checksum can tell
    rows.flush()
    del rows
    compute = Counting()
    got = EmbeddingCache(tmp_path).get_or_compute(KIND, IDENTITY, TEXTS, compute)
    np.testing.assert_array_equal(got, truth(TEXTS))
    assert compute.calls == [TEXTS]  # everything in the bad shard is embedded again
    warnings = [r for r in caplog.records if "corrupt embedding cache shard" in r.message]
    assert len(warnings) == 1 and data.name.replace(".data.npy", "") in warnings[0].message
    assert (data.parent / "quarantine" / data.name).exists() and not data.exists()


def test_truncated_index_is_quarantined_not_a_crash(tmp_path, caplog):
    data = filled(tmp_path)
    index = data.with_name(data.name.replace(".data.npy", ".index.npz"))
    os.truncate(index, index.stat().st_size // 2)  # `truncate -s`: BadZipFile before the fix
    compute = Counting()
    got = EmbeddingCache(tmp_path).get_or_compute(KIND, IDENTITY, TEXTS[:3], compute)
    np.testing.assert_array_equal(got, truth(TEXTS[:3]))
    assert compute.calls == [TEXTS[:3]]
    assert "corrupt embedding cache shard" in caplog.text and str(index) in caplog.text
    assert not index.exists()
    # the next process finds a healthy cache and no warning
    caplog.clear()
    again = Counting()
    EmbeddingCache(tmp_path).get_or_compute(KIND, IDENTITY, TEXTS[:3], again)
    assert again.calls == [] and "corrupt" not in caplog.text


def test_truncated_data_file_is_quarantined(tmp_path, caplog):
    data = filled(tmp_path)
    os.truncate(data, data.stat().st_size - 64)
    compute = Counting()
    EmbeddingCache(tmp_path).get_or_compute(KIND, IDENTITY, TEXTS[:2], compute)
    assert compute.calls == [TEXTS[:2]] and "corrupt embedding cache shard" in caplog.text


def test_a_shard_is_verified_once_per_process(tmp_path, monkeypatch):
    filled(tmp_path)
    digests = []
    original = cache_module._file_digest
    monkeypatch.setattr(
        cache_module, "_file_digest", lambda path: digests.append(path) or original(path)
    )
    cache = EmbeddingCache(tmp_path)
    for _ in range(3):
        cache.get_or_compute(KIND, IDENTITY, TEXTS[:5], Counting())
    assert len(digests) == 1


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_cache_files_honour_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        filled(tmp_path)
    finally:
        os.umask(previous)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o777 == 0o666 & ~umask for p in files), [
        (p.name, oct(p.stat().st_mode)) for p in files
    ]


def test_full_disk_names_the_file(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_module.np, "save", full)
    with pytest.raises(CacheError, match=r"cannot write the embedding cache file .*shard-.*"):
        EmbeddingCache(tmp_path).get_or_compute(KIND, IDENTITY, TEXTS, Counting())
    assert not list(tmp_path.glob("*/.tmp-*"))


@pytest.fixture
def tiny_disk(tmp_path):
    """A 1 MB tmpfs (root only; skipped where mounting is not allowed)."""
    with mounted_tmpfs(tmp_path / "disk", "1m") as mount:
        yield mount


def test_really_full_disk_names_the_file(tiny_disk):
    big = [f"text {i}" for i in range(5000)]  # 5000 x 64 floats: more than 1 MB

    def compute(texts):
        return np.ones((len(texts), 64), np.float32)

    with pytest.raises(CacheError, match=r"No space left on device.*paths.cache_dir"):
        EmbeddingCache(tiny_disk).get_or_compute(KIND, IDENTITY, big, compute)
    assert not list(tiny_disk.glob("*/.tmp-*"))
