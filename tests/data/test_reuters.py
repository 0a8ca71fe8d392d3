"""Reuters-21578 reader: the real SGML files against the authors' splits, plus small copies."""

from __future__ import annotations

import csv
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from regbias.data.corpus import Corpus, TextSet
from regbias.data.reuters import (
    AUTHORS_MULTIPLE_PLACES,
    REUTERS_GROUPS,
    SGML_FILES,
    ReutersDocument,
    parse_reuters_sgml,
    read_reuters21578,
)
from regbias.errors import DataError

# --- the real corpus --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(shared_data_dir: Path) -> Corpus:
    start = time.perf_counter()
    corpus = read_reuters21578(shared_data_dir, multiple_places=AUTHORS_MULTIPLE_PLACES)
    assert time.perf_counter() - start < 15  # about 2 s alone; the machine is shared
    return corpus


@pytest.fixture(scope="module")
def documents(shared_data_dir: Path) -> dict[str, ReutersDocument]:
    return {d.new_id: d for name in SGML_FILES for d in parse_reuters_sgml(shared_data_dir / name)}


def test_real_modapte_counts(corpus: Corpus) -> None:
    assert corpus.task == "multilabel"
    assert len(corpus.train) == 7775
    # Each group holds a text once (issue 36): 18 test documents repeat another's text.
    assert len(corpus.groups["test"]) == 3019 - 18
    assert len(corpus.label_names) == 115
    assert corpus.label_names == sorted(corpus.label_names)
    assert corpus.group_names == list(REUTERS_GROUPS)
    sizes = {name: len(group) for name, group in corpus.groups.items()}
    assert sizes == {"ca": 121, "au": 34, "uk": 106, "us": 1690, "multiple": 331, "test": 3001}
    assert corpus.duplicates == {"ca": 2, "au": 1, "us": 4, "multiple": 4, "test": 18}
    assert corpus.train.labels.shape == (7775, 115)
    assert corpus.train.labels.dtype == np.uint8
    assert corpus.train.labels.sum(axis=1).min() == 1
    duplicates = {f"duplicate/{g}": n for g, n in corpus.duplicates.items()}
    assert corpus.dropped == {
        "modapte_without_topics": 2108,
        "test_only_topic_labels": 3,
        **duplicates,
    }
    assert all(text for text in corpus.train.texts + corpus.groups["test"].texts)


def test_real_ids_are_newids(corpus: Corpus, documents: dict[str, ReutersDocument]) -> None:
    assert corpus.train.ids[:2] == ["1", "5"]  # NEWID 2 has TOPICS="NO"
    first = documents["1"]
    assert (first.lewis_split, first.topics_attr, first.topics) == ("TRAIN", "YES", ["cocoa"])
    assert first.places == ["el-salvador", "usa", "uruguay"]
    assert first.title == "BAHIA COCOA REVIEW"
    assert corpus.train.texts[0].startswith("Showers continued throughout the week inthe Bahia")
    assert corpus.train.texts[0].endswith(
        "Brazilian Cocoa Trade Commission aftercarnival which ends midday on February 27. Reuter"
    )
    assert len(set(corpus.groups["test"].ids)) == 3001


def test_real_default_multiple_uses_the_four_focus_countries(shared_data_dir: Path) -> None:
    corpus = read_reuters21578(shared_data_dir)
    assert len(corpus.groups["multiple"]) == 333 - 4  # 4 repeat another document's text


def _authors_rows(path: Path) -> Counter[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream, delimiter="\t"))
    assert rows[0] == ["label", "text"]
    # The authors kept entities undecoded; one byte of reut2-017 they dropped, we read as latin-1.
    return Counter(
        (_normal(re.sub(r"&#\d+;", "", t).replace("&lt;", "<").replace("&amp;", "&")), lab)
        for lab, t in rows[1:]
    )


def _normal(text: str) -> str:
    return " ".join("".join(c for c in text if c.isascii()).split())


