"""Item 6 of issue 27: ``analysis.significance`` is a level in (0, 1), refused otherwise."""

from __future__ import annotations

import pytest

from regbias.app.settings import read_settings
from regbias.errors import ConfigError
from tests.cli import run_job, runs
from tests.faults.conftest import composed, regbias_lines


@pytest.mark.parametrize("level", ["1.5", "0", "1", "-0.05"])
def test_a_significance_outside_zero_one_is_one_config_error(level):
    with pytest.raises(ConfigError, match=rf"analysis.significance .* in \(0, 1\).*got {level}"):
        read_settings(composed(f"analysis.significance={level}"))


def test_a_valid_significance_is_kept():
    assert read_settings(composed("analysis.significance=0.01")).analysis.significance == 0.01


def test_analyze_with_level_1_5_ends_in_one_line_and_no_run(tmp_path):
    table = tmp_path / "pairs.csv"
    table.write_text("group_a,group_b,dist_x,gap_y\na,b,1,2\na,c,2,1\nb,c,3,3\n")
    done = run_job(
        tmp_path, "task=analyze", f"analysis.analyze.input={table}", "analysis.significance=1.5"
    )
    assert done.returncode != 0
    lines = regbias_lines(done.stderr)
    assert len(lines) == 1 and "analysis.significance" in lines[0], done.stderr
    assert runs(tmp_path) == []
