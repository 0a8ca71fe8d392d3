"""Items 3 and 5 of issue 20: an undefined value is NaN, leaves the correlation, and is said.

A group with one label has no recall for the other (not 0.0); a correlation over fewer pairs
than the table has says how many were left out; a distance whose every solve failed to
converge is reported first as having no usable value, with the settings that fix it.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd

from regbias.analysis.correlation.table import correlations
from regbias.analysis.study import StudyResults, analyse
from regbias.app.settings import read_settings
from regbias.distances.matrix import DistanceMatrix
from regbias.performance.evaluation import binary_metrics
from regbias.report.markdown import report_markdown
from tests.faults.conftest import composed
from tests.report.test_findings import findings_markdown

GROUPS = ["a", "b", "c", "d", "e"]


def test_recall_of_a_class_the_group_lacks_is_undefined_not_zero():
    metrics = binary_metrics(np.ones(8, dtype=np.int64), np.linspace(0.1, 0.9, 8))
    assert np.isnan(metrics["recall_neg"])
    assert metrics["recall_pos"] == 0.5 and metrics["precision_neg"] == 0.0
    metrics = binary_metrics(np.zeros(8, dtype=np.int64), np.linspace(0.1, 0.9, 8))
    assert np.isnan(metrics["recall_pos"]) and np.isnan(metrics["f1"])


def pair_frame(undefined_group: str | None = None) -> pd.DataFrame:
    pairs = [(x, y) for i, x in enumerate(GROUPS) for y in GROUPS[i + 1 :]]
    frame = pd.DataFrame(pairs, columns=["group_a", "group_b"])
    frame["dist_x"] = np.arange(len(pairs), dtype=float)
    frame["gap_y"] = (np.arange(len(pairs)) * 7 % 5).astype(float)
    if undefined_group is not None:  # every pair of one group: its metric is undefined
        touches = (frame["group_a"] == undefined_group) | (frame["group_b"] == undefined_group)
        frame.loc[touches, "gap_y"] = np.nan
    return frame


def sentence(found: pd.DataFrame) -> str:
    text = findings_markdown(found, None, primary=None, adjust="holm", significance=0.05,
                             confidence=0.95)  # fmt: skip
    return next(line for line in text.splitlines() if "gap_y" in line)


def test_correlation_counts_the_pairs_whose_value_is_undefined():
    found = correlations(pair_frame("c"), relabellings=99)
    assert found.loc[0, "n_pairs"] == 6 and found.loc[0, "n_pairs_left_out"] == 4
    assert "over 6 pairs (4 left out: a value is undefined)" in sentence(found)
    assert "left out" not in sentence(correlations(pair_frame(), relabellings=99))


def nan_study() -> StudyResults:
    k = len(GROUPS)
    nan = np.full((1, k, k), np.nan)
    nan[0][np.diag_indices(k)] = 0.0
    config = {"epsilon": 0.5, "max_iterations": 10, "inner_iterations": 10}
    sinkhorn = DistanceMatrix.from_repetitions("sinkhorn_long", GROUPS, nan, config)
    sinkhorn = replace(sinkhorn, excluded=np.where(np.eye(k, dtype=bool), 0, 1))
    rng = np.random.default_rng(0)
    values = rng.random((1, k, k))
    values = (values + values.transpose(0, 2, 1)) / 2
    values[0][np.diag_indices(k)] = 0.0
    lda = DistanceMatrix.from_repetitions("lda", GROUPS, values)
    return StudyResults(GROUPS, {"sinkhorn_long": sinkhorn, "lda": lda}, None, {}, {})


def test_a_distance_with_no_usable_value_is_said_first_with_its_fix():
    settings = read_settings(composed()).analysis
    results = nan_study()
    report = report_markdown(results, analyse(results, settings), settings)
    # The Findings warn of it right after the bottom line and the table; the details open
    # with why and the fix.
    findings = re.search(r"## Findings\n\n(.*?)\n## ", report, re.S).group(1)
    (warning,) = [line for line in findings.splitlines() if "no usable value" in line]
    assert warning.startswith("- **sinkhorn_long has no usable value**: its correlations")
    assert "lda" not in warning
    # The first finding with the clauses beneath it (a long finding is split into bullets).
    details = re.search(r"## Findings in detail\n\n(.*?)\n(?=- |\n)", report, re.S).group(1)
    assert details.startswith("- **sinkhorn_long has no usable value**: 10 of its solves did")
    assert "distance.sinkhorn.max_iterations (now 10)" in details
    assert "lda" not in details
