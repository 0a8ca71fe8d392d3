"""``report.html``: the Markdown report as one self-contained page, figures embedded.

MLflow's artifact viewer renders ``report.md`` but not the figures it links (relative links
are not resolved there); it shows an HTML artifact as a page. So the report is also written as
HTML with every linked PNG inlined as a ``data:`` URI: it reads the same in MLflow, in a
browser from the local copy, or mailed as one file.

A page keeps to a budget, :data:`PAGE_LIMIT` (what MLflow's viewer draws: docs/outputs.md):
figures are re-encoded small, and a figure that would pass it is named instead of embedded.
"""

from __future__ import annotations

import base64
import io
import itertools
import re
from pathlib import Path

from markdown_it import MarkdownIt
from PIL import Image

from regbias.report.escape import html_text
from regbias.report.findings_model import heading_anchor, method_markdown
from regbias.report.report_folder import write_page
from regbias.tracking.artifacts import METHOD_HTML, METHOD_MD, REPORT_HTML, REPORT_MD
from regbias.tracking.run_log import RunLog

#: The most bytes a page may have: a third of the largest page MLflow's viewer was seen to draw.
PAGE_LIMIT = 2_000_000
_WIDTH = 900
_COLOURS = 64
_IMAGE = re.compile(r'<img src="([^"]+\.png)" alt="([^"]*)" */?>')
#: Links to a page of the report's folder (``report.md``, ``method.md#...``): to its HTML form.
_PAGE_LINK = re.compile(
    rf'href="((?:[^":#]*/)?(?:{re.escape(REPORT_MD)}|{re.escape(METHOD_MD)}))(#[^"]*)?"'
)
_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 1.5rem auto;
       padding: 0 1rem; line-height: 1.45; color: #222; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.15rem 0.4rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
img { max-width: 100%; height: auto; display: block; margin: 0.5rem 0; }
code { background: #f3f3f3; padding: 0 0.2rem; }
li { margin: 0.2rem 0; }
"""


def report_html(markdown: str, folder: Path, title: str = "regbias report") -> str:
    """The report as one HTML page: ``markdown`` rendered, its PNGs under ``folder`` inlined.

    Every heading gets its anchor as ``id``; a linked figure that is not in ``folder`` keeps its
    link, and links to a ``report.md`` (a comparison page's variants) or ``method.md`` point to
    its HTML form beside it.
    """
    # Raw HTML is shown as text: a name from the data can never become markup.
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = parser.parse(markdown)
    for opening, inline in itertools.pairwise(tokens):
        if opening.type == "heading_open":
            opening.attrSet("id", heading_anchor(inline.content))
    body = parser.renderer.render(tokens, parser.options, {})
    body = _PAGE_LINK.sub(lambda m: f'href="{m[1].removesuffix(".md")}.html{m[2] or ""}"', body)
    head = f'<meta charset="utf-8"><title>{html_text(title)}</title><style>{_STYLE}</style>'
    page = f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>\n<body>\n{body}</body></html>\n'
    left = [PAGE_LIMIT - len(page.encode("utf-8"))]

    def embed(match: re.Match[str]) -> str:
        link, alt = match.group(1), match.group(2)
        uri = _data_uri(folder, link)
        if uri is None:
            return match.group(0)
        if len(uri) + len(alt) + 20 > left[0]:
            return (
                f"<em>[figure {html_text(link)}: a separate artifact, not embedded: the page "
                f"stays under {PAGE_LIMIT // 1000} KB]</em>"
            )
        left[0] -= len(uri) + len(alt) + 20
        return f'<img src="{uri}" alt="{alt}">'

    return _IMAGE.sub(embed, page)


def write_html_report(folder: Path) -> Path | None:
    """Write ``report.html`` beside ``folder/report.md``, ``method.html`` beside ``method.md``.

    Returns:
        The report's page; None when there is no report.
    """
    source = folder / REPORT_MD
    if not source.is_file():
        return None
    method = folder / METHOD_MD
    if method.is_file():
        page = report_html(method.read_text(), folder, title="regbias: the method")
        write_page(folder / METHOD_HTML, page)
    return write_page(folder / REPORT_HTML, report_html(source.read_text(), folder))


def publish_html(run: RunLog, folder: Path, directory: str | None = None) -> Path | None:
    """Write ``report.html`` beside ``folder/report.md`` and into ``run``'s ``directory``.

    The method page is the one the installed docs say now: a resumed run's copy was written
    when it ran, before any edit of docs/method.md since (an edit the resume key, which
    covers code, config and data, does not see); both copies and ``run``'s are brought up
    to date.
    """
    _refresh_method(run, folder, directory)
    page = write_html_report(folder)
    if page is not None:
        run.file(page, directory)
        method = folder / METHOD_HTML
        if method.is_file():
            run.file(method, directory)
    return page


def _refresh_method(run: RunLog, folder: Path, directory: str | None) -> None:
    """``folder/method.md`` (and ``run``'s) rewritten where it differs from the docs' page."""
    method = folder / METHOD_MD
    if not method.is_file():
        return
    current = method_markdown()
    if method.read_text(encoding="utf-8") != current:
        write_page(method, current)
        run.text(current, f"{directory}/{METHOD_MD}" if directory else METHOD_MD)


def _data_uri(folder: Path, link: str) -> str | None:
    """The figure re-encoded small, as a ``data:`` URI (None: not a figure under ``folder``)."""
    path = (folder / link).resolve()
    if folder.resolve() not in path.parents or not path.is_file():
        return None
    data = path.read_bytes()
    try:
        with Image.open(io.BytesIO(data)) as image:
            small = image.convert("RGB")
    except OSError:  # not a PNG Pillow reads: embedded as it is
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    if small.width > _WIDTH:
        height = round(small.height * _WIDTH / small.width)
        small = small.resize((_WIDTH, height), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    small.quantize(_COLOURS, method=Image.Quantize.FASTOCTREE).save(buffer, "PNG", optimize=True)
    smaller = min(data, buffer.getvalue(), key=len)
    return "data:image/png;base64," + base64.b64encode(smaller).decode("ascii")
