"""The generic CSV corpus reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from regbias.data.csv_corpus import read_csv_corpus
from regbias.errors import DataError

COLUMNS = {"text_column": "text", "label_column": "label", "group_column": "dialect"}


def write(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "corpus.csv"
    path.write_text(content, encoding="utf-8")
    return path


GOOD = (
    "id,text,label,dialect\n"
    "1,general one,4,train\n"
    "2,general two,0,train\n"
    "3,g'day mate,4,au\n"
    "4,  ,0,au\n"
    '5,"cheers,\nlove",0,uk\n'
    "6,howdy,0,us\n"
    "7,no group,4,\n"
)


def test_groups_train_and_labels(tmp_path: Path) -> None:
    corpus = read_csv_corpus(write(tmp_path, GOOD), **COLUMNS, train_group="train")
    assert corpus.name == "csv"
    assert corpus.task == "binary"
    assert corpus.label_names == ["0", "4"]
    assert corpus.train.texts == ["general one", "general two"]
    assert corpus.train.labels.tolist() == [1, 0]
    assert corpus.group_names == ["au", "uk", "us"]
    assert corpus.groups["uk"].texts == ["cheers, love"]
    assert corpus.groups["uk"].ids == ["7"]  # the line the row ends on
    assert corpus.groups["au"].labels.tolist() == [1]
    assert corpus.dropped == {"empty_after_cleaning": 1}


def test_without_train_group_rows_without_group_train(tmp_path: Path) -> None:
    corpus = read_csv_corpus(write(tmp_path, GOOD), **COLUMNS)
    assert corpus.train.texts == ["no group"]
    assert corpus.group_names == ["train", "au", "uk", "us"]


def test_positive_label_and_clean(tmp_path: Path) -> None:
    corpus = read_csv_corpus(
        write(tmp_path, GOOD), **COLUMNS, train_group="train", positive_label=0, clean=True
    )
    assert corpus.label_names == ["4", "0"]
    assert corpus.train.labels.tolist() == [0, 1]
    assert corpus.groups["au"].texts == ["g day mate"]


def test_numeric_labels_sort_by_value(tmp_path: Path) -> None:
    content = "text,label,dialect\na,10,x\nb,9,x\n"
    corpus = read_csv_corpus(write(tmp_path, content), **COLUMNS)
    assert corpus.label_names == ["9", "10"]
    assert corpus.groups["x"].labels.tolist() == [1, 0]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("text,label\na,1\n", r"no column named 'dialect'; the header has 'text', 'label'"),
        ("", r"no column named 'text', 'label', 'dialect'; the header has no columns"),
        ("text,label,dialect\na,1,x\nb,0\n", r"corpus\.csv, line 3: expected 3 fields, found 2"),
        ("text,label,dialect\na,1,x\nb,,x\n", r"corpus\.csv, line 3: empty 'label'"),
        ('text,label,dialect\na,1,x\n"b"c,0,x\n', r"corpus\.csv, line 3: malformed CSV"),
        ("text,label,dialect\na,1,x\nb,0,x\nc,2,x\n", r"exactly two values .* found 3"),
        ("text,label,dialect\na,1,x\nb,1,x\n", r"exactly two values .* found 1: '1'"),
        ("text,label,dialect\na,1,t\nb,0,t\n", r"no evaluation group"),
    ],
    ids=["no-group-column", "empty", "fields", "empty-label", "quote", "three", "one", "no-group"],
)
def test_bad_csv(tmp_path: Path, content: str, expected: str) -> None:
    with pytest.raises(DataError, match=expected):
        read_csv_corpus(write(tmp_path, content), **COLUMNS, train_group="t")


def test_unknown_positive_label(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"positive_label 'pos' is not a label value"):
        read_csv_corpus(write(tmp_path, GOOD), **COLUMNS, positive_label="pos")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"missing\.csv is missing"):
        read_csv_corpus(tmp_path / "missing.csv", **COLUMNS)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes(b"text,label,dialect\ncaf\xe9,1,x\n")
    with pytest.raises(DataError, match=r"latin\.csv, line 2: not UTF-8"):
        read_csv_corpus(path, **COLUMNS)
