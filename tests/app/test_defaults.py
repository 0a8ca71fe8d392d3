"""Defaults are written once, in the YAML: no settings field repeats a value its YAML gives.

A field keeps a code default only for a key the packaged configs leave out (an optional key,
such as ``encoder.random_weights_seed``); a preset that sets such a key to another value
makes a choice, not a copy. Every option of the groups chosen per option is composed.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest
from omegaconf import OmegaConf

from regbias.config_files import group_options
from regbias.distances.plugin import Distance
from regbias.distances.suite import DistanceSettings
from regbias.settings_reader import TARGET, target_class
from regbias.study.settings import StudySettings
from tests.conftest import compose_config

# The distance group's settings are being restructured (issue 29); it joins when that lands.
# Groups whose YAML is chosen per option; each option is composed on its own.
PER_OPTION = ("dataset", "encoder", "finetune", "trainer")
# What an option needs to compose (its ??? keys are the user's).
NEEDS = {"dataset=csv": ["dataset.path=any.csv"], "encoder=local": ["encoder.location=/x"]}


def copies(kind: type, values: dict[str, Any], key: str) -> list[str]:
    """``key: value`` for every field of ``kind`` whose code default is the value ``values`` give.

    A group with a ``_target_`` is read as the class it names; a dataclass that reads its own
    config (``from_config``) is one value.
    """
    if TARGET in values:
        kind = target_class(values[TARGET], kind, f"{key}.{TARGET}")
    hints = typing.get_type_hints(kind)
    found = []
    for field in dataclasses.fields(kind):
        name = f"{key}.{field.name}" if key else field.name
        if field.name not in values:
            continue
        hint, value = hints[field.name], values[field.name]
        if dataclasses.is_dataclass(hint) and isinstance(value, dict):
            if hint is DistanceSettings:  # its draws' keys, then each distance's block
                found += _distances(value, name)
            elif not hasattr(hint, "from_config"):
                found += copies(hint, value, name)  # type: ignore[arg-type]
            continue
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            continue
        if _plain(default) == _plain(value):
            found.append(f"{name}: {value!r}")
    return found


def _distances(values: dict[str, Any], key: str) -> list[str]:
    """:func:`copies` for the distance group: its draws' keys and every distance block."""
    blocks = {k: v for k, v in values.items() if isinstance(v, dict) and TARGET in v}
    plain = {k: v for k, v in values.items() if k not in blocks}
    found = copies(DistanceSettings, plain, key)
    for name, block in blocks.items():
        found += copies(Distance, block, f"{key}.{name}")
    return found


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _values(*overrides: str) -> dict[str, Any]:
    cfg = compose_config(*overrides)
    study = OmegaConf.masked_copy(cfg, [str(k) for k in cfg if k != "hydra"])
    values = OmegaConf.to_container(study, resolve=True, throw_on_missing=False)
    assert isinstance(values, dict)
    return values  # type: ignore[return-value]


COMPOSITIONS = [
    (),
    *(
        (f"{group}={option}", *NEEDS.get(f"{group}={option}", []))
        for group in PER_OPTION
        for option in group_options(group)
    ),
]


@pytest.mark.parametrize("overrides", COMPOSITIONS, ids=lambda o: " ".join(o) or "default")
def test_no_field_repeats_its_yaml_value(overrides: tuple[str, ...]) -> None:
    assert copies(StudySettings, _values(*overrides), "") == []


@dataclasses.dataclass(frozen=True)
class _Inner:
    cap: int = 2000
    seed: int | None = None


@dataclasses.dataclass(frozen=True)
class _Outer:
    inner: _Inner
    shares: tuple[float, ...] = (0.1, 0.2)
    enabled: bool = True


def test_a_default_that_repeats_the_yaml_is_found() -> None:
    """The check can fail: a default equal to its YAML's value, nested or not; others pass."""
    values = {"inner": {"cap": 2000, "seed": 0}, "shares": [0.1, 0.2], "enabled": False}
    assert copies(_Outer, values, "x") == ["x.inner.cap: 2000", "x.shares: [0.1, 0.2]"]
