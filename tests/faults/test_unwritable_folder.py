"""Item 11 of issue 27: a folder Hydra cannot write its outputs to is one line, not tracebacks."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

from regbias.app import cli
from tests.faults.conftest import regbias_lines


def regbias_in_child(*args: str) -> tuple[int, str]:
    """``regbias ARGS`` (Hydra's own start) in a forked child: its exit code and stderr.

    The child inherits the imports (fast) and takes Hydra's global state and logging set-up
    with it.
    """
    with tempfile.TemporaryFile(mode="w+") as errors:
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 70
            try:
                os.dup2(errors.fileno(), 2)
                sys.stdout = sys.stderr = os.fdopen(2, "w", closefd=False)
                sys.argv = ["regbias", *args]
                cli.main()
                code = 0
            except SystemExit as exited:
                code = exited.code if isinstance(exited.code, int) else 1
            finally:
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        errors.seek(0)
        return os.waitstatus_to_exitcode(status), errors.read()


@pytest.mark.parametrize(
    ("mode", "key"), [([], "hydra.run.dir"), (["-m"], "hydra.sweep.dir")], ids=["run", "sweep"]
)
def test_an_unwritable_output_folder_is_one_line(tmp_path, mode, key):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the outputs would go\n")
    code, err = regbias_in_child(*mode, "experiment=smoke", "task=describe", f"{key}={blocked}/out")
    assert code == 2, err[-2000:]
    (line,) = regbias_lines(err)
    assert line.startswith(f"regbias: error: cannot write the output folder {blocked}/out")
    assert f"{key}=" in line and "Traceback" not in err
