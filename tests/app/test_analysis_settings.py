"""The analysis group mirrors the analysis tree, with one seed handed to every consumer."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from regbias.app.settings import read_settings
from regbias.errors import ConfigError
from regbias.settings_reader import HANDED_DOWN, build, handed_down
from tests.conftest import compose_config


@dataclass(frozen=True)
class _Inner:
    cap: int
    seed: int = field(metadata=HANDED_DOWN)


@dataclass(frozen=True)
class _Middle:
    inner: _Inner


@dataclass(frozen=True)
class _Outer:
    seed: int
    middle: _Middle


def test_a_handed_down_field_takes_the_nearest_enclosing_key():
    built = build(_Outer, {"seed": 7, "middle": {"inner": {"cap": 3}}}, "x")
    assert built.middle.inner == _Inner(cap=3, seed=7)
    config = {"x": {"seed": 7, "middle": {"inner": {"cap": 3}}}}
    handed = handed_down(config, "x.middle.inner")
    assert handed["seed"] == ("x.seed", 7)
    assert build(_Inner, {"cap": 3}, "x.middle.inner", handed) == _Inner(cap=3, seed=7)


def test_a_handed_down_field_is_no_key_of_its_own_group():
    with pytest.raises(
        ConfigError, match=r"^x\.middle\.inner\.seed is not a setting of its own: it is x\.seed"
    ):
        build(_Outer, {"seed": 7, "middle": {"inner": {"cap": 3, "seed": 1}}}, "x")
    with pytest.raises(ConfigError, match=r"x\.seed must be an integer"):
        build(_Outer, {"seed": "a", "middle": {"inner": {"cap": 3}}}, "x")
    with pytest.raises(ConfigError, match=r"x\.inner\.seed is handed down"):
        build(_Middle, {"inner": {"cap": 3}}, "x")


def test_one_analysis_seed_reaches_every_test_and_plant():
    default = read_settings(compose_config()).analysis
    seeds = (
        default.seed,
        default.tests.embedding.seed,
        default.tests.performance.seed,
        default.power.seed,
    )
    assert seeds == (0, 0, 0, 0)  # the four seeds of before, all 0: the same streams
    moved = read_settings(compose_config("analysis.seed=5")).analysis
    assert {
        moved.seed,
        moved.tests.embedding.seed,
        moved.tests.performance.seed,
        moved.power.seed,
    } == {5}
    with pytest.raises(ConfigError, match=r"it is analysis\.seed"):
        read_settings(compose_config("+analysis.tests.performance.seed=1"))
