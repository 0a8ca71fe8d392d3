"""Embedding cache: exact round trips, one computation per text, shards shared by processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from regbias.embeddings import cache as embedding_cache
from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens, text_key
from tests.conftest import packaged

IDENTITY = "random:test@0#max_length=16"


def fake_tokens(text: str) -> np.ndarray:
    """A deterministic token array per text, with awkward float32 values."""
    seed = int(text_key(text)[:8], 16)
    return np.random.default_rng(seed).normal(size=(len(text) % 5 + 1, 4)).astype(np.float32)


class CountingCompute:
    """A compute function that records what it was asked to embed."""

    def __init__(self, pooled: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.pooled = pooled

    def __call__(self, texts: list[str]) -> list[np.ndarray] | np.ndarray:
        self.calls.append(list(texts))
        if self.pooled:
            return np.stack([fake_tokens(text)[0] for text in texts]).reshape(len(texts), 4)
        return [fake_tokens(text) for text in texts]


def test_round_trip_is_exact_and_in_input_order(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    texts = ["b", "a", "ccc", "dddd"]
    got = cache.get_or_compute("tokens-real", IDENTITY, texts, CountingCompute())
    again = EmbeddingCache(tmp_path).get_or_compute("tokens-real", IDENTITY, texts[::-1], None)
    for text, array in zip(texts, got, strict=True):
        assert array.dtype == np.float32
        np.testing.assert_array_equal(array, fake_tokens(text))
    for text, array in zip(texts[::-1], again, strict=True):
        np.testing.assert_array_equal(array, fake_tokens(text))


def test_misses_are_computed_once_in_one_call(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    compute = CountingCompute()
    cache.get_or_compute("tokens-real", IDENTITY, ["a", "b"], compute)
    cache.get_or_compute("tokens-real", IDENTITY, ["b", "c", "d", "a"], compute)
    cache.get_or_compute("tokens-real", IDENTITY, ["d", "c"], compute)
    assert compute.calls == [["a", "b"], ["c", "d"]]
    assert (cache.hits, cache.misses) == (4, 4)


def test_duplicates_are_embedded_once(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    compute = CountingCompute()
    got = cache.get_or_compute("tokens-real", IDENTITY, ["x", "y", "x", "x"], compute)
    assert compute.calls == [["x", "y"]]
    assert len(got) == 4
    np.testing.assert_array_equal(got[0], got[3])
    got[0][:] = 0  # each result is the caller's own copy
    assert not np.array_equal(got[2], got[0])


def test_kinds_and_encoders_are_separate(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    compute = CountingCompute()
    cache.get_or_compute("tokens-real", IDENTITY, ["x"], compute)
    cache.get_or_compute("tokens-max_length", IDENTITY, ["x"], compute)
    cache.get_or_compute("tokens-real", IDENTITY + "-other", ["x"], compute)
    assert len(compute.calls) == 3


def test_pooled_vectors_come_back_as_one_array(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    compute = CountingCompute(pooled=True)
    first = cache.get_or_compute("pooled-cls", IDENTITY, ["a", "b"], compute)
    second = cache.get_or_compute("pooled-cls", IDENTITY, ["b", "c", "a"], compute)
    assert isinstance(second, np.ndarray) and second.shape == (3, 4)
    np.testing.assert_array_equal(second[[2, 0]], first)
    assert compute.calls == [["a", "b"], ["c"]]
    with pytest.raises(ValueError, match="holds pooled embeddings"):
        cache.put("pooled-cls", IDENTITY, ["z"], [np.zeros((2, 4), np.float32)])


def test_two_caches_on_one_root_see_each_others_shards(tmp_path: Path) -> None:
    first, second = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    first.get_or_compute("tokens-real", IDENTITY, ["a"], CountingCompute())
    second.get_or_compute("tokens-real", IDENTITY, ["b"], CountingCompute())
    compute = CountingCompute()
    got = first.get_or_compute("tokens-real", IDENTITY, ["a", "b"], compute)
    assert compute.calls == []
    np.testing.assert_array_equal(got[1], fake_tokens("b"))


def test_killed_write_leaves_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.get_or_compute("tokens-real", IDENTITY, ["kept"], CountingCompute())

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the index file dies half-written

    monkeypatch.setattr(embedding_cache.np, "savez", killed)
    with pytest.raises(KeyboardInterrupt):
        cache.get_or_compute("tokens-real", IDENTITY, ["lost"], CountingCompute())
    monkeypatch.undo()
    folder = next(path for path in tmp_path.iterdir() if path.is_dir())
    assert not list(folder.glob(".tmp-*"))  # the writer cleaned up its temporary file
    assert len(list(folder.glob("*.data.npy"))) == 2  # an orphan data file, ignored
    compute = CountingCompute()
    fresh = EmbeddingCache(tmp_path)
    fresh.get_or_compute("tokens-real", IDENTITY, ["kept", "lost"], compute)
    assert compute.calls == [["lost"]]


def test_stray_temporary_files_are_ignored_then_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.get_or_compute("tokens-real", IDENTITY, ["a"], CountingCompute())
    folder = next(path for path in tmp_path.iterdir() if path.is_dir())
    stray = folder / ".tmp-killed"
    stray.write_bytes(b"half a shard")
    (folder / "shard-0-junk.index.npz.partial").write_bytes(b"not a shard name")
    (folder / "shard-1-corrupt.index.npz").write_bytes(b"written by hand, not by a cache")
    compute = CountingCompute()
    EmbeddingCache(tmp_path).get_or_compute("tokens-real", IDENTITY, ["a", "b"], compute)
    assert "corrupt embedding cache shard" in caplog.text and "shard-1-corrupt" in caplog.text
    assert compute.calls == [["b"]] and stray.exists()
    old = time.time() - 7 * 3600
    os.utime(stray, (old, old))
    assert EmbeddingCache(tmp_path).remove_stale_temp_files() == 0  # __init__ removed it
    assert not stray.exists()


WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from regbias.embeddings.cache import EmbeddingCache, text_key

    def fake(text):
        seed = int(text_key(text)[:8], 16)
        rng = np.random.default_rng(seed)
        return rng.normal(size=(len(text) % 5 + 1, 4)).astype(np.float32)

    cache = EmbeddingCache(sys.argv[1])
    offset = int(sys.argv[2])
    for step in range(15):
        texts = [f"text {(offset + step + i) % 40}" for i in range(6)]
        got = cache.get_or_compute("tokens-real", "concurrent", texts, lambda t: list(map(fake, t)))
        assert all(np.array_equal(a, fake(x)) for a, x in zip(got, texts))
    """
)


