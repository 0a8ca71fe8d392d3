"""``dataset=reuters21578``: the original SGML files, the ModApte split, the place groups."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import numpy as np

from regbias.data.cleaning import clean_reuters
from regbias.data.corpus import Corpus, TextSet
from regbias.data.data_dir import DATA_DIR_ENV
from regbias.data.dataset import Dataset, ManifestEntry, manifest
from regbias.data.fetch import fetch_command
from regbias.errors import DataError

#: Group name -> the PLACES value of its single-place documents, in display order.
FOCUS_PLACES: dict[str, str] = {"ca": "canada", "au": "australia", "uk": "uk", "us": "usa"}
#: The places the authors' ``multiple`` split accepted: the paper's six regions.
AUTHORS_MULTIPLE_PLACES: frozenset[str] = frozenset(
    {*FOCUS_PLACES.values(), "new-zealand", "south-africa"}
)
#: Every evaluation group of the Reuters corpus, in display order.
REUTERS_GROUPS: tuple[str, ...] = (*FOCUS_PLACES, "multiple", "test")

# Elements whose character data the reader keeps; every other element's data is skipped.
_FIELDS = {"title", "body", "d", "text"}
_SGML_URL = (
    "https://raw.githubusercontent.com/MateuszKeller/KSR/"
    "3cae0b874f312f4492e1c38eb3a0d88c74a195a2/data"
)
_AUTHORS_URL = (
    "https://raw.githubusercontent.com/anniejlu/regional_bias/main/"
    "Reuters21578-multiclass/test_sets_docbert"
)
#: The SGML files a run reads, as single raw files from a pinned commit of a public mirror
#: (the checksum of the UCI archive cannot be known offline).
REUTERS_DOWNLOADS = manifest(
    "reuters21578",
    _SGML_URL,
    {
        "reut2-000.sgm": "9ff9bb40624ef992a03f62aace12e697dca1087abfd9b4d06aa787a6ad3e0687",
        "reut2-001.sgm": "1528e7e82d110d88d0234eb9619eadb7f9fd805711971df05975b92277dfdf4d",
        "reut2-002.sgm": "99f18068d0518952987dedd78c622e5c2a584e357d264d3754696c815f3e6628",
        "reut2-003.sgm": "78a3a8d7e04bc9d42c4614d5d5c60a4293dbe3f708df6fb5a71d9ef31f4b3fa3",
        "reut2-004.sgm": "726342c19a65873330b412378cd6a3f0d512035f5223146ddd60930c62eb6ff0",
        "reut2-005.sgm": "d09de619b6dd2d047d5124681f6df90550abaf592020d1c1ce338ae9b91522e7",
        "reut2-006.sgm": "b5535c0d66b01f4976f84621a4a795afbc00d2c4bd0a1b7ae426df6630fb361d",
        "reut2-007.sgm": "aa706007ec84a03537a3921ca976d60e11b3f99e4b9e9b2d5c81dd384d2c2062",
        "reut2-008.sgm": "a3994583694a00b7c744097c1d7eabfcf90f2e6650cc21663e46828035a336cb",
        "reut2-009.sgm": "29995f606dd1a9bdf907eacc9d879846c716860d9d9141676979474aaea39c7d",
        "reut2-010.sgm": "996df6008089bd09fa5b28a4d2eb0ee5f7b9d4601cde566fed3926ac82960fa3",
        "reut2-011.sgm": "d3a2782015247d9c2bffb8926267827fdd449c70d619435ef01a25a1c56a53ca",
        "reut2-012.sgm": "da31035d483851f2aebce5b66d779e5e2c0ac9dcfe098596c6d544e81c5604ab",
        "reut2-013.sgm": "8f7700bc0455fac3fcc12377ced4807b7df8aba1f21ecad059b9cc2b1cf0b8be",
        "reut2-014.sgm": "ef936bd3e0f36cf722afa9a6957563549775af32e9e28b4f539c8737ceda83ab",
        "reut2-015.sgm": "6d3bcec73eff871b8a5403588af814c4e50a0de6bc25707480522ab836f74026",
        "reut2-016.sgm": "be2f03a185fff70131f3b4fdbd6229b7ee2be077eba9691eaa597c8cfbda8812",
        "reut2-017.sgm": "f370e610b4b1342e41a98e0c426a08541044bd1d7e539674f32372a6060b73b5",
        "reut2-018.sgm": "a5f971bf25448e915781962309e669359a35fbcaf3017a806eca0590897f209a",
        "reut2-019.sgm": "d3b07097fba2633d130b4914aceba671645985248943ce9e39c289315339dffb",
        "reut2-020.sgm": "f6ad1b724125c202566c63b35ea0b5ee23881f8b7ed47a32829d5af05d8e860d",
        "reut2-021.sgm": "3f5196d32869723c9042aa5756805b4e90360f1f45ea17f4594fa0e2b3630b18",
    },
)
#: The 22 SGML files of Reuters-21578 Distribution 1.0, relative to the data directory.
SGML_FILES: tuple[str, ...] = tuple(entry.path for entry in REUTERS_DOWNLOADS)
#: The authors' DocBERT test splits by region (``regional_reuters``), to compare against.
AUTHORS_SPLITS = manifest(
    "regional_reuters",
    _AUTHORS_URL,
    {
        "au.tsv": "8b91bb01c92cebfd10d9d1a248b1919b80bd45eea8e4f531737e18abd082a3f6",
        "ca.tsv": "57f3c2e1b93cc26f98eb1bc0af6251400c47d5d0a86423d3ceba22f4e864bc8f",
        "uk.tsv": "af2428a23f97f60f2d7de311413b4414f0de8b4498a76d6fdb97e7f87691f682",
        "us.tsv": "9117fd1c445eace039037b0d018353de4b8f428fc58ae5ee102a80cfa12a0560",
        "mtp.tsv": "117b1f7b914d44e5d7de860b2d91d292ab40daea8637f43ca9d52ac42de93185",
        "test.tsv": "5f32c112abcb1f1cd01f0412aa39428076a6cf632ecf11c4267ca4844674157f",
        "dev.tsv": "307795fbc16d65ac442a2b88d4451f11739f8cd708f355a2b30792a5590e5018",
    },
)


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


@dataclass(frozen=True)
class Reuters21578(Dataset):
    """``dataset=reuters21578``: ModApte topics, grouped by the documents' places.

    Attributes:
        multiple_places: places that make a several-place document count in ``multiple``
            (None: the four focus regions).
    """

    multiple_places: list[str] | None

    downloads = REUTERS_DOWNLOADS
    extra_downloads: ClassVar[dict[str, tuple[ManifestEntry, ...]]] = {
        "regional_reuters": AUTHORS_SPLITS
    }

    def read(self, data_dir: Path | None) -> Corpus:
        """The corpus (:func:`read_reuters21578`); a known file with other bytes is warned about."""
        self.altered_copies(self.required(data_dir))
        return read_reuters21578(self.required(data_dir), multiple_places=self.multiple_places)


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
            f"or set {DATA_DIR_ENV} to the folder that holds reuters21578/"
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
