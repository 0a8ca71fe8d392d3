"""The in-memory shape every corpus reader returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

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
    """

    name: str
    task: TaskKind
    label_names: list[str]
    train: TextSet
    groups: dict[str, TextSet]
    dropped: dict[str, int] = field(default_factory=dict)
    emptied: dict[str, int] = field(default_factory=dict)

    @property
    def group_names(self) -> list[str]:
        """The groups' names, in display order."""
        return list(self.groups)

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
