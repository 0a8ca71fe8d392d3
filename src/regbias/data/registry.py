"""The corpora regbias knows: one YAML file each in ``conf/dataset/``, naming its class.

A dataset's config file (``conf/dataset/<name>.yaml``) is its registration: ``dataset=<name>``
composes it, its ``_target_`` names its :class:`~regbias.data.dataset.Dataset` class, and the
functions here find a dataset by name outside a job (first-use downloads, the fetch command).
"""

from __future__ import annotations

from typing import Any

from regbias.config_files import group_options, read_option
from regbias.data.dataset import Dataset, ManifestEntry
from regbias.errors import ConfigError
from regbias.settings_reader import TARGET, build, target_class

#: The config group of the datasets.
GROUP = "dataset"


def dataset_names() -> list[str]:
    """The names of the packaged datasets (``dataset=<name>``), sorted."""
    return group_options(GROUP)


def dataset_class(config: str | dict[str, Any]) -> type[Dataset]:
    """The class of a dataset: its packaged config's name, or a ``dataset`` group's values.

    Values without a ``_target_`` name a packaged dataset by their ``name``.

    Raises:
        ConfigError: no packaged dataset of that name, or its ``_target_`` is not a Dataset.
    """
    if isinstance(config, str) or TARGET not in config:
        name = config if isinstance(config, str) else str(config.get("name"))
        config = _packaged_values(name)
    return target_class(config.get(TARGET), Dataset, f"{GROUP}.{TARGET}")


def packaged_dataset(name: str, **overrides: Any) -> Dataset:
    """A packaged dataset built from its YAML, with ``overrides`` of its keys (for scripts).

    Raises:
        ConfigError: unknown name, or an override that is not one of the dataset's keys.
    """
    return build(Dataset, {**_packaged_values(name), **overrides}, GROUP)


def fetchable() -> dict[str, tuple[ManifestEntry, ...]]:
    """Every file set ``python -m regbias.data.fetch`` can download, by name."""
    sets: dict[str, tuple[ManifestEntry, ...]] = {}
    for name in dataset_names():
        kind = dataset_class(name)
        if kind.downloads:
            sets[name] = kind.downloads
        sets.update(kind.extra_downloads)
    return sets


def _packaged_values(name: str) -> dict[str, Any]:
    if name not in dataset_names():
        raise ConfigError(
            f"unknown dataset '{name}': use one of {', '.join(dataset_names())} (dataset=...)"
        )
    return read_option(GROUP, name)
