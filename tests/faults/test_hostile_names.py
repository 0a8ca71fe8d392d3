"""Item 1 of issue 27: a name from the data is text in ``report.md`` and ``report.html``.

A CSV group named ``<img src=x onerror=...>`` was live HTML in the page (20 times) and ``a|b``
split its table row. Every writer puts names through :mod:`regbias.report.escape`, and the
page renders Markdown with raw HTML disabled; the terminal shows the names as they are.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mlflow.tracking import MlflowClient

from regbias.app.preflight import check_group_names
from regbias.errors import DataError
from regbias.report.escape import html_text, markdown_code, markdown_text, plain_text
from regbias.report.html import report_html
from tests.app.test_analyze_task import write_table
from tests.cli import run_job, runs
from tests.faults.conftest import write_csv

IMG = "<img src=x onerror=alert(document.domain)>"
SCRIPT = "<script>alert(1)</script>"
HOSTILE = [IMG, SCRIPT, "a|b", "*em*", "_x_", "[l](javascript:alert(1))", "&lt;b&gt;", "x`y"]
# Every tag the report's Markdown can produce.
REPORT_TAGS = {
    *"html head meta title style body h1 h2 h3 p ul ol li strong em code img".split(),
    *"table thead tbody tr th td a br hr pre blockquote".split(),
}


class Page(HTMLParser):
    """The tags of a page and the number of cells of each table row."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.rows: list[int] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append(0)
        elif tag in ("td", "th"):
            self.rows[-1] += 1


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


@pytest.mark.parametrize("name", HOSTILE)
def test_an_escaped_name_renders_as_the_name_itself(name):
    assert rendered(f"{markdown_text(name)}\n") == f"<p>{html_text(name)}</p>\n".replace(
        "&#x27;", "'"
    ).replace("&quot;", '"')
    assert plain_text(markdown_text(name)) == name
    assert rendered(f"{markdown_code(name)}\n") == f"<p><code>{html_text(name)}</code></p>\n"
    table = rendered(f"| g | n |\n|---|---|\n| {markdown_text(name)} | 40 |\n")
    assert Page(table).rows == [2, 2]


def test_the_page_shows_raw_html_of_the_markdown_as_text(tmp_path):
    page = report_html(f"# report\n\n{IMG}\n\n{SCRIPT}\n", tmp_path, title=SCRIPT)
    assert {tag for tag, _ in Page(page).tags} == {*"html head meta title style body h1 p".split()}
    assert "<script>" not in page and "<img" not in page


def assert_names_are_text(markdown: str, html: str, names: list[str]) -> None:
    page = Page(html)
    assert {tag for tag, _ in page.tags} <= REPORT_TAGS, {tag for tag, _ in page.tags}
    images = [attrs.get("src", "") for tag, attrs in page.tags if tag == "img"]
    assert all(src.startswith(("data:image/png;base64,", "figures/")) for src in images), images
    assert not any("onerror" in attrs for _, attrs in page.tags)
    assert not any(tag == "a" and "javascript" in attrs.get("href", "") for tag, attrs in page.tags)
    # Every row of a table has as many cells as its header (a `|` splits no row).
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        counts = Page(table).rows
        assert len(set(counts)) == 1, counts
    assert not re.search(r"(?<!\\)<(img|script)", markdown)
    for name in names:
        assert html_text(name) in html, name


def reports(workdir: Path, run_id: str) -> list[tuple[str, str]]:
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    stored = Path(client.download_artifacts(run_id, "report.md", str(workdir / "dl")))
    stored_html = Path(client.download_artifacts(run_id, "report.html", str(workdir / "dl")))
    local = next((workdir / "out").glob("**/report.md"))
    return [
        (stored.read_text(), stored_html.read_text()),
        (local.read_text(), (local.parent / "report.html").read_text()),
    ]


def test_hostile_group_names_are_text_in_both_reports_of_a_job(tmp_path):
    groups = [IMG, "a|b", "*em*"]
    path = write_csv(tmp_path / "study.csv", {"train": 240, **dict.fromkeys(groups, 40)})
    done = run_job(
        tmp_path,
        "experiment=smoke",
        "dataset=csv",
        f"dataset.path={path}",
        "dataset.train_group=train",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = runs(tmp_path)
    for markdown, html in reports(tmp_path, run.info.run_id):
        assert_names_are_text(markdown, html, groups)
        assert html.count(html_text(IMG)) >= 20
        (row,) = [line for line in markdown.splitlines() if line.startswith("| a\\|b | 40")]
        assert row == "| a\\|b | 40 |"


def test_hostile_names_of_an_analyze_table_are_text_in_both_reports(tmp_path):
    groups = [SCRIPT, IMG, "a|b", "*em*", "c", "d"]
    table = write_table(tmp_path / "pairs.csv", groups)
    done = run_job(tmp_path, "experiment=smoke", "task=analyze", f"analysis.analyze.input={table}")
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = runs(tmp_path)
    for markdown, html in reports(tmp_path, run.info.run_id):
        assert_names_are_text(markdown, html, [])
        assert "<script>" not in html and "<img src=x" not in html


@pytest.mark.parametrize(
    "names", [["a" * 300, "b", "c"], ["x" * 120, "y" * 120, "z"], ["au", "b" * 209]]
)
def test_group_names_too_long_for_an_mlflow_key_stop_before_any_run(names):
    """MLflow keeps 250 characters of a key: checked up front, not after the distances ran."""
    with pytest.raises(DataError, match=r"too long together for an MLflow key"):
        check_group_names(names)


def test_long_but_fitting_group_names_pass():
    check_group_names(["x" * 100, "y" * 100, "z"])
