"""From configuration to a corpus: where the data lives and which reader reads it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from regbias.data.corpus import Corpus
from regbias.data.groups import BASELINE, RESERVED
from regbias.errors import ConfigError, DataError

__all__ = [
    "DATA_DIR_ENV",
    "DATASETS",
    "DatasetSettings",
    "PathSettings",
    "resolve_data_dir",
    "dataset_data_dir",
    "csv_path",
    "load_corpus",
    "select_groups",
]

DATA_DIR_ENV = "REGBIAS_DATA_DIR"
DATASETS = ("sentiment140", "reuters21578", "csv")


@dataclass(frozen=True)
class PathSettings:
    """The ``paths`` config group: the data directory and the embedding cache."""

    data_dir: str
    cache_dir: str


@dataclass(frozen=True)
class DatasetSettings:
    """The ``dataset`` config group: which corpus, its groups and text unit.

    The keys after ``unit`` belong to one reader each (their configs name them); the others
    leave them unset.

    Attributes:
        name: ``sentiment140``, ``reuters21578`` or ``csv``.
        task: ``binary`` (sentiment) or ``multilabel`` (topics).
        unit: ``tweet`` (short texts; long text joins several) or ``document``.
        groups: the groups to study, in display order (None: every group of the corpus).
        clean_regional: Sentiment140: clean the regional files again (raw sources).
        multiple_places: Reuters: places that make a several-place document count.
        path: csv: the file (relative paths are looked up in the data directory too).
        text_column, label_column, group_column: csv: column names.
        train_group: csv: the group whose rows form the general training pool.
        positive_label: csv: the label value that counts as positive (None: the larger).
        clean: csv: apply the tweet cleaning to the texts.
    """

    name: str
    task: Literal["binary", "multilabel"]
    unit: Literal["tweet", "document"]
    groups: list[str] | None = None
    clean_regional: bool = False
    multiple_places: list[str] | None = None
    path: str | None = None
    text_column: str = "text"
    label_column: str = "label"
    group_column: str = "group"
    train_group: str | None = None
    positive_label: str | int | None = None
    clean: bool = False

    def __post_init__(self) -> None:
        if self.name not in DATASETS:
            raise ConfigError(
                f"unknown dataset '{self.name}': use one of {', '.join(DATASETS)} (dataset=...)"
            )
        if self.name == "csv" and not self.path:
            raise ConfigError("dataset=csv needs its file: dataset.path=my.csv")


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
    dataset: DatasetSettings, configured: str | os.PathLike[str] | None
) -> Path | None:
    """The data directory ``dataset`` needs; None for a CSV file found without one.

    Raises:
        DataError: the dataset needs a data directory and it does not exist.
    """
    if dataset.name == "csv" and _standalone_csv(dataset):
        return None
    return resolve_data_dir(configured)


def _standalone_csv(dataset: DatasetSettings) -> bool:
    """An absolute CSV path, or a relative one that exists from here, needs no data dir."""
    path = Path(str(dataset.path))
    return path.is_absolute() or path.is_file()


def csv_path(dataset: DatasetSettings, data_dir: Path | None) -> Path:
    """The CSV file of ``dataset=csv``: as given when it exists or is absolute, else in data_dir."""
    path = Path(str(dataset.path))
    if path.is_absolute() or path.exists() or data_dir is None:
        return path
    return data_dir / path


def load_corpus(dataset: DatasetSettings, data_dir: Path | None) -> Corpus:
    """Read the corpus that ``dataset`` names (``data_dir`` None: a standalone CSV file)."""
    if dataset.name == "sentiment140":
        from regbias.data.sentiment140 import read_sentiment140

        return read_sentiment140(data_dir, clean_regional=dataset.clean_regional)
    if dataset.name == "reuters21578":
        from regbias.data.reuters import read_reuters21578

        return read_reuters21578(data_dir, multiple_places=dataset.multiple_places)
    return _load_csv(dataset, data_dir)


def _load_csv(dataset: DatasetSettings, data_dir: Path | None) -> Corpus:
    from regbias.data.csv_corpus import read_csv_corpus

    return read_csv_corpus(
        csv_path(dataset, data_dir),
        text_column=dataset.text_column,
        label_column=dataset.label_column,
        group_column=dataset.group_column,
        train_group=dataset.train_group,
        positive_label=dataset.positive_label,
        clean=dataset.clean,
    )


def select_groups(corpus: Corpus, wanted: list[str] | None, *, with_baseline: bool) -> list[str]:
    """Validate the configured group names against the corpus.

    ``baseline`` is not in the corpus (it is a held-out fold of the training sample) but is a
    valid name for corpora whose task is binary.

    Raises:
        DataError: the corpus has a group with a name regbias reserves (``baseline``).
        ConfigError: a name the corpus does not have.
    """
    taken = [g for g in corpus.group_names if g in RESERVED]
    if taken:
        raise DataError(
            f"dataset '{corpus.name}' has a group named {taken[0]!r}, a name regbias reserves "
            f"for its own groups ({', '.join(RESERVED)}): rename that group in the data"
        )
    known = [*corpus.group_names, *([BASELINE] if with_baseline else [])]
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
