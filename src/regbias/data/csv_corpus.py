"""``dataset=csv``: any CSV file with a text, a binary label and a group column."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from regbias.data.cleaning import clean_tweet
from regbias.data.corpus import Corpus, TextSet
from regbias.data.csv_rows import read_csv_rows
from regbias.data.dataset import Dataset
from regbias.errors import ConfigError, DataError

log = logging.getLogger(__name__)

#: ``(negative, positive)`` word labels whose positive class needs no ``positive_label``
#: (compared case-insensitively).
_WORD_PAIRS = (("negative", "positive"), ("neg", "pos"), ("false", "true"))


@dataclass(frozen=True)
class CsvDataset(Dataset):
    """``dataset=csv``: any CSV file with a text, a binary label and a group column.

    Attributes:
        path: the file; a relative path that does not exist from here is looked up in the data
            directory.
        text_column, label_column, group_column: the columns' names.
        train_group: the group whose rows form the general training pool (None: the rows
            with an empty group).
        positive_label: the label value that counts as positive. None: the larger of two
            numbers (0/1, 0/4), or positive, pos or true of the word pairs positive/negative,
            pos/neg, true/false (in any case); other labels need it. The log says which is.
        clean: apply the tweet cleaning to the texts.
    """

    path: str | None
    text_column: str
    label_column: str
    group_column: str
    train_group: str | None
    positive_label: str | int | None
    clean: bool

    groups_from_rows = True

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError("dataset=csv needs its file: dataset.path=my.csv")

    def read(self, data_dir: Path | None) -> Corpus:
        """The corpus (:func:`read_csv_corpus`) of the file (:meth:`file`)."""
        return read_csv_corpus(
            self.file(data_dir),
            text_column=self.text_column,
            label_column=self.label_column,
            group_column=self.group_column,
            train_group=self.train_group,
            positive_label=self.positive_label,
            clean=self.clean,
        )

    def file(self, data_dir: Path | None) -> Path:
        """The CSV file: as given when it exists or is absolute, else in ``data_dir``."""
        path = Path(str(self.path))
        if path.is_absolute() or path.exists() or data_dir is None:
            return path
        return data_dir / path

    def files(self, data_dir: Path | None) -> list[Path]:
        """The one file a run reads."""
        return [self.file(data_dir)]

    def data_dir(self, configured: str | os.PathLike[str] | None) -> Path | None:
        """None for a file found without a data directory (absolute, or relative from here).

        Raises:
            DataError: the file is relative, not found from here, and the data directory does
                not exist.
        """
        path = Path(str(self.path))
        if path.is_absolute() or path.is_file():
            return None
        return super().data_dir(configured)


@dataclass
class _Rows:
    """The file's rows, column by column, with the line each row ends on."""

    texts: list[str]
    labels: list[str]
    groups: list[str]
    lines: list[int]


def read_csv_corpus(
    path: Path,
    *,
    text_column: str,
    label_column: str,
    group_column: str,
    train_group: str | None = None,
    positive_label: object = None,
    clean: bool = False,
) -> Corpus:
    """Read a CSV file (UTF-8, header row) as a binary-labelled corpus with groups.

    The arguments are :class:`CsvDataset`'s fields; ``label_column`` must hold exactly two values.

    Rows whose group is ``train_group`` form the training pool; every other group value is an
    evaluation group, in order of first appearance. With ``train_group=None`` the rows whose
    group cell is empty form the training pool (which may be empty: the distance stages need no
    training pool, the performance stage does). Texts are whitespace-normalised (and cleaned
    with :func:`clean_tweet` when ``clean``); rows with an empty text are dropped and counted as
    ``empty_after_cleaning``.

    Returns:
        A ``binary`` corpus named ``csv``; ``label_names`` are the negative and positive label
        values as written in the file; ids are the rows' line numbers in the file.

    Raises:
        DataError: missing file, missing column, malformed CSV (file and line named), not exactly
            two label values, an unknown ``positive_label`` (or none where the labels do not say
            which is positive), or no evaluation group.
    """
    path = Path(path)
    rows = _read_rows(path, (text_column, label_column, group_column))
    texts = [clean_tweet(t) if clean else " ".join(t.split()) for t in rows.texts]
    keep = [i for i, text in enumerate(texts) if text]
    negative, positive = _label_values([rows.labels[i] for i in keep], positive_label, path)
    emptied = _emptied_groups(rows.groups, keep, train_group)
    train_index, by_group = _split_groups(
        rows.groups, keep, train_group, path, group_column, emptied
    )
    labels = np.asarray([label == positive for label in rows.labels], dtype=np.int64)
    every_row = TextSet(texts, labels, ids=[str(line) for line in rows.lines])
    groups = {name: every_row.subset(index) for name, index in by_group.items()}
    train = every_row.subset(train_index)
    return Corpus(
        name="csv",
        task="binary",
        label_names=[negative, positive],
        train=train,
        groups=groups,
        dropped={"empty_after_cleaning": len(texts) - len(keep), **_shared_texts(train, groups)},
        emptied=emptied,
    )


