"""Reuters-21578 reader: the original SGML files, the ModApte split, the study's place groups."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

from regbias.data.cleaning import clean_reuters
from regbias.data.corpus import Corpus, TextSet
from regbias.data.fetch import fetch_command
from regbias.errors import DataError

__all__ = [
    "AUTHORS_MULTIPLE_PLACES",
    "FOCUS_PLACES",
    "REUTERS_GROUPS",
    "SGML_FILES",
    "ReutersDocument",
    "parse_reuters_sgml",
    "read_reuters21578",
]

#: Group name -> the PLACES value of its single-place documents, in display order.
FOCUS_PLACES: dict[str, str] = {"ca": "canada", "au": "australia", "uk": "uk", "us": "usa"}
#: The places the authors' ``multiple`` split accepted: the paper's six regions.
AUTHORS_MULTIPLE_PLACES: frozenset[str] = frozenset(
    {*FOCUS_PLACES.values(), "new-zealand", "south-africa"}
)
#: Every evaluation group of the Reuters corpus, in display order.
REUTERS_GROUPS: tuple[str, ...] = (*FOCUS_PLACES, "multiple", "test")
#: The 22 SGML files of Reuters-21578 Distribution 1.0, relative to the data directory.
SGML_FILES: tuple[str, ...] = tuple(f"reuters21578/reut2-{i:03d}.sgm" for i in range(22))

# Elements whose character data the reader keeps; every other element's data is skipped.
_FIELDS = {"title", "body", "d", "text"}


@dataclass
class ReutersDocument:
    """One REUTERS element as written in the SGML file (entities decoded, text not cleaned).

    Attributes:
        new_id: the NEWID attribute, the document's stable identifier.
        lewis_split: the LEWISSPLIT attribute (``TRAIN``, ``TEST`` or ``NOT-USED``).
        topics_attr: the TOPICS attribute (``YES``, ``NO`` or ``BYPASS``).
        text_type: the TYPE attribute of TEXT (``NORM``, ``BRIEF`` or ``UNPROC``).
        topics: the D entries of TOPICS, in file order.
        places: the D entries of PLACES, in file order.
        title: the TITLE text, empty when there is none.
        body: the BODY text, ``None`` when the document has no BODY.
        unprocessed: character data directly inside TEXT (the whole story of UNPROC documents).
    """

    new_id: str
    lewis_split: str
    topics_attr: str
    text_type: str = "NORM"
    topics: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    title: str = ""
    body: str | None = None
    unprocessed: str = ""

    @property
    def text(self) -> str:
        """The story: BODY, else the raw TEXT of an UNPROC story, else the TITLE (BRIEF stories).

        The authors' texts are empty for BRIEF stories, which hold nothing but a headline and
        the filler "Blah blah blah."; the headline is the story, so it stands in for the text.
        """
        if self.body is not None:
            return self.body
        return self.unprocessed if self.text_type == "UNPROC" else self.title


class _ReutersParser(HTMLParser):
    """Collects :class:`ReutersDocument` objects; raises ``ValueError`` on broken structure."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.documents: list[ReutersDocument] = []
        self._doc: ReutersDocument | None = None
        # Open elements inside the current REUTERS, each with the character data seen directly
        # inside it.
        self._open: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "reuters":
            if self._doc is not None:
                raise ValueError("a REUTERS element starts before the previous one ended")
            if "newid" not in values:
                raise ValueError("a REUTERS element has no NEWID attribute")
            self._doc = ReutersDocument(
                new_id=values["newid"],
                lewis_split=values.get("lewissplit", ""),
                topics_attr=values.get("topics", ""),
            )
            return
        if self._doc is None:
            raise ValueError(f"<{tag.upper()}> outside a REUTERS element")
        if tag == "text":
            self._doc.text_type = values.get("type", "NORM")
        self._open.append((tag, []))

    def handle_endtag(self, tag: str) -> None:
        if tag == "reuters":
            if self._doc is None or self._open:
                raise ValueError(f"</REUTERS> while {self._open_names()} open")
            self.documents.append(self._doc)
            self._doc = None
            return
        if not self._open or self._open[-1][0] != tag:
            raise ValueError(f"</{tag.upper()}> while {self._open_names()} open")
        _, data = self._open.pop()
        self._store(tag, "".join(data))

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1][0] in _FIELDS:
            self._open[-1][1].append(data)

    def _store(self, tag: str, data: str) -> None:
        doc = self._doc
        assert doc is not None  # every open tag lies inside a REUTERS element
        parent = self._open[-1][0] if self._open else ""
        if tag == "d" and parent == "topics":
            doc.topics.append(data.strip())
        elif tag == "d" and parent == "places":
            doc.places.append(data.strip())
        elif tag == "title" and parent == "text":
            doc.title = data
        elif tag == "body":
            doc.body = data
        elif tag == "text":
            doc.unprocessed = data

    def _open_names(self) -> str:
        return ", ".join(f"<{tag.upper()}>" for tag, _ in self._open) or "nothing"

    def close(self) -> None:
        super().close()
        if self._doc is not None:
            raise ValueError(f"the file ends inside REUTERS NEWID={self._doc.new_id}")


