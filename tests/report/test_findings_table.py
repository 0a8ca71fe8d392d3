"""Issue 44, item 8: the Findings read in a minute, and the findings as a typed contract."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import correlation_rows
from regbias.analysis.pairs.embedding import EmbeddingPairTests, EmbeddingTestSettings
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.report.answers import QUESTIONS
from regbias.report.findings import COVERAGE, interval_reading
from regbias.report.findings_model import (
    DOCS_PAGE_LINK,
    FINDINGS_JSON,
    METHOD_DOC,
    Answer,
    Findings,
    heading_anchor,
)
from regbias.report.headline import Headline
from regbias.report.html import report_html, write_html_report
from regbias.report.publish import log_analysis
from regbias.report.record import pair_table
from regbias.tracking.ui import NOTE_LIMIT, fitted_description, run_description
from tests.conftest import ROOT, packaged
from tests.report.test_findings import FakeRun, findings_tables, primary_result

_LINK = re.compile(r"\]\(([^)]+)\)")


def _record() -> EmbeddingPairTests:
    """Two region pairs (one differs, one with a name that needs escaping) and a reference."""
    table = pd.DataFrame(
        {
            "group_a": ["uk", "nz", "au"],
            "group_b": ["us", "za<b>", "mixed"],
            "family": ["regions", "regions", "reference"],
            "n_a": [2000, 329, 1800],
            "n_b": [2000, 250, 2000],
            "shared": [0, 0, 200],
            "statistic": [0.01, 0.001, 0.002],
            "z": [18.5, 0.3, 1.0],
            "effect": [0.0099, 0.0001, 0.001],
            "effect_ci_low": [0.009, -0.001, 0.0],
            "effect_ci_high": [0.011, 0.002, 0.002],
            "p": [0.0001, 0.4, 0.2],
            "p_adjusted": [0.0002, 0.4, 0.2],
            "differs": [True, False, False],
            "detectable_share": np.nan,
        }
    )
    return EmbeddingPairTests(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding"), 0.05, table
    )


def _report(primary: PrimaryTest | None = None) -> FakeRun:
    found, checks = findings_tables()
    found["spearman_p_maxt"] = [0.07, 0.001, 0.03, 0.7]
    found["kendall_p_maxt"] = [0.07, 0.001, 0.03, 0.7]
    groups = ["uk", "us", "nz", "za<b>", "au", "mixed"]
    pairwise = pd.DataFrame(
        {"group_a": list("aaab"), "group_b": list("bcdc")}
        | {c: np.arange(4.0) for c in set(found["distance"]) | set(found["performance"])}
    )
    analysis = Analysis(
        None,
        None,
        None,
        pairwise,
        correlation_rows(found),
        robustness=checks,
        primary=primary or primary_result(0.12),
    )
    meta = {"dataset": "toy", "encoder": "tiny", "encoder_identity": "random:tiny"}
    results = StudyResults(groups, meta=meta, record=_record())
    run = FakeRun()
    settings = packaged(AnalysisSettings, "analysis")
    log_analysis(run, results, analysis, settings)  # type: ignore[arg-type]
    return run


def _method_anchors() -> set[str]:
    text = (ROOT / "docs" / METHOD_DOC).read_text()
    return {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


def _cells(row: str) -> list[str]:
    """A Markdown table row's cells (escaped pipes stay inside their cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_the_findings_table_answers_every_question_with_a_method_link() -> None:
    report = _report().texts["report.md"]
    section = report.split("## Findings\n\n", 1)[1].split("\n## ", 1)[0]
    paragraphs = section.split("\n\n")
    # The random encoder's warning, then the bottom line, at most three lines, then the table.
    assert paragraphs.pop(0).startswith("**Warning: random encoder.**")
    table_at = next(i for i, p in enumerate(paragraphs) if p.startswith("| question |"))
    assert 1 <= table_at <= 3 and paragraphs[0].startswith("**Bottom line.**")
    rows = [_cells(r) for r in paragraphs[table_at].splitlines()]
    assert rows[0] == ["question", "answer", "how"] and len(rows) == 2 + len(QUESTIONS)
    anchors = _method_anchors()
    for question, (asked, answer, how) in zip(QUESTIONS, rows[2:], strict=True):
        assert asked == question and answer
        (link,) = _LINK.findall(how)
        path, anchor = link.split("#")
        assert path == METHOD_DOC and anchor in anchors, link
    answers = dict(zip(QUESTIONS, (r[1] for r in rows[2:]), strict=True))
    assert answers[QUESTIONS[0]].startswith("1 of 2 region pairs differ: uk-us")
    assert "none of the 1 pairs with a reference group differ" in answers[QUESTIONS[0]]
    assert answers[QUESTIONS[1]] == "Not tested"
    assert (
        answers[QUESTIONS[2]].startswith("No: rho = 0.31") and "p = 0.12" in answers[QUESTIONS[2]]
    )
    assert answers[QUESTIONS[3]].startswith("2 of 4: gap_f1 ~ dist_lda (rho = -0.90)")
    # No Findings bullet (or bottom-line line) runs long; the details keep every number.
    for line in section.splitlines():
        if not line.startswith("|"):
            assert len(line) <= 240, line
    assert "uk-us (effect 0.0099 [0.009, 0.011], Holm p 0.0002)" in report
    assert "Bottom line in full" not in report
    details = report.split("## Findings in detail", 1)[1]
    assert all(len(line) <= 300 for line in details.splitlines() if line.lstrip()[:2] == "- ")
    assert report.index("## Findings in detail") < report.index("## Terms")


