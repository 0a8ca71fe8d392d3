"""The ``regbias`` command: the same Hydra app as run.py, configs found from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "REGBIAS_OFFLINE": "1", **env}
    return subprocess.run(
        command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_console_app_composes_what_run_py_composes(tmp_path):
    args = ["--cfg", "job", "encoder=tiny", "experiment=smoke", "seed=3"]
    console = _run([sys.executable, "-m", "regbias.app.cli", *args], cwd=tmp_path)
    design = _run([sys.executable, str(ROOT / "run.py"), *args], cwd=tmp_path)
    assert console.returncode == 0, console.stderr[-2000:]
    assert console.stdout == design.stdout
    assert "name: tiny" in console.stdout and "seed: 3" in console.stdout


def test_entry_point_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'regbias = "regbias.app.cli:main"' in text


@pytest.mark.slow
def test_installed_wheel_finds_its_configs(tmp_path):
    """A non-editable install (a wheel) ships the configs: `regbias` works from any folder."""
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "anywhere"
    elsewhere.mkdir()
    build = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation"]
    done = _run([*build, "-w", str(wheels), "-q"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = wheels.glob("regbias-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "regbias/conf/config.yaml" in names and "regbias/conf/encoder/tiny.yaml" in names
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target)]
    assert _run([*install, str(wheel), "-q"], cwd=tmp_path).returncode == 0
    done = _run(
        [str(target / "bin" / "regbias"), "--cfg", "job", "encoder=tiny"],
        cwd=elsewhere,
        PYTHONPATH=str(target),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "name: tiny" in done.stdout
