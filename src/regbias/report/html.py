"""``report.html``: the Markdown report as one self-contained page, figures embedded.

MLflow's artifact viewer renders ``report.md`` but not the figures it links (relative links
are not resolved there); it shows an HTML artifact as a page. So the report is also written as
HTML with every linked PNG inlined as a ``data:`` URI: it reads the same in MLflow, in a
browser from the local copy, or mailed as one file.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from markdown_it import MarkdownIt

from regbias.report.escape import html_text

__all__ = ["HTML_REPORT", "report_html", "write_html_report"]

#: The file name of the page, beside ``report.md``.
HTML_REPORT = "report.html"
_IMAGE = re.compile(r'<img src="([^"]+\.png)"')
_REPORT_LINK = re.compile(r'href="([^":]*/)?report\.md"')
_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 1.5rem auto;
       padding: 0 1rem; line-height: 1.45; color: #222; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { border: 1px solid #ccc; padding: 0.15rem 0.4rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
img { max-width: 100%; height: auto; display: block; margin: 0.5rem 0; }
code { background: #f3f3f3; padding: 0 0.2rem; }
li { margin: 0.2rem 0; }
"""


def report_html(markdown: str, folder: Path, title: str = "regbias report") -> str:
    """The report as one HTML page: ``markdown`` rendered, its PNGs under ``folder`` inlined.

    Args:
        markdown: the report's Markdown (relative image links such as ``figures/lda.png``).
        folder: the folder the links are relative to.
        title: the page title.

    Returns:
        The page; a linked figure that is not in ``folder`` keeps its link, and links to
        another ``report.md`` point to its ``report.html``.
    """
    # Raw HTML is shown as text: a name from the data can never become markup.
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    body = _IMAGE.sub(lambda m: f'<img src="{_data_uri(folder, m.group(1))}"', body)
    # A comparison page links each variant's report: its page, beside it.
    body = _REPORT_LINK.sub(lambda m: f'href="{m.group(1) or ""}{HTML_REPORT}"', body)
    head = f'<meta charset="utf-8"><title>{html_text(title)}</title><style>{_STYLE}</style>'
    return f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>\n<body>\n{body}</body></html>\n'


def write_html_report(folder: Path) -> Path | None:
    """Write ``report.html`` beside ``folder/report.md`` (None when there is no report)."""
    source = folder / "report.md"
    if not source.is_file():
        return None
    target = folder / HTML_REPORT
    target.write_text(report_html(source.read_text(), folder), encoding="utf-8")
    return target


def _data_uri(folder: Path, link: str) -> str:
    path = (folder / link).resolve()
    if folder.resolve() not in path.parents or not path.is_file():
        return link
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