def test_concurrent_writers_leave_a_readable_cache(tmp_path: Path) -> None:
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(offset)], env=env)
        for offset in (0, 10)
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    texts = [f"text {i}" for i in range(40)]
    reachable = sorted(
        {(offset + s + i) % 40 for offset in (0, 10) for s in range(15) for i in range(6)}
    )
    compute = CountingCompute()
    got = EmbeddingCache(tmp_path).get_or_compute("tokens-real", "concurrent", texts, compute)
    assert compute.calls == [[t for i, t in enumerate(texts) if i not in reachable]]
    for text, array in zip(texts, got, strict=True):
        np.testing.assert_array_equal(array, fake_tokens(text))


class FakeEncoder:
    """Just enough of an Encoder for the convenience functions."""

    class spec:
        identity = IDENTITY
        pooling = "mean"

    hidden_size = 4

    def __init__(self) -> None:
        self.calls = 0

    def token_embeddings(self, texts, *, padding="real", batch_size=64):
        self.calls += 1
        return [fake_tokens(text) for text in texts]

    def pooled(self, texts, batch_size=64):
        self.calls += 1
        return np.stack([fake_tokens(text)[0] for text in texts]).reshape(len(texts), 4)


def test_embed_helpers_with_and_without_cache(tmp_path: Path) -> None:
    encoder = FakeEncoder()
    cache = EmbeddingCache(tmp_path)
    direct = embed_tokens(encoder, None, ["a", "bb"])
    cached = embed_tokens(encoder, cache, ["a", "bb"])
    cached_again = embed_tokens(encoder, cache, ["bb", "a"])
    assert encoder.calls == 2
    np.testing.assert_array_equal(direct[1], cached_again[0])
    np.testing.assert_array_equal(cached[0], cached_again[1])
    pooled = embed_pooled(encoder, cache, ["a", "bb"])
    assert pooled.shape == (2, 4)
    np.testing.assert_array_equal(embed_pooled(encoder, cache, ["bb"]), pooled[1:])
    assert embed_pooled(encoder, cache, []).shape == (0, 4)
    assert encoder.calls == 3


def test_tiny_encoder_through_the_cache_is_exact(tmp_path: Path) -> None:
    from regbias.embeddings.encoder import load_encoder
    from regbias.embeddings.spec import EncoderSpec

    spec = packaged(EncoderSpec, "encoder", "encoder=tiny", max_length=16, pooling="mean")
    encoder = load_encoder(spec, device="cpu")
    texts = ["g'day mate", "eh", "cheers love", "eh"]
    cache = EmbeddingCache(tmp_path)
    for padding in ("real", "max_length"):
        direct = encoder.token_embeddings(texts, padding=padding)
        embed_tokens(encoder, cache, texts[:2], padding=padding)
        cached = embed_tokens(encoder, EmbeddingCache(tmp_path), texts, padding=padding)
        for a, b in zip(direct, cached, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(
        embed_pooled(encoder, cache, texts), encoder.pooled(texts), atol=1e-5
    )


def test_an_old_temporary_folder_in_the_cache_is_left_alone(tmp_path: Path) -> None:
    """A ``.tmp-`` folder (a killed model assembly's, or the user's own where ``cache_dir`` is
    a folder of theirs) neither stops the cache opening nor is deleted by the cache's sweep."""
    folder = tmp_path / "models" / ".tmp-all-MiniLM-L6-v2-0123456789ab"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    old = time.time() - 7 * 3600
    os.utime(folder, (old, old))
    assert EmbeddingCache(tmp_path).remove_stale_temp_files() == 0
    assert (folder / "config.json").exists()


def test_a_users_old_temporary_file_beside_the_cache_is_kept(tmp_path: Path) -> None:
    """``paths.cache_dir`` may be a folder of the user's: only the cache's key folders are
    swept, so a ``.tmp-`` file of theirs in another subfolder stays, however old."""
    theirs = tmp_path / "notes" / ".tmp-draft"
    theirs.parent.mkdir()
    theirs.write_text("a user's file")
    old = time.time() - 7 * 3600
    os.utime(theirs, (old, old))
    assert EmbeddingCache(tmp_path).remove_stale_temp_files() == 0
    assert theirs.read_text() == "a user's file"
