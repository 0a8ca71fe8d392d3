"""The packaged YAML configs: where they are, and one option of a group read without Hydra.

The configs ship inside the package (``regbias/conf``; in a source checkout, a link to the
repository's ``conf/``). Hydra composes them for a job; code that needs one option outside a job
(the dataset registry, ``python -m regbias.data.fetch``) reads it here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

from omegaconf import OmegaConf

T = TypeVar("T")

#: The packaged configs.
CONFIG_DIR = Path(__file__).resolve().parent / "conf"


def group_options(group: str) -> list[str]:
    """The option names of a config group (its YAML files' names), sorted."""
    return sorted(path.stem for path in (CONFIG_DIR / group).glob("*.yaml"))


def read_option(group: str, option: str) -> dict[str, Any]:
    """The values of ``conf/<group>/<option>.yaml`` as plain containers, unresolved.

    The option's own defaults list is dropped, and a ``# @package _global_`` file's values are
    taken from under its ``<group>`` key.

    Raises:
        FileNotFoundError: the group has no such option.
    """
    path = CONFIG_DIR / group / f"{option}.yaml"
    values = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    assert isinstance(values, dict)
    values.pop("defaults", None)
    if path.read_text(encoding="utf-8").startswith("# @package _global_"):
        values = values.get(group, {})
    return {str(key): value for key, value in values.items()}


def packaged_value(key: str) -> Any:
    """The value of a top-level config's ``key`` (``paths.data_dir``), interpolations resolved."""
    return OmegaConf.select(OmegaConf.load(CONFIG_DIR / "config.yaml"), key)


def packaged(kind: type[T], group: str, *keys: str, option: str = "default", **changes: Any) -> T:
    """A settings dataclass with the packaged YAML's values, and ``changes``, outside a job.

    The values are those of ``conf/<group>/<option>.yaml`` under ``keys`` (for example
    ``packaged(SinkhornSettings, "distance", "sinkhorn", epsilon=0.5)``), the one place a
    default is written; keys of the block that are no field of ``kind`` are left out. Used by
    tests and benchmarks that call a stage's functions directly.
    """
    values: Any = read_option(group, option)
    for key in keys:
        values = values[key]
    names = {field.name for field in dataclasses.fields(kind) if field.init}  # type: ignore[arg-type]
    return kind(**{k: v for k, v in values.items() if k in names} | changes)