def _emptied_groups(groups: list[str], keep: list[int], train_group: str | None) -> dict[str, int]:
    """Evaluation groups with rows but no text left, with their row counts (first-seen order)."""
    kept = {groups[i] for i in keep}
    counts: dict[str, int] = {}
    for group in groups:
        if group not in kept and group not in ("", train_group or ""):
            counts[group] = counts.get(group, 0) + 1
    return counts


def _shared_texts(train: TextSet, groups: dict[str, TextSet]) -> dict[str, int]:
    """Texts kept in two places, counted for ``data/dropped.json`` (none: ``{}``).

    The study runs with them, but a text in two groups makes the groups look closer, and a
    training text that is also a group's is scored by models that were trained on it.
    """
    owners: dict[str, set[str]] = {}
    for name, texts in groups.items():
        for text in texts.texts:
            owners.setdefault(text, set()).add(name)
    shared = {
        "shared/texts_in_several_groups": sum(len(o) > 1 for o in owners.values()),
        "shared/training_texts_in_groups": sum(text in owners for text in train.texts),
    }
    return shared if any(shared.values()) else {}


def _split_groups(
    groups: list[str],
    keep: list[int],
    train_group: str | None,
    path: Path,
    column: str,
    emptied: dict[str, int],
) -> tuple[list[int], dict[str, list[int]]]:
    """Row positions of the training pool and of each evaluation group (first-seen order).

    Raises:
        DataError: no row belongs to an evaluation group.
    """
    train_value = "" if train_group is None else train_group
    by_group: dict[str, list[int]] = {}
    for i in keep:
        by_group.setdefault(groups[i], []).append(i)
    train_index = by_group.pop(train_value, [])
    by_group.pop("", None)  # rows without a group belong to no evaluation group
    if not by_group:
        listed = ", ".join(map(repr, emptied))
        why = f" (every text of {listed} is empty after cleaning)" if emptied else ""
        raise DataError(
            f"{path}: no evaluation group: every row with a text is in the training group "
            f"{train_value!r} or has an empty {column!r}{why}; fill the {column!r} column"
        )
    return train_index, by_group


def _read_rows(path: Path, columns: tuple[str, str, str]) -> _Rows:
    if not path.is_file():
        raise DataError(f"{path} is missing: check the dataset.path setting")
    rows = _Rows([], [], [], [])
    text_column, label_column, group_column = columns
    for line, row in read_csv_rows(path, columns):
        label = row[label_column].strip()
        if not label:
            raise DataError(f"{path}, line {line}: empty {label_column!r}")
        rows.texts.append(row[text_column])
        rows.labels.append(label)
        rows.groups.append(row[group_column].strip())
        rows.lines.append(line)
    return rows


def _label_values(labels: list[str], positive_label: object, path: Path) -> tuple[str, str]:
    """``(negative, positive)`` label values, logged: which is which is never a guess."""
    values = sorted(set(labels), key=_number_first)
    if len(values) != 2:
        shown = ", ".join(map(repr, values[:10])) + (", ..." if len(values) > 10 else "")
        raise DataError(
            f"{path}: the label column must hold exactly two values (binary task), found "
            f"{len(values)}: {shown}; multiclass labels are not supported"
        )
    if positive_label is None:
        negative, positive = _documented_pair(values, path)
    else:
        positive = str(positive_label).strip()
        if positive not in values:
            raise DataError(
                f"{path}: positive_label {positive!r} is not a label value; the labels are "
                f"{values[0]!r} and {values[1]!r}"
            )
        negative = next(v for v in values if v != positive)
    log.info(
        "%s: label %r is the positive class (1), %r the negative (0)", path, positive, negative
    )
    return negative, positive


def _documented_pair(values: list[str], path: Path) -> tuple[str, str]:
    """Without ``positive_label``: two numbers (the larger is positive) or a known word pair.

    Raises:
        DataError: any other pair of labels (e.g. ``happy``/``sad``, ``Positive``/``positive``).
    """
    if all(_number_first(v)[0] == 0 for v in values):
        return values[0], values[1]
    for negative, positive in _WORD_PAIRS:
        folded = [v.casefold() for v in values]
        if sorted(folded) == sorted((negative, positive)):
            return values[folded.index(negative)], values[folded.index(positive)]
    a, b = values
    raise DataError(
        f"{path}: the labels are {a!r} and {b!r}, so which one is positive is not clear "
        "(without dataset.positive_label the labels must be two numbers, the larger positive, "
        f"or {', '.join('/'.join(p[::-1]) for p in _WORD_PAIRS)} in any case): set "
        f"dataset.positive_label={a} or dataset.positive_label={b}"
    )


def _number_first(value: str) -> tuple[int, float, str]:
    # Numbers sort by value ("4" before "10"), words by text, numbers before words.
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
