"""Found beside the probes of issue 36: the embedding benchmark's data directory is a run's.

``benchmarks/embedding_speed.py`` defaulted ``--data-dir`` to one machine's absolute path, not
to ``$REGBIAS_DATA_DIR``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "embedding_speed.py"


def test_the_default_data_dir_is_the_environments(tmp_path):
    assert "/work/shared" not in SCRIPT.read_text()
    env = {**os.environ, "REGBIAS_DATA_DIR": str(tmp_path / "mine")}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "REGBIAS_DATA_DIR" in done.stdout