def _our_rows(group: TextSet, documents: dict[str, ReutersDocument]) -> Counter[tuple[str, str]]:
    rows: Counter[tuple[str, str]] = Counter()
    for text, labels, new_id in zip(group.texts, group.labels, group.ids, strict=True):
        # The authors' text of a BRIEF story (a headline only) is empty; ours is the headline.
        text = "" if documents[new_id].text_type == "BRIEF" else text
        rows[_normal(text), "".join(map(str, labels))] += 1
    return rows


@pytest.mark.parametrize(
    ("group", "split"),
    [("ca", "ca"), ("au", "au"), ("uk", "uk"), ("us", "us"), ("multiple", "mtp"), ("test", "test")],
)
def test_real_groups_match_the_authors_splits(
    corpus: Corpus,
    documents: dict[str, ReutersDocument],
    shared_data_dir: Path,
    group: str,
    split: str,
) -> None:
    authors = _authors_rows(shared_data_dir / "regional_reuters" / f"{split}.tsv")
    ours = _our_rows(corpus.groups[group], documents)
    # The same texts; a text the authors' split repeats, the group holds once (issue 36).
    assert set(ours) <= set(authors) and {t for t, _ in ours} == {t for t, _ in authors}
    assert sum(authors.values()) - sum(ours.values()) == corpus.duplicates.get(group, 0)


# --- small SGML files ---------------------------------------------------------------------------


def sgml_document(
    new_id: int,
    *,
    split: str = "TEST",
    topics_attr: str = "YES",
    topics: tuple[str, ...] = ("earn",),
    places: tuple[str, ...] = ("usa",),
    text: str | None = None,
) -> str:
    # Each document's own body: a group holds a text once (issue 36).
    text = (
        text
        if text is not None
        else f"<TITLE>T</TITLE><BODY>Body\n&lt;ABC> text {new_id}\n&#3;</BODY>"
    )
    d_topics = "".join(f"<D>{t}</D>" for t in topics)
    d_places = "".join(f"<D>{p}</D>" for p in places)
    return (
        f'<REUTERS TOPICS="{topics_attr}" LEWISSPLIT="{split}" CGISPLIT="X" OLDID="1" '
        f'NEWID="{new_id}">\n<DATE>1-MAR-1987</DATE>\n<TOPICS>{d_topics}</TOPICS>\n'
        f"<PLACES>{d_places}</PLACES>\n<PEOPLE></PEOPLE>\n<UNKNOWN> \n&#5;&#5;&#5;C\n</UNKNOWN>\n"
        f"<TEXT{text}</TEXT>\n</REUTERS>\n"
        if text.startswith(" TYPE=")
        else f'<REUTERS TOPICS="{topics_attr}" LEWISSPLIT="{split}" CGISPLIT="X" OLDID="1" '
        f'NEWID="{new_id}">\n<DATE>1-MAR-1987</DATE>\n<TOPICS>{d_topics}</TOPICS>\n'
        f"<PLACES>{d_places}</PLACES>\n<PEOPLE></PEOPLE>\n<UNKNOWN> \n&#5;&#5;&#5;C\n</UNKNOWN>\n"
        f"<TEXT>&#2;\n{text}</TEXT>\n</REUTERS>\n"
    )


SMALL_DOCUMENTS = [
    sgml_document(1, split="TRAIN", topics=("earn", "acq"), places=("uk",)),
    sgml_document(2, split="TRAIN", topics=("grain",)),
    sgml_document(3, split="TRAIN", topics=()),  # no topic: not in ModApte
    sgml_document(4, split="TRAIN", topics_attr="NO", topics=("earn",)),  # TOPICS="NO"
    sgml_document(5, split="NOT-USED", topics=("earn",)),
    sgml_document(6, topics=("earn", "rare"), places=("canada",)),  # "rare" is test-only
    sgml_document(7, places=("usa", "usa")),  # a place listed twice is one place
    sgml_document(8, places=("uk", "france")),
    sgml_document(9, places=("new-zealand", "fiji")),
    sgml_document(10, places=()),
    sgml_document(11, text="<TITLE>HEADLINE &lt;X> ONLY\n</TITLE>Blah blah blah.\n&#3;"),
    sgml_document(12, text=' TYPE="UNPROC">&#2;\nRAW TABLE\n    a  1\n&#3;\n'),
]