def test_the_primary_has_its_own_row_and_scatter_plot() -> None:
    run = _report()
    report = run.texts["report.md"]
    table = report.split("## Strongest correlations\n\n", 1)[1]
    first = table.splitlines()[2]
    assert first.startswith("| dist_sinkhorn_long (primary: regions only) | gap_accuracy | 15 |")
    assert "| 0.31 | 0.12 |" in first
    assert table.splitlines()[3].startswith("| dist_sinkhorn_long | gap_accuracy | 28 |")
    path = "figures/scatter/primary__dist_sinkhorn_long__gap_accuracy.png"
    assert path in run.figures and f"]({path})" in report


def test_findings_json_is_the_report_s_findings() -> None:
    run = _report()
    # FakeRun keeps str(data): the dict logged is the typed object's.
    assert FINDINGS_JSON in run.texts and "'answers'" in run.texts[FINDINGS_JSON]
    found = Findings(
        ("**Bottom line.** x",), (Answer("q?", "a \\<b\\>", "how", "Reproducibility"),)
    )
    assert Findings.from_dict(json.loads(json.dumps(found.to_dict()))) == found
    assert found.answers[0].link == f"{METHOD_DOC}#reproducibility"


def test_the_html_page_keeps_the_order_and_the_links() -> None:
    report = _report().texts["report.md"]
    page = report_html(report, ROOT)
    assert page.index("Bottom line.") < page.index("<table>") < page.index("Findings in detail")
    # Every link lands: the method's headings in method.html beside it, the report's own ids.
    assert 'href="method.html#which-pairs-differ-the-test-of-record"' in page
    for anchor in re.findall(r'href="#([^"]+)"', page):
        assert f'id="{anchor}"' in page, anchor


