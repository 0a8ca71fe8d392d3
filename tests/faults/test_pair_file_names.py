"""Items 6 and 10 of issue 56: a file per pair, and file names that fit, checked up front.

6. Pairs ``a-b``×``c`` and ``a``×``b-c`` both wrote ``explain/a-b-c.*``: the second overwrote
   the first and the report linked one figure from two sections. Every per-pair file name
   (explanations, the encoder comparison's separations, the scatter plots) is now one per
   pair; ordinary names (``au-uk``) keep theirs.
10. Two group names of 100 CJK characters passed the start-up checks (which count characters)
   and the explanations failed at the end with ``OSError: File name too long``: the bytes of
   every file name derived from group names are checked up front.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from regbias.analysis.encoders.separation import EncoderContrast
from regbias.analysis.explain.result import Explanations, PairExplanation
from regbias.analysis.explain.settings import ExplainSettings
from regbias.analysis.explain.typical import TYPICAL_COLUMNS
from regbias.analysis.explain.words import WORD_COLUMNS
from regbias.app.preflight import check_group_names, preflight_groups
from regbias.app.settings import read_settings
from regbias.errors import DataError
from regbias.report.encoder_contrast import EncoderComparison
from regbias.report.explain import explain_section, log_explanations
from regbias.report.markdown import scatter_path
from regbias.tracking import artifacts as paths
from tests.conftest import packaged
from tests.faults.conftest import composed, write_csv
from tests.report.test_findings import FakeRun

#: Pairs whose plain joins are the same.
CLASHING = [("a-b", "c"), ("a", "b-c"), ("a b", "c"), ("a_b", "c"), ("a/b", "c")]


def _pair(a: str, b: str) -> PairExplanation:
    words = pd.DataFrame([("tea", 2.5, 1.0, 9, 1, 10)], columns=list(WORD_COLUMNS))
    typical = pd.DataFrame([("a", "tea time", 0.4)], columns=list(TYPICAL_COLUMNS))
    return PairExplanation(a, b, words, typical, effect=0.1, p_adjusted=0.01)


def test_pairs_whose_names_join_alike_get_a_file_each() -> None:
    pairs = [_pair(a, b) for a, b in (("a-b", "c"), ("a", "b-c"))]
    explained = Explanations(packaged(ExplainSettings, "analysis.explain"), pairs)
    run = FakeRun()
    log_explanations(run, explained)  # type: ignore[arg-type]
    tables = [p for p in run.tables if p != paths.EXPLAIN_JSON]
    assert len(tables) == 4 and len(set(run.figures)) == 2
    section = explain_section(explained)
    links = [line for line in section.splitlines() if line.startswith("![")]
    assert len(links) == 2 and len(set(links)) == 2
    assert all(link.split("](", 1)[1].rstrip(")") in run.figures for link in links)


def test_pair_names_are_one_per_pair_and_ordinary_ones_unchanged() -> None:
    names = [paths.pair_name(a, b) for a, b in CLASHING]
    assert len(set(names)) == len(names)
    assert all("/" not in n and not n.startswith(".") for n in names)
    assert paths.pair_name("au", "uk") == "au-uk"
    assert paths.pair_name("new_zealand", "uk.2") == "new_zealand-uk.2"
    # Over every pair of a set of awkward names: never two pairs with one name.
    awkward = ["a", "b", "a-b", "b-c", "c", "a b", "a_b", "-", "--", ".a", "a.", "ü", "u"]
    every = [paths.pair_name(a, b) for a, b in itertools.permutations(awkward, 2)]
    assert len(set(every)) == len(every)
    # A user's column names can never leave or nest the run's artifact folder.
    for a, b in [("../../etc/x", "y"), ("..", ".."), (".a", "/b")]:
        for name in (paths.pair_name(a, b), paths.pair_name(a, b, "__")):
            assert "/" not in name and not name.startswith(".")


def test_scatter_plots_are_one_per_distance_and_column() -> None:
    assert scatter_path("dist_lda", "gap_f1") == "figures/scatter/dist_lda__gap_f1.png"
    assert scatter_path("dist_a__b", "gap") != scatter_path("dist_a", "b__gap")


def _contrast(first: str, second: str) -> EncoderContrast:
    table = pd.DataFrame({"group_a": ["au"], "group_b": ["uk"], "first": [1.0], "second": [0.5]})
    return EncoderContrast(first, second, table, {}, 0.95, 0.05, 99)


def test_encoder_separations_whose_labels_join_alike_get_a_table_each() -> None:
    comparison = EncoderComparison(
        separation=[_contrast("x vs y", "z"), _contrast("x", "y vs z"), _contrast("p", "q")]
    )
    tables = comparison.tables()
    assert len(tables) == 3
    assert "separation_p_vs_q" in tables  # an unambiguous pair keeps its name
    firsts = {t.columns[2] for t in tables.values()}
    assert firsts == {"separation x vs y", "separation x", "separation p"}


@pytest.mark.parametrize(
    "names", [["中" * 100, "国" * 100, "z"], ["é" * 130, "z"], ["a" * 60, "語" * 65]]
)
def test_group_names_too_many_bytes_for_a_file_name_stop_at_start(names: list[str]) -> None:
    """Characters fit MLflow's key; bytes do not fit the file system: one line says what to do."""
    with pytest.raises(DataError) as info:
        check_group_names(names)
    message = str(info.value)
    assert "\n" not in message
    assert "bytes" in message and "shorten the group names in the data" in message


def test_group_names_whose_file_names_fit_pass() -> None:
    """40 CJK characters each: ``<a>-<b>_typical.csv`` takes 253 bytes."""
    check_group_names(["中" * 40, "国" * 40, "z"])
    longest = max(len(n.encode()) for n in paths.pair_file_names("中" * 40, "国" * 40))
    assert longest == 253
    with pytest.raises(DataError, match="bytes"):
        check_group_names(["中" * 41, "国" * 40])


def test_a_csv_corpus_with_such_names_is_refused_before_any_run(tmp_path) -> None:
    """The start-up check reads the corpus's groups: refused before any run or embedding."""
    path = write_csv(tmp_path / "cjk.csv", {"train": 40, "中" * 100: 20, "国" * 100: 20})
    settings = read_settings(
        composed("dataset=csv", f"dataset.path={path}", "dataset.train_group=train")
    )
    with pytest.raises(DataError, match=r"make a file name of \d+ bytes"):
        preflight_groups(settings)
