"""The distances' own pair tests are gone: a config or override that sets them gets one error."""

from __future__ import annotations

import pytest

from regbias.app.settings import REMOVED_KEYS, read_settings, removed_override
from regbias.errors import ConfigError
from tests.cli import run_cli
from tests.conftest import compose_config


@pytest.mark.parametrize("key", REMOVED_KEYS)
def test_a_config_setting_a_removed_key_names_the_test_of_record(key):
    with pytest.raises(ConfigError, match=r"analysis\.pair_test") as error:
        read_settings(compose_config(f"+{key}=99"))
    assert key in str(error.value) and "test of record" in str(error.value)
    assert removed_override([f"{key}=99"]) is not None
    assert removed_override(["distance.lda.cross_fit=false"]) is None


def test_the_command_line_says_it_in_one_line(tmp_path):
    done = run_cli(tmp_path, "experiment=smoke", "distance.sinkhorn.relabellings=2")
    assert done.returncode == 2
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    assert line.startswith("regbias: error: distance.sinkhorn.relabellings was removed")
    assert "analysis.pair_test" in line and "Traceback" not in done.stderr