def test_every_report_carries_the_method_its_links_name(tmp_path) -> None:
    run = _report()
    # The page stands alone: links to the project's other docs pages name them in code type.
    shipped = (ROOT / "docs" / METHOD_DOC).read_text()
    assert "](scale.md)" in shipped and "](outputs.md#what-a-jobs-run-holds)" in shipped
    copy = run.texts[METHOD_DOC]
    assert "`docs/scale.md`" in copy and "`docs/outputs.md#what-a-jobs-run-holds`" in copy
    assert copy.count("\n") == shipped.count("\n") and copy.startswith(shipped[:200])
    # A link to the method page itself resolves beside the report: it is kept.
    assert DOCS_PAGE_LINK.search(f"[it]({METHOD_DOC}#terms)") is None
    (tmp_path / "report.md").write_text(run.texts["report.md"])
    (tmp_path / METHOD_DOC).write_text(run.texts[METHOD_DOC])
    write_html_report(tmp_path)
    method = (tmp_path / "method.html").read_text()
    for link in re.findall(r'href="method.html#([^"]+)"', (tmp_path / "report.html").read_text()):
        assert f'id="{link}"' in method, link
    # And every link of the method's own page lands beside it: on one of its headings.
    for link in re.findall(r'href="([^"]*)"', method):
        assert link.startswith("#") and f'id="{link[1:]}"' in method, link
    # In the MLflow UI the description's "how" links open the run's method.html artifact.
    route = "#/experiments/1/runs/r/artifacts"
    described = run_description(run.texts["report.md"], route)
    view = "?workflowType=machine_learning"
    assert f"]({route}/method.html{view})" in described and "](method.md" not in described


def test_the_description_is_never_cut_silently_and_shows_no_escapes() -> None:
    findings = Findings(
        ("**Bottom line.** Nothing here is beyond noise.",),
        (Answer("Which pairs?", "None of za\\<b\\>", "p <= 0.05", "Reproducibility"),),
        ("**Warning.** a \\& b",),
    )
    description = Headline(findings).markdown()
    assert "\\<" not in description and "\\>" not in description and "\\&" not in description
    assert "None of za&lt;b&gt;" in description and "| question | answer | how |" in description
    short = "line\n" * 10
    assert fitted_description(short, "#/report.html") == short
    long = "".join(f"- finding {i}: {'x' * 90}\n" for i in range(200))
    cut = fitted_description(long, "#/experiments/1/runs/r/artifacts/report.html")
    assert len(cut) <= NOTE_LIMIT and len(long) > NOTE_LIMIT
    kept, note = cut.rsplit("\n\n", 1)
    assert long.startswith(kept) and long[len(kept)] == "\n"  # cut at a line's end
    assert f"of {len(long):,} characters" in note
    assert "[report.html](#/experiments/1/runs/r/artifacts/report.html)" in note


def test_the_effect_intervals_ends_print_to_the_digit_their_monte_carlo_sd_supports() -> None:
    record = _record()
    table = record.table.assign(
        effect_ci_low=[0.00912, -0.001, 0.0], effect_ci_high=[0.01134, 0.002, 0.002]
    )
    measured = replace(record, table=table.assign(effect_ci_mc=[0.0004, 0.0004, 0.0004]))
    row = measured.table.iloc[0]
    assert measured.estimate(row) == "effect 0.0099 [0.009, 0.011]"
    assert "| 0.009 | 0.011 |" in "\n".join(pair_table(measured))
    older = replace(record, table=table)  # a table from before the sd was kept: as before
    assert older.estimate(older.table.iloc[0]) == "effect 0.0099 [0.00912, 0.0113]"
    assert "| 0.00912 | 0.01134 |" in "\n".join(pair_table(older))


def test_the_primary_s_interval_notes_are_said_once_on_the_page() -> None:
    """Its coverage and what the interval answers: in the details, not the table again."""
    primary = replace(primary_result(0.01), ci_low=0.05, ci_high=0.62, confidence=0.95)
    report = _report(primary).texts["report.md"]
    reading = interval_reading(primary)
    assert reading and report.count(COVERAGE) == 1 and report.lower().count(reading.lower()) == 1
    (row,) = [line for line in report.splitlines() if line.startswith(f"| {QUESTIONS[2]}")]
    assert "| Yes: rho = 0.31, interval for the measured rho 0.05 to 0.62 (nominal 95%), " in row
    assert COVERAGE not in row and "whether there is an association" not in row
