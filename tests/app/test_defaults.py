"""Defaults are written once: a settings field's default is the value its YAML gives."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from omegaconf import OmegaConf

from regbias.app.settings import StudySettings, plain_config
from tests.conftest import compose_config

# Groups whose YAML is chosen per option (a dataset, an encoder, a dataset's fine-tuning):
# their fields' defaults, where any, are those of no single file.
PER_OPTION = {"dataset", "encoder", "finetune"}


def disagreements(cls: type, node: dict[str, Any], path: str, raw: Any) -> list[str]:
    """``key: code X, yaml Y`` for every field whose default differs from the composed YAML.

    A YAML value interpolated from another key (``${tracking.experiment}-random``) is derived,
    not a default a dataclass could hold: it is not compared.
    """
    out = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        key = f"{path}.{field.name}" if path else field.name
        if key in PER_OPTION or field.name not in node:
            continue
        kind, value = hints[field.name], node[field.name]
        if dataclasses.is_dataclass(kind) and isinstance(value, dict):
            out += disagreements(kind, value, key, raw[field.name])
            continue
        if OmegaConf.is_interpolation(raw, field.name):
            continue
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            continue
        if (list(default) if isinstance(default, tuple) else default) != value:
            out.append(f"{key}: code {default!r}, yaml {value!r}")
    return out


def test_every_default_in_code_is_the_yamls():
    cfg = compose_config()
    assert disagreements(StudySettings, plain_config(cfg), "", cfg) == []


def test_each_datasets_own_defaults_are_its_yamls():
    """A dataset class's own fields (its reader's options) default to its YAML's values."""
    from regbias.config_files import read_option
    from regbias.data.dataset import Dataset
    from regbias.data.registry import dataset_class, dataset_names

    shared = {field.name for field in dataclasses.fields(Dataset)}
    found = []
    for name in dataset_names():
        kind, values = dataset_class(name), read_option("dataset", name)
        for field in dataclasses.fields(kind):
            value = values.get(field.name)
            if field.name in shared or value == "???" or field.default is dataclasses.MISSING:
                continue
            if field.default != value:
                found.append(f"{name}.{field.name}: code {field.default!r}, yaml {value!r}")
    assert found == []
