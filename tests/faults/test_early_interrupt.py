"""Issue 56, item 11: Ctrl-C in the first seconds is one line and exit 130, not a traceback.

While Hydra composed the config and imported the study (about 10 s on 2 cores), Ctrl-C was a
95-line traceback, its first lines an ``AttributeError`` of the import it cut short. The
handler is now in place from the first line of ``run.py``: ``regbias: interrupted``, 130.

Each child runs the real ``run.py`` (``runpy``), with Ctrl-C sent at a known moment.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli import ROOT

RUN = textwrap.dedent(
    """
    import runpy, sys
    sys.argv = ["run.py", "experiment=smoke", "tracking.uri=sqlite:///mlruns.db"]
    runpy.run_path({run_py!r}, run_name="__main__")
    """
)
# Ctrl-C while Hydra composes the config: the KeyboardInterrupt is raised inside Hydra.
WHILE_COMPOSING = textwrap.dedent(
    """
    import os, signal
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    load = ConfigLoaderImpl.load_configuration

    def ctrl_c_while_composing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return load(*args, **kwargs)

    ConfigLoaderImpl.load_configuration = ctrl_c_while_composing
    """
)
# Ctrl-C inside OmegaConf, early in the composition: raised there, it left a node half-changed
# and Hydra reported OmegaConf's AttributeError, exit 1 (a race CI met once in a few runs).
INSIDE_OMEGACONF = textwrap.dedent(
    """
    import os, signal
    from omegaconf import base

    calls = [0]
    invalidate = base.Container._invalidate_flags_cache

    def ctrl_c_inside_omegaconf(self):
        calls[0] += 1
        if calls[0] == 10:
            os.kill(os.getpid(), signal.SIGINT)
        return invalidate(self)

    base.Container._invalidate_flags_cache = ctrl_c_inside_omegaconf
    """
)
# Ctrl-C 0.3 s into the import of Hydra's callback, the study's modules (seconds).
WHILE_IMPORTING = textwrap.dedent(
    """
    import os, signal, threading
    from hydra._internal.instantiate import _instantiate2

    locate = _instantiate2._locate

    def ctrl_c_while_importing(path):
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        return locate(path)

    _instantiate2._locate = ctrl_c_while_importing
    """
)


def _child(tmp_path: Path, setup: str) -> subprocess.Popen[str]:
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env["REGBIAS_OFFLINE"] = "1"
    env["REGBIAS_CACHE_DIR"] = str(tmp_path / "cache")
    code = setup + RUN.format(run_py=str(ROOT / "run.py"))
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _assert_one_line(child: subprocess.Popen[str]) -> None:
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, stderr[-3000:]
    assert stderr.strip() == "regbias: interrupted", stderr[-3000:]


@pytest.mark.parametrize(
    "setup",
    [WHILE_COMPOSING, INSIDE_OMEGACONF, WHILE_IMPORTING],
    ids=["composing", "inside-omegaconf", "importing"],
)
def test_ctrl_c_while_the_config_is_composed_is_one_line_and_130(tmp_path, setup):
    _assert_one_line(_child(tmp_path, setup))


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
def test_ctrl_c_in_the_first_second_of_run_py_is_one_line_and_130(tmp_path):
    """A real Ctrl-C, sent once the child has loaded Hydra's YAML library (``run.py`` has run
    its first line by then, so not before Python started it) and 0.2 s later."""
    child = _child(tmp_path, "")
    maps = Path(f"/proc/{child.pid}/maps")
    deadline = time.monotonic() + 60
    while "_yaml" not in maps.read_text() and child.poll() is None:
        assert time.monotonic() < deadline, "the child never loaded PyYAML"
        time.sleep(0.02)
    time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    _assert_one_line(child)
