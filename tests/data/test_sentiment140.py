"""Sentiment140 reader: real regional files and pool, plus small broken copies."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from regbias.data.corpus import Corpus
from regbias.data.sentiment140 import (
    FULL_TRAINING_FILE,
    REGIONS,
    SENTIMENT140_GROUPS,
    read_sentiment140,
)
from regbias.errors import DataError

# Rows per region after dropping the texts that are empty (docs/method.md gives the counts before)
# and the copies of a tweet the region already holds (issue 36).
REAL_COUNTS = {"au": 2163, "ca": 1831, "nz": 329, "uk": 6387, "us": 17426, "za": 249}
REAL_DUPLICATES = {"ca": 3, "uk": 55, "us": 140, "za": 1, "mixed": 279}
REAL_EMPTY = {"au": 2, "ca": 6, "nz": 0, "uk": 4, "us": 40, "za": 0}


@pytest.fixture(scope="module")
def corpus(shared_data_dir: Path) -> Corpus:
    return read_sentiment140(shared_data_dir)


def test_real_regional_groups(corpus: Corpus) -> None:
    assert corpus.task == "binary"
    assert corpus.label_names == ["negative", "positive"]
    assert corpus.group_names == list(SENTIMENT140_GROUPS)
    assert {r: len(corpus.groups[r]) for r in REGIONS} == REAL_COUNTS
    assert corpus.duplicates == REAL_DUPLICATES
    assert corpus.dropped["empty_after_cleaning"] == 52
    assert {r: corpus.dropped[f"empty_after_cleaning/{r}"] for r in REGIONS} == REAL_EMPTY
    for region in REGIONS:
        group = corpus.groups[region]
        assert all(text and text == text.strip() for text in group.texts)
        assert group.labels.dtype == np.int64
        assert set(np.unique(group.labels)) == {0, 1}
        assert all(i.startswith(f"{region}:") for i in group.ids)
    assert corpus.groups["au"].ids[:2] == ["au:0", "au:1"]


def test_real_mixed_pools_the_regions_in_order(corpus: Corpus) -> None:
    mixed = corpus.groups["mixed"]
    # mixed holds each tweet once: 80 tweets of two regions are in it once.
    assert len(mixed) == sum(REAL_COUNTS.values()) - 80 == 28305
    assert len(set(mixed.texts)) == len(mixed)
    position = {i: k for k, i in enumerate(i for r in REGIONS for i in corpus.groups[r].ids)}
    assert [position[i] for i in mixed.ids] == sorted(position[i] for i in mixed.ids)


def test_real_training_pool(corpus: Corpus) -> None:
    train = corpus.train
    assert corpus.dropped["train/empty_after_cleaning"] == 153
    assert corpus.dropped["train/duplicate"] == 2096
    assert corpus.dropped["train/in_regional"] == 1989
    assert len(train) == 100_000 - 153 - 2096 - 1989 == 95762
    assert len(set(train.texts)) == len(train)
    assert not set(train.texts) & set(corpus.groups["mixed"].texts)
    assert all(train.texts)
    assert int(train.labels.sum()) == 47797  # positives; the rest are negative
    assert train.ids[0] == "negative:0"
    assert (
        train.texts[0] == "Awww that s a bummer You shoulda got David Carr of Third Day to do it D"
    )


def test_real_read_is_fast_and_clean_regional_changes_nothing(shared_data_dir: Path) -> None:
    start = time.perf_counter()
    cleaned = read_sentiment140(shared_data_dir, clean_regional=True)
    assert time.perf_counter() - start < 10  # about 2 s alone; the machine is shared
    assert len(cleaned.groups["mixed"]) == 28305


# --- small data directories -------------------------------------------------------------------

REGIONAL_HEADER = ",text,labels\n"


def make_data_dir(root: Path, regional: dict[str, str] | None = None) -> Path:
    """A tiny data directory: two tweets per region and a six-line pool."""
    folder = root / "regional_sentiment140"
    folder.mkdir(parents=True)
    for region in REGIONS:
        body = f"0,hello from {region},4\n1,sad in {region},0\n"
        content = (regional or {}).get(region, REGIONAL_HEADER + body)
        (folder / f"{region}.csv").write_text(content, encoding="utf-8")
    pool = root / "sentiment140_pool"
    pool.mkdir()
    (pool / "negative.txt").write_text(
        "@bob so sad!\n so  sad \n...\nsad in au\nline\u0085with NEL\n", encoding="utf-8"
    )
    (pool / "positive.txt").write_text("great day http://x.co/y\nso sad\n", encoding="utf-8")
    return root


def test_small_pool_cleaning_dedupe_and_exclusion(tmp_path: Path) -> None:
    corpus = read_sentiment140(make_data_dir(tmp_path))
    assert corpus.train.texts == ["so sad", "line with NEL", "great day"]
    assert corpus.train.labels.tolist() == [0, 0, 1]
    assert corpus.train.ids == ["negative:0", "negative:4", "positive:0"]
    assert corpus.dropped["train/empty_after_cleaning"] == 1
    assert corpus.dropped["train/duplicate"] == 2
    assert corpus.dropped["train/in_regional"] == 1
    assert len(corpus.groups["mixed"]) == 12


def test_small_empty_regional_texts_are_dropped_and_counted(tmp_path: Path) -> None:
    regional = {"nz": REGIONAL_HEADER + '0,"",4\n1,   ,0\n2,kia ora,4\n'}
    corpus = read_sentiment140(make_data_dir(tmp_path, regional))
    assert corpus.groups["nz"].texts == ["kia ora"]
    assert corpus.groups["nz"].ids == ["nz:2"]
    assert corpus.dropped["empty_after_cleaning/nz"] == 2
    assert corpus.dropped["empty_after_cleaning"] == 2


def test_clean_regional_applies_tweet_cleaning(tmp_path: Path) -> None:
    regional = {"za": REGIONAL_HEADER + "0,@someone Howzit!! http://t.co/x,4\n1,@only,0\n"}
    data_dir = make_data_dir(tmp_path, regional)
    assert read_sentiment140(data_dir).groups["za"].texts[0] == "@someone Howzit!! http://t.co/x"
    cleaned = read_sentiment140(data_dir, clean_regional=True)
    assert cleaned.groups["za"].texts == ["Howzit"]
    assert cleaned.dropped["empty_after_cleaning/za"] == 1


def test_full_training_file_replaces_the_pool(tmp_path: Path) -> None:
    data_dir = make_data_dir(tmp_path)
    full = data_dir / FULL_TRAINING_FILE
    full.parent.mkdir()
    rows = [
        '"0","1","Mon Apr 06","NO_QUERY","u1","@a I\'m so d\xe9\xe7u"',
        '"4","2","Mon Apr 06","NO_QUERY","u2","good, morning"',
        '"4","3","Mon Apr 06","NO_QUERY","u3","good morning!"',
        '"0","4","Mon Apr 06","NO_QUERY","u4","sad in au"',
    ]
    full.write_bytes(("\r\n".join(rows) + "\r\n").encode("latin-1"))
    corpus = read_sentiment140(data_dir)
    assert corpus.train.texts == ["I m so d u", "good morning"]
    assert corpus.train.labels.tolist() == [0, 1]
    assert corpus.dropped["train/duplicate"] == 1
    assert corpus.dropped["train/in_regional"] == 1


def test_missing_data_dir(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"does not exist.*regbias\.data\.fetch sentiment140"):
        read_sentiment140(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "missing", ["regional_sentiment140/uk.csv", "sentiment140_pool/positive.txt"]
)
def test_missing_file_names_path_and_fetch_command(tmp_path: Path, missing: str) -> None:
    data_dir = make_data_dir(tmp_path)
    (data_dir / missing).unlink()
    with pytest.raises(DataError) as error:
        read_sentiment140(data_dir)
    message = str(error.value)
    assert str(data_dir / missing) in message
    assert "python -m regbias.data.fetch sentiment140" in message
    assert "REGBIAS_DATA_DIR" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (",tweet,labels\n0,hi,4\n", r"ca\.csv, line 1: no column named 'text'"),
        (",text\n0,hi\n", r"ca\.csv, line 1: no column named 'labels'"),
        ("", r"ca\.csv, line 1: .*the header has no columns"),
        (REGIONAL_HEADER + "0,hi,4\n1,a,b,0\n", r"ca\.csv, line 3: expected 3 fields.*found 4"),
        (REGIONAL_HEADER + "0,hi,4\n1,ho,4\n2,hu,pos\n", r"ca\.csv, line 4: label 'pos' is not an"),
        (REGIONAL_HEADER + "0,hi,4\n1,ho,2\n", r"ca\.csv, line 3: label 2 is neither 0"),
        (REGIONAL_HEADER + '0,"multi\nline",4\n1,ho,1\n', r"ca\.csv, line 4: label 1"),
    ],
)
def test_malformed_regional_csv(tmp_path: Path, content: str, expected: str) -> None:
    data_dir = make_data_dir(tmp_path, {"ca": content})
    with pytest.raises(DataError, match=expected):
        read_sentiment140(data_dir)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            '"0","1","d","q","u","ok"\n"2","2","d","q","u","neutral"\n',
            r"line 2: label 2 is neither",
        ),
        ('"0","1","d","q","u","ok"\n"4","2","d","u","fine"\n', r"line 2: expected 6 fields"),
    ],
)
def test_malformed_full_training_file(tmp_path: Path, rows: str, expected: str) -> None:
    data_dir = make_data_dir(tmp_path)
    full = data_dir / FULL_TRAINING_FILE
    full.parent.mkdir()
    full.write_text(rows, encoding="latin-1")
    with pytest.raises(DataError, match=expected):
        read_sentiment140(data_dir)


def test_pool_that_is_not_utf8(tmp_path: Path) -> None:
    data_dir = make_data_dir(tmp_path)
    (data_dir / "sentiment140_pool/negative.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(DataError, match=r"negative\.txt, line 1: not UTF-8"):
        read_sentiment140(data_dir)


def test_a_shipped_file_cut_at_a_row_boundary_is_said_on_read(
    shared_data_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A known file with other bytes reads, but not without a word (fault list 5, item 7)."""
    import shutil

    from regbias.data.registry import packaged_dataset

    data = tmp_path / "data"
    shutil.copytree(shared_data_dir / "regional_sentiment140", data / "regional_sentiment140")
    shutil.copytree(shared_data_dir / "sentiment140_pool", data / "sentiment140_pool")
    dataset = packaged_dataset("sentiment140")
    with caplog.at_level("WARNING", logger="regbias.data.dataset"):
        whole = dataset.read(data)
    assert dataset.altered_copies(data) == [] and not caplog.records
    nz = data / "regional_sentiment140" / "nz.csv"
    lines = nz.read_text().splitlines(keepends=True)
    nz.write_text("".join(lines[:100]))  # cut at a row boundary: still a valid CSV
    with caplog.at_level("WARNING", logger="regbias.data.dataset"):
        cut = dataset.read(data)
    assert len(cut.groups["nz"].texts) < len(whole.groups["nz"].texts)
    assert dataset.altered_copies(data) == ["regional_sentiment140/nz.csv"]
    (record,) = caplog.records
    assert (
        str(nz) in record.getMessage() and "regbias.data.fetch sentiment140" in record.getMessage()
    )
