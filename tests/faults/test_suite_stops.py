"""SIGTERM to pytest ends the run, even after a test installed regbias's SIGTERM flag.

A test that starts a sweep in-process installs :func:`regbias.interrupt.install_sigterm_flag`;
left in place, an outer ``timeout``'s SIGTERM only set the flag, the suite went on and later
tests failed with ``StopRequested`` (issue 46). ``tests/conftest.py`` restores the handlers
after every test; here a child pytest with that conftest is sent SIGTERM while it sleeps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli import ROOT

_TESTS = """
import time
from pathlib import Path

from regbias.interrupt import install_sigterm_flag

HERE = Path(__file__).parent


def test_a_sweep_installs_the_flag():
    assert install_sigterm_flag()


def test_a_long_one():
    (HERE / "sleeping").touch()
    time.sleep(120)


def test_after_the_signal():
    (HERE / "went_on").touch()
"""


def test_sigterm_ends_the_run_and_no_later_test_runs(tmp_path: Path) -> None:
    (tmp_path / "test_child.py").write_text(_TESTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider"]
    child = subprocess.Popen(
        [*command, "-q", "--rootdir", str(tmp_path), str(tmp_path / "test_child.py")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "sleeping").exists():
            assert child.poll() is None, child.communicate()[0]
            assert time.monotonic() < deadline, "the child never reached its long test"
            time.sleep(0.1)
        sent = time.monotonic()
        child.send_signal(signal.SIGTERM)
        returncode = child.wait(timeout=20)
        waited = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert returncode != 0 and waited < 10
    assert not (tmp_path / "went_on").exists()
