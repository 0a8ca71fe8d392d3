"""The Sinkhorn benchmark still runs against the package (it is not a test of speed).

Benchmarks call the package's own readers and solvers; a change of their signatures broke
``benchmarks/sinkhorn.py`` once without any test noticing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.slow
def test_the_benchmark_runs_on_real_clouds_and_prints_its_last_line(tmp_path, shared_data_dir):
    env = os.environ | {
        "REGBIAS_DATA_DIR": str(shared_data_dir),
        "REGBIAS_CACHE_DIR": str(tmp_path / "cache"),
    }
    args = ["--clouds", "real", "--n", "300", "--quick", "--no-geomloss", "--no-warm"]
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "sinkhorn.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("default: speed vs geomloss n/a, rel.err vs exact"), last
    assert last.endswith("converged 3/3"), last
