"""Removed and moved keys: a config, an override or a saved config that sets one gets one error.

The distances' own pair tests are gone (their keys name the test of record); the analysis
group's old flat keys moved when it was laid out by question (each names its new place).
"""

from __future__ import annotations

import functools

import pytest
from omegaconf import DictConfig, OmegaConf

from regbias.app.removed_keys import MOVED_KEYS, REMOVED_KEYS, removed_override
from regbias.app.settings import plain_config, read_settings, variant_settings
from regbias.errors import ConfigError
from tests.cli import run_cli
from tests.conftest import compose_config


@functools.cache
def _packaged() -> DictConfig:
    return compose_config()


@pytest.mark.parametrize("key", REMOVED_KEYS)
def test_a_config_setting_a_removed_key_names_the_test_of_record(key):
    with pytest.raises(ConfigError, match=r"analysis\.tests\.embedding") as error:
        read_settings(compose_config(f"+{key}=99"))
    assert key in str(error.value) and "test of record" in str(error.value)
    assert removed_override([f"{key}=99"]) is not None
    assert removed_override(["distance.lda.cross_fit=false"]) is None


def _setting(values: dict, key: str, value: object) -> dict:
    """``values`` (a plain config) with the dotted ``key`` set, its groups made as needed."""
    node = values
    *groups, name = key.split(".")
    for group in groups:
        node = node.setdefault(group, {})
    node[name] = value
    return values


@pytest.mark.parametrize("key", MOVED_KEYS)
def test_a_config_setting_a_moved_key_names_its_new_place(key):
    config = OmegaConf.create(_setting(plain_config(_packaged()), key, 99))
    with pytest.raises(ConfigError) as error:
        read_settings(config)
    message = str(error.value)
    assert message.startswith(f"{key} was removed: it is {MOVED_KEYS[key]} now")
    assert removed_override([f"{key}=99"]) is not None


def test_every_new_place_is_a_key_of_the_packaged_config():
    values = plain_config(_packaged())
    for new in MOVED_KEYS.values():
        node = values
        for part in new.split("."):
            assert part in node, f"{new} is not in the packaged config"
            node = node[part]
    assert not any(new in MOVED_KEYS for new in MOVED_KEYS.values())


def test_overrides_of_a_moved_key_or_group_are_caught_before_hydra():
    caught = removed_override(["task=run", "analysis.pair_test.relabellings=99"])
    assert caught is not None and "analysis.tests.embedding.relabellings" in str(caught)
    whole = removed_override(["~analysis.perf_test"])
    assert whole is not None and "analysis.tests.performance" in str(whole)
    seed = removed_override(["+analysis.power.seed=3"])
    assert seed is not None and "it is analysis.seed now" in str(seed)
    assert removed_override(["analysis.tests.embedding.relabellings=99"]) is None


def test_a_saved_config_of_an_older_version_names_the_new_place(tmp_path):
    """A sweep's job config written before the move, read back for its variant."""
    saved = OmegaConf.to_container(compose_config(), resolve=False)
    assert isinstance(saved, dict)
    analysis = saved["analysis"]
    analysis["pair_test"] = {"enabled": True, "relabellings": 999, "effect_resamples": 999}
    analysis["n_permutations"] = analysis["correlation"].pop("relabellings")
    folder = tmp_path / "0" / ".hydra"
    folder.mkdir(parents=True)
    OmegaConf.save(OmegaConf.create(saved), folder / "config.yaml")
    with pytest.raises(ConfigError, match=r"^analysis\.n_permutations was removed: it is "):
        variant_settings(read_settings(compose_config()), tmp_path, 0)


def test_the_command_line_says_it_in_one_line(tmp_path):
    done = run_cli(tmp_path, "experiment=smoke", "distance.sinkhorn.relabellings=2")
    assert done.returncode == 2
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    assert line.startswith("regbias: error: distance.sinkhorn.relabellings was removed")
    assert "analysis.tests.embedding" in line and "Traceback" not in done.stderr
    moved = run_cli(tmp_path, "experiment=smoke", "analysis.pair_test.relabellings=99")
    assert moved.returncode == 2
    (line,) = [line for line in moved.stderr.splitlines() if line.strip()]
    assert line.startswith(
        "regbias: error: analysis.pair_test.relabellings was removed: it is "
        "analysis.tests.embedding.relabellings now"
    )
