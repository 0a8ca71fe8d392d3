"""The findings as a typed object: the bottom line, one answer per question, then the details.

A report's Findings are built once (:mod:`regbias.report.answers`) and written twice: as the
Findings section of ``report.md`` (and so ``report.html``) and as ``findings.json`` beside it.
The end-of-run summary, the run's description in the MLflow UI and a sweep's comparison read
``findings.json`` back (:meth:`Findings.read`); nothing parses the Markdown.

Every text field is Markdown as the report writes it (names from the data escaped);
:meth:`Findings.plain_lines` gives the terminal's form.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from regbias.report.escape import markdown_text, plain_text
from regbias.serial import structure, unstructure
from regbias.tracking.artifacts import FINDINGS_JSON, METHOD_MD

#: Where each answer's method is described (the "how" column links its headings): the
#: project's docs/method.md, which every report carries beside it (:func:`method_markdown`).
METHOD_DOC = METHOD_MD
#: The sections that follow the Findings: every long line, then the glossary.
DETAILS_HEADING = "Findings in detail"
TERMS_HEADING = "Terms"
_NOT_SLUG = re.compile(r"[^\w\- ]")
#: A link to another page of the project's docs (``[scale.md](scale.md#presets)``): that page is
#: not copied beside a report, so the link would not resolve there. One to method.md itself does.
DOCS_PAGE_LINK = re.compile(
    rf"\[([^\]]+)\]\(((?!{re.escape(METHOD_DOC)})[\w\-]+\.md)(?:#([^)]*))?\)"
)


def method_markdown() -> str:
    """docs/method.md as the package ships it (``regbias/docs/method.md``), made to stand alone.

    A report carries this page beside it, without the project's other docs pages, so each link
    to one of those becomes the page's path in the project in code type
    (``docs/outputs.md#what-a-jobs-run-holds``): every link left in the copy resolves beside the
    report.
    """
    text = resources.files("regbias").joinpath("docs", METHOD_DOC).read_text(encoding="utf-8")
    return DOCS_PAGE_LINK.sub(_docs_page_named, text)


def _docs_page_named(link: re.Match[str]) -> str:
    """A link to another docs page, as that page's path in the project's repository."""
    label, page, anchor = link.group(1), link.group(2), link.group(3)
    where = f"`docs/{page}" + (f"#{anchor}`" if anchor else "`")
    return where if label.strip("`") == page else f"{label} (the project's {where})"


def heading_anchor(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, no punctuation, spaces as hyphens."""
    return _NOT_SLUG.sub("", heading.strip().lower()).replace(" ", "-")


@dataclass(frozen=True)
class Answer:
    """One of the study's questions answered.

    Attributes:
        question: the question, plain text.
        answer: the answer, Markdown (short: counts and names, the numbers in the details).
        how: the method and family in a few words, Markdown.
        section: the heading of :data:`METHOD_DOC` that describes the method.
    """

    question: str
    answer: str
    how: str
    section: str

    @property
    def link(self) -> str:
        """The link to the method's heading in :data:`METHOD_DOC`."""
        return f"{METHOD_DOC}#{heading_anchor(self.section)}"

    def row(self) -> str:
        """The answer as one row of the Findings table (Markdown)."""
        how = f"{self.how} ([method]({self.link}))"
        cells = [markdown_text(self.question), _cell(self.answer), _cell(how)]
        return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class Findings:
    """What a report found, in the order every reader shows it.

    Attributes:
        bottom_line: at most two lines, the first starting ``**Bottom line.**``.
        warnings: what makes every finding moot or approximate (a random encoder, a precision
            below float32): shown before the bottom line.
        answers: one :class:`Answer` per question of the study.
        caveats: short warnings that hold for every answer (a random encoder, a distance
            without a usable value).
        details: the long lines (each test's numbers, intervals and caveats) that follow.
    """

    bottom_line: tuple[str, ...]
    answers: tuple[Answer, ...]
    caveats: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def table(self) -> str:
        """The questions' table (Markdown)."""
        rows = [answer.row() for answer in self.answers]
        return "\n".join(["| question | answer | how |", "|:---|:---|:---|", *rows])

    def summary(self) -> str:
        """The warnings, bottom line, table and caveats (Markdown): what a reader needs first."""
        parts = ["\n\n".join(self.warnings)] if self.warnings else []
        if self.bottom_line:
            parts.append("\n\n".join(self.bottom_line))
        if self.answers:
            parts.append(self.table())
        if self.caveats:
            parts.append("\n".join(f"- {line}" for line in self.caveats))
        return "\n\n".join(parts)

    def markdown(self) -> str:
        """``## Findings``: the summary, and links to the details and terms the report writes."""
        pointer = (
            f"Every test's numbers, intervals and caveats: [{DETAILS_HEADING}]"
            f"(#{heading_anchor(DETAILS_HEADING)}); the terms: [{TERMS_HEADING}]"
            f"(#{heading_anchor(TERMS_HEADING)})."
        )
        return f"## Findings\n\n{self.summary()}\n\n{pointer}\n"

    def plain_lines(self) -> list[str]:
        """The findings as a terminal shows them: warnings, bottom line, answers, caveats."""
        lines = [plain_text(line) for line in (*self.warnings, *self.bottom_line)]
        lines += [f"{a.question} {plain_text(a.answer)}" for a in self.answers]
        return lines + [plain_text(line) for line in self.caveats]

    def to_dict(self) -> dict[str, Any]:
        """The findings as JSON-ready data."""
        found: dict[str, Any] = unstructure(self)
        return found

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Findings:
        """The findings :meth:`to_dict` wrote."""
        return structure(data, cls)

    @classmethod
    def read(cls, folder: Path) -> Findings | None:
        """The findings of a report folder (None: it has no :data:`FINDINGS_JSON`)."""
        path = folder / FINDINGS_JSON
        return cls.from_dict(json.loads(path.read_text())) if path.is_file() else None


def _cell(markdown: str) -> str:
    """Markdown made one table cell: line breaks as spaces, bare pipes escaped."""
    text = " ".join(markdown.split())
    return re.sub(r"(?<!\\)\|", r"\\|", text)