def make_reuters_dir(root: Path, first_file: str | None = None) -> Path:
    """22 small SGML files: the documents above in the first, one filler each in the rest."""
    folder = root / "reuters21578"
    folder.mkdir(parents=True)
    header = '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n'
    content = first_file if first_file is not None else header + "".join(SMALL_DOCUMENTS)
    (folder / "reut2-000.sgm").write_text(content, encoding="latin-1")
    for i in range(1, 22):
        filler = sgml_document(100 + i, split="NOT-USED")
        (folder / f"reut2-{i:03d}.sgm").write_text(header + filler, encoding="latin-1")
    return root


def test_small_split_labels_groups_and_texts(tmp_path: Path) -> None:
    corpus = read_reuters21578(make_reuters_dir(tmp_path))
    assert corpus.label_names == ["acq", "earn", "grain"]
    assert corpus.train.ids == ["1", "2"]
    assert corpus.train.labels.tolist() == [[1, 1, 0], [0, 0, 1]]
    assert corpus.train.texts[0] == "Body<ABC> text 1"
    groups = {name: group.ids for name, group in corpus.groups.items()}
    assert groups == {
        "ca": ["6"],
        "au": [],
        "uk": [],
        "us": ["7", "11", "12"],
        "multiple": ["8"],
        "test": ["6", "7", "8", "9", "10", "11", "12"],
    }
    assert corpus.groups["ca"].labels.tolist() == [[0, 1, 0]]
    assert corpus.dropped == {"modapte_without_topics": 1, "test_only_topic_labels": 1}
    test = dict(zip(corpus.groups["test"].ids, corpus.groups["test"].texts, strict=True))
    assert test["11"] == "HEADLINE <X> ONLY"  # BRIEF: the headline
    assert test["12"] == "RAW TABLE a 1"  # UNPROC: the raw story, control characters gone


def test_small_multiple_with_the_authors_places(tmp_path: Path) -> None:
    corpus = read_reuters21578(make_reuters_dir(tmp_path), multiple_places=AUTHORS_MULTIPLE_PLACES)
    assert corpus.groups["multiple"].ids == ["8", "9"]


def test_missing_data_dir(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"does not exist.*regbias\.data\.fetch reuters21578"):
        read_reuters21578(tmp_path / "nowhere")


def test_missing_sgml_file_names_it_and_the_fetch_command(tmp_path: Path) -> None:
    data_dir = make_reuters_dir(tmp_path)
    (data_dir / "reuters21578/reut2-013.sgm").unlink()
    with pytest.raises(DataError, match=r"reut2-013\.sgm is missing.*fetch reuters21578"):
        read_reuters21578(data_dir)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            SMALL_DOCUMENTS[0] + SMALL_DOCUMENTS[1][:-12],
            r"line 25: the file ends inside REUTERS NEWID=2",
        ),
        (
            SMALL_DOCUMENTS[0].replace("</BODY>", "</TITLE>"),
            r"line 12: </TITLE> while <TEXT>, <BODY> open",
        ),
        (
            SMALL_DOCUMENTS[0].replace("</REUTERS>", "") + SMALL_DOCUMENTS[1],
            r"line 14: a REUTERS element starts before",
        ),
        (SMALL_DOCUMENTS[0].replace(' NEWID="1"', ""), r"line 1: a REUTERS element has no NEWID"),
        ("<TOPICS></TOPICS>", r"line 1: <TOPICS> outside a REUTERS"),
        ("just text\n", r"holds no REUTERS element"),
    ],
    ids=["unclosed", "mismatched", "nested", "no-newid", "outside", "empty"],
)
def test_broken_sgml(tmp_path: Path, content: str, expected: str) -> None:
    data_dir = make_reuters_dir(tmp_path, first_file=content)
    with pytest.raises(DataError, match=r"reut2-000\.sgm.*" + expected):
        read_reuters21578(data_dir)
