"""The packaged YAML configs: where they are, and one option of a group read without Hydra.

The configs ship inside the package (``regbias/conf``; in a source checkout, a link to the
repository's ``conf/``). Hydra composes them for a job; code that needs one option outside a job
(the dataset registry, ``python -m regbias.data.fetch``) reads it here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

__all__ = ["CONFIG_DIR", "group_options", "read_option"]

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
