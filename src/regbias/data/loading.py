"""From configuration to a corpus: where the data lives and which reader reads it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from regbias.data.corpus import Corpus
from regbias.errors import ConfigError, DataError

__all__ = [
    "DATA_DIR_ENV",
    "DATASETS",
    "resolve_data_dir",
    "dataset_data_dir",
    "csv_path",
    "load_corpus",
    "select_groups",
]

DATA_DIR_ENV = "REGBIAS_DATA_DIR"
DATASETS = ("sentiment140", "reuters21578", "csv")


def resolve_data_dir(configured: str | os.PathLike[str] | None) -> Path:
    """The data directory: ``$REGBIAS_DATA_DIR`` if set, else the configured path.

    Raises:
        DataError: the directory does not exist.
    """
    env = os.environ.get(DATA_DIR_ENV)
    chosen = Path(env) if env else Path(configured or "data")
    source = f"${DATA_DIR_ENV}" if env else "paths.data_dir"
    if not chosen.is_dir():
        raise DataError(
            f"data directory '{chosen}' (from {source}) does not exist: set {DATA_DIR_ENV} or "
            f"paths.data_dir=DIR, or download the data with "
            f"`python -m regbias.data.fetch sentiment140|reuters21578 --data-dir {chosen}`"
        )
    return chosen.resolve()


def dataset_data_dir(
    dataset: Mapping[str, Any], configured: str | os.PathLike[str] | None
) -> Path | None:
    """The data directory ``dataset`` needs; None for a CSV file found without one.

    Raises:
        DataError: the dataset needs a data directory and it does not exist.
    """
    if dataset.get("name") == "csv" and _standalone_csv(dataset):
        return None
    return resolve_data_dir(configured)


def _standalone_csv(dataset: Mapping[str, Any]) -> bool:
    """An absolute CSV path, or a relative one that exists from here, needs no data dir."""
    try:
        path = Path(str(dataset["path"]))
    except Exception:  # a missing mandatory path: the reader says so
        return False
    return path.is_absolute() or path.is_file()


def csv_path(dataset: Mapping[str, Any], data_dir: Path | None) -> Path:
    """The CSV file of ``dataset=csv``: as given when it exists or is absolute, else in data_dir."""
    path = Path(str(dataset["path"]))
    if path.is_absolute() or path.exists() or data_dir is None:
        return path
    return data_dir / path


def load_corpus(dataset: Mapping[str, Any], data_dir: Path | None) -> Corpus:
    """Read the corpus that ``dataset`` (the ``dataset`` config group) names."""
    name = dataset.get("name")
    if name == "sentiment140":
        from regbias.data.sentiment140 import read_sentiment140

        return read_sentiment140(data_dir, clean_regional=bool(dataset.get("clean_regional")))
    if name == "reuters21578":
        from regbias.data.reuters import read_reuters21578

        places = dataset.get("multiple_places")
        return read_reuters21578(data_dir, multiple_places=None if places is None else list(places))
    if name == "csv":
        return _load_csv(dataset, data_dir)
    raise ConfigError(f"unknown dataset '{name}': use one of {', '.join(DATASETS)}")


def _load_csv(dataset: Mapping[str, Any], data_dir: Path | None) -> Corpus:
    from regbias.data.csv_corpus import read_csv_corpus

    return read_csv_corpus(
        csv_path(dataset, data_dir),
        text_column=dataset["text_column"],
        label_column=dataset["label_column"],
        group_column=dataset["group_column"],
        train_group=dataset.get("train_group"),
        positive_label=dataset.get("positive_label"),
        clean=bool(dataset.get("clean", False)),
    )


def select_groups(corpus: Corpus, wanted: list[str] | None, *, with_baseline: bool) -> list[str]:
    """Validate the configured group names against the corpus.

    ``baseline`` is not in the corpus (it is a held-out fold of the training sample) but is a
    valid name for corpora whose task is binary.

    Raises:
        ConfigError: a name the corpus does not have.
    """
    known = [*corpus.group_names, *(["baseline"] if with_baseline else [])]
    names = list(wanted) if wanted is not None else known
    unknown = [g for g in names if g not in known]
    if unknown:
        raise ConfigError(
            f"unknown group(s) {', '.join(unknown)} for dataset '{corpus.name}': "
            f"choose from {', '.join(known)} (dataset.groups=[...])"
        )
    if len(names) < 2:
        raise ConfigError(
            f"dataset.groups={names}: a study compares groups, so name at least two "
            f"(available: {', '.join(known)})"
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"dataset.groups lists a group twice: {names}")
    return names
