"""What a corpus is to regbias: one class that carries its files, its reader and its settings.

A corpus is a frozen dataclass subclass of :class:`Dataset`, in one module, named by its config
group's ``_target_`` (``conf/dataset/<name>.yaml``). Its fields are the group's keys: the shared
ones below and its reader's own options. Its class attributes are what does not change between
runs: the files to download (with checksums). Its methods read the corpus and list the files a
run depends on. :mod:`regbias.data.registry` finds the corpora by their YAML files; the
"Adding a corpus" section of docs/extending.md is a worked example.
"""

from __future__ import annotations

import abc
import functools
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from regbias.data.corpus import Corpus
from regbias.data.data_dir import resolve_data_dir
from regbias.data.fingerprint import memo_sha256
from regbias.data.groups import BASELINE

__all__ = [
    "DEFAULT_REFERENCE_GROUPS",
    "TASK_PRIMARY_PERFORMANCE",
    "Dataset",
    "ManifestEntry",
    "manifest",
]


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ManifestEntry:
    """One downloadable file of a dataset.

    Attributes:
        path: where the file lies, relative to the data directory.
        url: where to download it.
        sha256: its expected SHA-256 checksum, hex.
    """

    path: str
    url: str
    sha256: str


def manifest(folder: str, url: str, checksums: Mapping[str, str]) -> tuple[ManifestEntry, ...]:
    """Entries for files that share a folder and a download prefix: ``{file name: sha256}``."""
    return tuple(
        ManifestEntry(f"{folder}/{name}", f"{url}/{name}", sha) for name, sha in checksums.items()
    )


#: The primary performance column a corpus's task implies: ``dataset.primary_performance``
#: where the corpus's config names none.
TASK_PRIMARY_PERFORMANCE = {"binary": "gap_accuracy", "multilabel": "gap_micro_f1"}
#: ``dataset.reference_groups`` where the corpus's config names none: regbias's own sample.
DEFAULT_REFERENCE_GROUPS = (BASELINE,)


@dataclass(frozen=True)
class Dataset(abc.ABC):
    """A corpus of grouped, labelled texts: the ``dataset`` config group, and its reader.

    Attributes:
        name: the dataset's name in run names and experiments (its config file's name).
        task: ``binary`` (one label: sentiment) or ``multilabel`` (topics).
        unit: ``tweet`` (short texts; long text joins several) or ``document``.
        primary_performance: the performance column of the corpus's primary hypothesis, one
            its task produces (``gap_accuracy`` for a binary corpus, ``gap_micro_f1`` for a
            multilabel one: :data:`TASK_PRIMARY_PERFORMANCE`, where the config names none);
            the default ``analysis.correlation.primary`` takes it from here.
        groups: the groups to study, in display order (None: every group of the corpus).
        reference_groups: the groups that are no region, of the corpus's or regbias's own
            (``baseline``, a pool of all regions, a corpus's whole test set): the primary test
            leaves them out, their pairs are the test of record's reference family, and they
            are no power plant's source or donor unless named; ``analysis.reference_groups``
            takes them from here (``[baseline]`` where the config names none).
    """

    name: str
    task: Literal["binary", "multilabel"]
    unit: Literal["tweet", "document"]
    primary_performance: str
    groups: list[str] | None
    reference_groups: list[str]

    #: The files a run reads, downloaded on first use and by ``python -m regbias.data.fetch``.
    downloads: ClassVar[tuple[ManifestEntry, ...]] = ()
    #: Other fetchable file sets that belong to this corpus (e.g. the authors' test splits).
    extra_downloads: ClassVar[Mapping[str, tuple[ManifestEntry, ...]]] = {}
    #: True when the group names come from the data's rows (checked before a run starts).
    groups_from_rows: ClassVar[bool] = False

    @abc.abstractmethod
    def read(self, data_dir: Path | None) -> Corpus:
        """The corpus, read from ``data_dir`` (None: the dataset needs no data directory).

        Raises:
            DataError: a file is missing or malformed; the message says what to do.
        """

    def altered_copies(self, data_dir: Path | None) -> list[str]:
        """The known files (:attr:`downloads`) present in ``data_dir`` with other bytes.

        A known file is checked on every read, not only on download: a copy cut at a row
        boundary reads without an error and would run on fewer texts without a word. Each
        altered copy is warned about (once per process and file state) with the way back.

        Returns:
            The altered files' paths relative to ``data_dir``.
        """
        if data_dir is None:
            return []
        altered = [
            entry.path
            for entry in self.downloads
            if (path := data_dir / entry.path).is_file() and memo_sha256(path) != entry.sha256
        ]
        for relative in altered:
            _warn_altered(str(data_dir / relative), self.name, str(data_dir))
        return altered

    def files(self, data_dir: Path | None) -> list[Path]:
        """Every file :meth:`read` reads (their checksums make a run's data fingerprint)."""
        if data_dir is None:
            return []
        return [data_dir / entry.path for entry in self.downloads]

    def required(self, data_dir: Path | None) -> Path:
        """``data_dir``, for readers that need one (:meth:`data_dir` gives one unless overridden).

        Raises:
            ValueError: ``data_dir`` is None (a programming error, not a user's).
        """
        if data_dir is None:
            raise ValueError(f"dataset {self.name!r} reads a data directory; none was given")
        return data_dir

    def data_dir(self, configured: str | os.PathLike[str] | None) -> Path | None:
        """The data directory this dataset reads (:func:`resolve_data_dir`).

        Raises:
            DataError: the dataset needs a data directory and it does not exist.
        """
        return resolve_data_dir(configured)


@functools.cache
def _warn_altered(path: str, dataset: str, data_dir: str) -> None:
    log.warning(
        "%s is not the known copy of this file (its SHA-256 differs: cut or edited?); the "
        "study reads it as it is. `python -m regbias.data.fetch %s --data-dir %s` restores the "
        "known copy",
        path,
        dataset,
        data_dir,
    )
