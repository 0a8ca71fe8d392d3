"""The section "What carries each difference", its tables, figures and bottom-line clause."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import HashingVectorizer

from regbias.analysis.explain.pairs import explain_pairs
from regbias.analysis.explain.places import gazetteer_of
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.pairs.embedding import EmbeddingTestSettings, embedding_pair_tests
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.report.explain import explain_section
from regbias.report.publish import log_analysis
from regbias.tracking import artifacts as paths
from tests.conftest import packaged
from tests.report.test_findings import FakeRun

_HASHED = HashingVectorizer(n_features=256, alternate_sign=False, norm="l2")


def _vectors(texts: list[str]) -> np.ndarray:
    return _HASHED.transform(texts).toarray()


def test_the_section_tables_figures_and_bottom_line_clause_appear() -> None:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)] + ["the", "and", "of", "to", "it", "we", "is", "in"]
    base = [" ".join(rng.choice(words, 8)) for _ in range(240)]
    groups = {
        # uk and us differ by which city they name only; au by a word no gazetteer knows.
        "uk": [f"{t} London" for t in base[:80]],
        "us": [f"{t} Boston" for t in base[80:160]],
        "au": [f"{t} <b>arvo|</b>" for t in base[160:]],
    }
    pair = dataclasses.replace(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=999),
        statistic="mean",
        resamples=0,
    )
    tests = embedding_pair_tests(groups, _vectors, pair)
    explain = packaged(ExplainSettings, "analysis.explain", mask_places=True)
    gazetteer = gazetteer_of(["London", "Boston"], "two cities")
    explained = explain_pairs(tests, groups, _vectors, explain, gazetteer=gazetteer)
    results = StudyResults(list(groups), meta={"dataset": "toy"}, record=tests)
    results.explained = explained
    analysis = Analysis(None, None, None, tests.table[["group_a", "group_b"]].copy(), None)
    run = FakeRun()
    log_analysis(run, results, analysis, packaged(AnalysisSettings, "analysis"))  # type: ignore[arg-type]

    report = run.texts[paths.REPORT_MD]
    section = report.split("## What carries each difference", 1)[1]
    differing = [p.pair for p in explained.pairs]
    assert "uk-us" in differing and "us-au" in differing
    for name in differing:
        assert f"### {name}" in section
        assert paths.explain_words_csv(name) in run.tables
        assert paths.explain_typical_csv(name) in run.tables
        assert paths.explain_figure(name) in run.figures
    assert "uk-us: differs, but not shown to differ once place names are masked" in section
    assert "descriptive, not a test" in section
    assert "arvo" in section and "<b>" not in section  # a text is escaped
    assert paths.MASKED_TESTS_CSV in run.tables and paths.EXPLAIN_JSON in run.texts
    assert "Bottom line in full" not in report  # the bottom line is said once, at the top


def test_without_the_control_the_section_says_how_to_run_it() -> None:
    groups = {"uk": [f"tea and biscuits {i} London" for i in range(40)]}
    groups["us"] = [f"coffee and cookies {i} Boston" for i in range(40)]
    pair = dataclasses.replace(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=199),
        statistic="mean",
        resamples=0,
    )
    tests = embedding_pair_tests(groups, _vectors, pair)
    explain = packaged(ExplainSettings, "analysis.explain")
    assert not explain.mask_places  # off by default: it costs a second test of record
    explained = explain_pairs(tests, groups, _vectors, explain)
    assert explained.pairs and not explained.controlled
    section = explain_section(explained)
    assert "and the place-name control" not in section
    assert "The place-name control did not run: `analysis.explain.mask_places=true`" in section
    assert "masked in" not in section  # no pair claims a masked verdict


def test_the_pools_dates_and_html_entities_are_flagged_where_the_words_show_them() -> None:
    """Issue 60: `baseline`'s words are a date effect of its pool; `quot` is `&quot;`."""
    from regbias.analysis.explain.result import Explanations, PairExplanation
    from regbias.data.sentiment140 import POOL_DATES
    from regbias.report.explain import reading_notes

    words = pd.DataFrame(
        {
            "word": ["quot", "school"],
            "z": [3.0, -2.5],
            "delta": [1.0, -1.0],
            "count_a": [30, 1],
            "count_b": [2, 25],
            "prior": [0.1, 0.1],
        }
    )
    pair = PairExplanation("za", "baseline", words, pd.DataFrame(), 0.1, 0.01)
    settings = packaged(ExplainSettings, "analysis.explain")
    notes = reading_notes(Explanations(settings, [pair]), POOL_DATES)
    assert notes[0] == "`baseline`'s words are its training pool's (how it was drawn: Groups)."
    assert '`quot` (")' in notes[1] and "HTML entities" in notes[1]
    plain = PairExplanation(
        "za", "uk", words.assign(word=["tea", "mate"]), pd.DataFrame(), 0.1, 0.01
    )
    assert reading_notes(Explanations(settings, [plain]), POOL_DATES) == []


def test_each_groups_share_of_texts_naming_a_place_is_said_control_or_not() -> None:
    """Issue 60: the place-name control's share, even where the control is off."""
    from regbias.analysis.explain.places import gazetteer_of, place_shares
    from regbias.analysis.explain.result import Explanations
    from regbias.report.explain import place_share_lines

    gazetteer = gazetteer_of(["London", "Sydney"], "test")
    shares = place_shares(
        gazetteer, {"uk": ["rain in london", "tea time"], "au": ["sunny", "hot", "sydney!", "x"]}
    )
    assert shares == {"uk": 0.5, "au": 0.25}
    settings = packaged(ExplainSettings, "analysis.explain")
    found = Explanations.from_dict(Explanations(settings, place_shares=shares).to_dict())
    assert found.place_shares == shares and not found.controlled
    line = place_share_lines(found)[0]
    assert line.startswith("Texts that name a place (the control's gazetteer, measured whether")
    assert "uk 50.0%, au 25.0%" in line
    assert place_share_lines(Explanations(settings)) == []


def test_the_groups_sentence_says_how_the_pool_behind_baseline_was_drawn() -> None:
    from regbias.data.sentiment140 import POOL_DATES
    from regbias.report.escape import markdown_text
    from regbias.report.markdown import baseline_sizes, report_markdown

    results = StudyResults(["au", "baseline"], group_sizes={"baseline": 3000})
    assert "training pool" not in baseline_sizes(results, None)
    results.meta["training_pool"] = POOL_DATES
    said = baseline_sizes(results, None)
    assert "The training pool is the first and the last 50,000 rows" in said and "by date" in said
    # The page says it there once: not again in "Settings that ran".
    page = report_markdown(
        results, Analysis(None, None, None, None, None), packaged(AnalysisSettings, "analysis")
    )
    assert page.count(markdown_text(POOL_DATES)) == 1