def parse_reuters_sgml(path: Path) -> list[ReutersDocument]:
    """Parse one Reuters-21578 SGML file.

    Args:
        path: a ``reut2-0NN.sgm`` file (read as latin-1: one file holds a non-UTF-8 byte).

    Returns:
        The file's documents in file order.

    Raises:
        DataError: the file is missing or its markup is broken (the message names the line).
    """
    data_dir = path.parent.parent
    if not path.is_file():
        raise DataError(f"{path} is missing: {_fetch_hint(data_dir)}")
    parser = _ReutersParser()
    try:
        parser.feed(path.read_text(encoding="latin-1"))
        parser.close()
    except ValueError as error:
        line = parser.getpos()[0]
        raise DataError(
            f"{path} does not parse as Reuters-21578 SGML at line {line}: {error}; "
            f"replace the file with a fresh copy ({_fetch_hint(data_dir)})"
        ) from None
    if not parser.documents:
        raise DataError(f"{path} holds no REUTERS element; {_fetch_hint(data_dir)}")
    return parser.documents


def read_reuters21578(data_dir: Path, *, multiple_places: Collection[str] | None = None) -> Corpus:
    """Read Reuters-21578 with the ModApte split and the study's place groups.

    ModApte: documents with ``LEWISSPLIT`` TRAIN or TEST, ``TOPICS="YES"`` and at least one topic
    (7,775 train, 3,019 test). The label space is the sorted topics seen in train (115); topics
    seen only in test are dropped from the labels. Groups (all drawn from the test documents):
    ``ca au uk us`` hold the documents whose distinct PLACES are exactly that one country,
    ``multiple`` those with several distinct places of which at least one is in
    ``multiple_places``, ``test`` all of them.

    Args:
        data_dir: the data directory holding ``reuters21578/reut2-000.sgm`` ... ``reut2-021.sgm``.
        multiple_places: places of which a ``multiple`` document must name at least one; by
            default the four focus countries (333 documents). The authors' split also counted
            New Zealand and South Africa (:data:`AUTHORS_MULTIPLE_PLACES`, 335 documents).

    Returns:
        A ``multilabel`` corpus; labels are ``(n, 115)`` uint8, ids are NEWIDs, texts are
        :attr:`ReutersDocument.text` cleaned by :func:`~regbias.data.cleaning.clean_reuters`.

    Raises:
        DataError: the data directory or an SGML file is missing, or a file does not parse.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise DataError(
            f"data directory {data_dir} does not exist: {_fetch_hint(data_dir)} into it, "
            "or set REGBIAS_DATA_DIR to the folder that holds reuters21578/"
        )
    documents = [doc for name in SGML_FILES for doc in parse_reuters_sgml(data_dir / name)]
    train_docs = _modapte(documents, "TRAIN")
    test_docs = _modapte(documents, "TEST")
    label_names = sorted({topic for doc in train_docs for topic in doc.topics})
    focus = set(FOCUS_PLACES.values() if multiple_places is None else multiple_places)
    test = _text_set(test_docs, label_names)
    groups = {name: test.subset(_group_index(test_docs, name, focus)) for name in REUTERS_GROUPS}
    known = set(label_names)
    return Corpus(
        name="reuters21578",
        task="multilabel",
        label_names=label_names,
        train=_text_set(train_docs, label_names),
        groups=groups,
        dropped={
            "modapte_without_topics": sum(
                1 for doc in documents if _in_modapte(doc) and not doc.topics
            ),
            "test_only_topic_labels": sum(
                1 for doc in test_docs for topic in set(doc.topics) if topic not in known
            ),
        },
    )


def _in_modapte(doc: ReutersDocument) -> bool:
    return doc.lewis_split in ("TRAIN", "TEST") and doc.topics_attr == "YES"


def _modapte(documents: list[ReutersDocument], split: str) -> list[ReutersDocument]:
    return [
        doc for doc in documents if _in_modapte(doc) and doc.lewis_split == split and doc.topics
    ]


def _text_set(documents: list[ReutersDocument], label_names: list[str]) -> TextSet:
    column = {name: j for j, name in enumerate(label_names)}
    labels = np.zeros((len(documents), len(label_names)), dtype=np.uint8)
    for i, doc in enumerate(documents):
        labels[i, [column[t] for t in doc.topics if t in column]] = 1
    return TextSet(
        texts=[clean_reuters(doc.text) for doc in documents],
        labels=labels,
        ids=[doc.new_id for doc in documents],
    )


def _group_index(documents: list[ReutersDocument], group: str, focus: set[str]) -> list[int]:
    places = [set(doc.places) for doc in documents]
    if group == "test":
        return list(range(len(documents)))
    if group == "multiple":
        return [i for i, p in enumerate(places) if len(p) > 1 and p & focus]
    return [i for i, p in enumerate(places) if p == {FOCUS_PLACES[group]}]


def _fetch_hint(data_dir: Path) -> str:
    return f"run `{fetch_command('reuters21578', data_dir)}` to download the Reuters-21578 files"
