"""Issue 46, fault list item 6: a read-only MLflow store is one line, not 87 lines of traceback.

MLflow logs every SQLAlchemy error's traceback before raising it; regbias's own line says it.
The store lies on a real read-only mount (root only: as root, file modes do not stop writes).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from regbias.tracking.runs import TrackingSettings, connect
from tests.app.test_analyze_task import write_table
from tests.conftest import packaged
from tests.faults.conftest import mounted_tmpfs, regbias_lines
from tests.faults.test_unwritable_folder import regbias_in_child


@pytest.fixture
def read_only_store(tmp_path):
    """A SQLite store holding the experiment ``kept``, its disk remounted read-only."""
    with mounted_tmpfs(tmp_path / "store", "100m") as mount:
        uri = f"sqlite:///{mount}/mlruns.db"
        settings = packaged(TrackingSettings, "tracking", uri=uri, experiment="kept")
        pid = os.fork()  # the child holds the store open, not pytest: the remount needs it shut
        if pid == 0:
            try:
                connect(settings)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield uri


@pytest.mark.parametrize("experiment", ["kept", "new"])
def test_a_read_only_store_is_one_line(tmp_path, read_only_store, experiment):
    """A new experiment fails to be created; a kept one's artifact folder (on the same
    read-only disk) is found unwritable before any run: either way one line."""
    table = write_table(tmp_path / "pairs.csv")
    code, err = regbias_in_child(
        "task=analyze",
        f"analysis.analyze.input={table}",
        f"tracking.uri={read_only_store}",
        f"tracking.experiment={experiment}",
        f"hydra.run.dir={tmp_path}/out",
    )
    assert code == 2, err[-3000:]
    (line,) = regbias_lines(err)
    if experiment == "new":
        assert read_only_store in line and "readonly database" in line, line
        assert err.count("readonly") == 1, err[-3000:]
    else:
        artifacts = read_only_store.removeprefix("sqlite:///").removesuffix(".db")
        assert f"cannot write the MLflow artifact folder {artifacts} (Read-only" in line, line
    assert "Traceback" not in err
