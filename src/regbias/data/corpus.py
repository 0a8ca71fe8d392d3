"""The in-memory shape every corpus reader returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from regbias.data.groups import TRAIN_POOL

__all__ = ["TextSet", "Corpus", "TaskKind"]

TaskKind = Literal["binary", "multilabel"]


@dataclass(frozen=True)
class TextSet:
    """Texts with their labels.

    Attributes:
        texts: cleaned texts, one per item.
        labels: ``(n,)`` int64 0/1 for binary tasks, ``(n, n_classes)`` uint8 for multilabel.
        ids: stable identifiers of the items in their source (row index, NEWID, ...).
    """

    texts: list[str]
    labels: np.ndarray
    ids: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.labels) != len(self.texts):
            raise ValueError(f"{len(self.texts)} texts but {len(self.labels)} labels")
        if self.ids and len(self.ids) != len(self.texts):
            raise ValueError(f"{len(self.texts)} texts but {len(self.ids)} ids")

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, index: np.ndarray | list[int]) -> TextSet:
        """The items at ``index``, in that order."""
        index = np.asarray(index, dtype=np.int64)
        return TextSet(
            texts=[self.texts[i] for i in index],
            labels=self.labels[index],
            ids=[self.ids[i] for i in index] if self.ids else [],
        )

    @staticmethod
    def joined(parts: Sequence[TextSet]) -> TextSet:
        """The items of ``parts``, one part after another."""
        return TextSet(
            texts=[text for part in parts for text in part.texts],
            labels=np.concatenate([part.labels for part in parts]),
            ids=[i for part in parts for i in part.ids],
        )


@dataclass(frozen=True)
class Corpus:
    """A corpus read from the data directory.

    Attributes:
        name: dataset name (``sentiment140``, ``reuters21578``, ``csv``).
        task: ``binary`` (one 0/1 label) or ``multilabel`` (a 0/1 vector over ``label_names``).
        label_names: class names; for binary tasks ``["negative", "positive"]`` or the CSV's.
        train: the general (group-unaware) training pool.
        groups: evaluation groups by name, in display order. Groups may overlap
            (Reuters ``test`` holds every regional document).
        dropped: counts of items dropped while reading, by reason (e.g. ``empty_after_cleaning``).
        emptied: groups the file has but whose every text was empty after cleaning, with the
            number of texts each had; they are not in ``groups``.
        duplicates: per group, the copies of a text it already holds that were dropped (a
            group holds each text once: draws and the test of record sample distinct texts);
            filled on construction, also counted in ``dropped`` as ``duplicate/<group>``.
        pool: how the training pool was drawn, where that matters to a reader ("": a
            sample the reader needs no word on).
    """

    name: str
    task: TaskKind
    label_names: list[str]
    train: TextSet
    groups: dict[str, TextSet]
    dropped: dict[str, int] = field(default_factory=dict)
    emptied: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    pool: str = ""

    def __post_init__(self) -> None:
        """Every group holds each text once: later copies (and their labels) are dropped.

        So does a binary corpus's training pool (``train_pool``), whose sample is ``baseline``.
        """
        kept = {name: _distinct(texts) for name, texts in self.groups.items()}
        counts = {name: len(self.groups[name]) - len(k) for name, k in kept.items()}
        if self.task == "binary":
            train = _distinct(self.train)
            counts[TRAIN_POOL] = len(self.train) - len(train)
            object.__setattr__(self, "train", train)
        counts = {name: n for name, n in counts.items() if n}
        if not counts:
            return
        object.__setattr__(self, "groups", kept)
        object.__setattr__(self, "duplicates", {**self.duplicates, **counts})
        dropped = {**self.dropped, **{f"duplicate/{g}": n for g, n in counts.items()}}
        object.__setattr__(self, "dropped", dropped)

    @property
    def group_names(self) -> list[str]:
        """The groups' names, in display order."""
        return list(self.groups)

    def duplicates_note(self) -> str:
        """How many copies each group lost, as a clause ("" when none did)."""
        if not self.duplicates:
            return ""
        listed = ", ".join(f"{g} {n}" for g, n in self.duplicates.items())
        return f"texts a group held more than once, each kept once (copies dropped: {listed})"

    def emptied_note(self) -> str:
        """Which groups cleaning emptied and why, as a clause ("" when none was)."""
        if not self.emptied:
            return ""
        listed = ", ".join(f"{g!r} ({n} texts)" for g, n in self.emptied.items())
        return (
            f"group(s) {listed} left the study: every text of theirs is empty after cleaning "
            "(blank, or only URLs, @mentions, emoji and punctuation, which dataset.clean=true "
            "removes); give them texts with words, or leave them out of the file"
        )


def _distinct(texts: TextSet) -> TextSet:
    """``texts`` with each text once, at its first position (itself when none repeats)."""
    first = {t: i for i, t in reversed(list(enumerate(texts.texts)))}
    if len(first) == len(texts):
        return texts
    return texts.subset(sorted(first.values()))
