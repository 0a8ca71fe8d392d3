"""Which pairs differ, in words: one renderer for every pairwise test of record.

Which pairs differ is said from the tests of record alone (:mod:`regbias.analysis.pairs.pairwise`:
the embedding-space and the performance test, two Holm families each; docs/method.md). This
module writes each test's bottom-line clause, findings, metrics, headline counts and pairwise
columns, and each test's own section (the performance test's with its figure).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from regbias.analysis.pairs.columns import PairColumn, reversed_value
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import (
    DIFFERS,
    FAMILIES,
    GROUP_A,
    GROUP_B,
    P_ADJUSTED,
    PRIMARY_FAMILY,
    SECONDARY_FAMILY,
    UNTESTABLE,
    PairwiseTests,
)
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.data.groups import BASELINE
from regbias.distances.matrix import DistanceMatrix
from regbias.numbers import models_words, monte_carlo_text, p_text, points, points_interval
from regbias.report.canvas import new_figure
from regbias.report.escape import CELL_DIGITS, cell_text, markdown_text
from regbias.tracking.artifacts import PAIR_TEST_FIGURE, PERF_FIGURE

#: What a family's pairs are called on a page.
FAMILY_PAIRS = {PRIMARY_FAMILY: "region pairs", SECONDARY_FAMILY: "pairs with a reference group"}


def pair_name(row: pd.Series) -> str:
    """The pair as Markdown text (a group's name comes from the data: escaped)."""
    return f"{markdown_text(row[GROUP_A])}-{markdown_text(row[GROUP_B])}"


def _untested_names(tests: PairwiseTests, family: str) -> str:
    """The family's untestable pairs with why ("" where there is none)."""
    rows = tests.untestable(family)
    if not len(rows):
        return ""
    listed = ", ".join(f"{pair_name(r)} ({r[UNTESTABLE]})" for _, r in rows.iterrows())
    return f"; untestable, kept out of the count: {listed}"


def _within(tests: PairwiseTests, row: pd.Series) -> str:
    detectable = tests.detectable(row, markdown_text)
    return f"{pair_name(row)} ({detectable})" if detectable else pair_name(row)


def pairs_lines(tests: PairwiseTests | None) -> list[str]:
    """The findings' lines: per family, the pairs that differ and those not shown to differ."""
    if tests is None:
        return []
    words = tests.words
    lines = []
    method = tests.method()  # said in full at its first family, then "as above"
    for family, pairs in FAMILY_PAIRS.items():
        rows = tests.family(family)
        untested = _untested_names(tests, family)
        if not len(rows):
            if untested:
                lines.append(f"{words.title}, no {pairs} tested{untested}.")
            continue
        head = f"{words.title}, {len(rows)} {pairs}"
        if not tests.can_reject(family):
            lines.append(
                f"{head}: no verdict possible: with {tests.settings.relabellings} relabellings "
                f"the smallest Holm p over {len(rows)} pairs is "
                f"{tests.smallest_holm_p(family):.2g} > {tests.alpha:g} (raise "
                f"{words.setting}){untested}."
            )
            continue
        found = tests.differing(family)
        listed = ", ".join(
            f"{pair_name(r)} ({tests.estimate(r)}, Holm p {p_text(float(r[P_ADJUSTED]))})"
            for _, r in found.iterrows()
        )
        within = rows[~rows[DIFFERS].astype(bool)]
        text = f"{head}: {len(found)} {words.differ} ({method})"
        method = "the same test, as above"
        text += f": {listed}" if listed else ": none"
        if len(within):
            text += "; not shown to differ: " + ", ".join(
                _within(tests, r) for _, r in within.iterrows()
            )
        lines.append(text + untested + ".")
    if not tests.power_measured():
        lines.append(tests.not_measured())
    return lines


def pairs_metrics(tests: PairwiseTests) -> dict[str, float]:
    """Per pair ``<metric>/<a>__<b>/<column>``, per family ``<metric>/differing/<family>``.

    With the test's own metrics
    (:meth:`~regbias.analysis.pairs.pairwise.PairwiseTests.own_metrics`); a NaN value (an
    untestable pair's) is left out.
    """
    prefix = tests.words.metric
    out: dict[str, float] = {}
    for _, row in tests.table.iterrows():
        key = f"{prefix}/{row[GROUP_A]}__{row[GROUP_B]}"
        for column in tests.metric_columns():
            out[f"{key}/{column}"] = float(row[column])
    for family in FAMILIES:
        if len(tests.family(family)) or len(tests.untestable(family)):
            out[f"{prefix}/differing/{family}"] = float(len(tests.differing(family)))
    out.update(tests.own_metrics())
    return {k: v for k, v in out.items() if math.isfinite(v)}


def pairs_numbers(tests: PairwiseTests | None) -> dict[str, float]:
    """The headline counts ``<headline><family>`` of the families that can give a verdict."""
    if tests is None:
        return {}
    return {
        f"{tests.words.headline}{family}": float(len(tests.differing(family)))
        for family in FAMILIES
        if tests.can_reject(family)
    }


def pairs_columns(pairwise: pd.DataFrame, tests: PairwiseTests | None) -> pd.DataFrame:
    """The pair table with the test's columns (``<metric>_<column>``), pairs either order.

    A signed column (a gap ``a - b``) flips its sign, and its interval its ends, where the
    pairwise row names the pair in the other order.
    """
    if tests is None:
        return pairwise
    keyed = {(r[GROUP_A], r[GROUP_B]): r for _, r in tests.table.iterrows()}
    out = pairwise.copy()
    for column in tests.pairwise_columns():
        values = []
        for a, b in zip(out[GROUP_A], out[GROUP_B], strict=True):
            if (a, b) in keyed:
                values.append(keyed[(a, b)][column])
            elif (b, a) in keyed:
                values.append(reversed_value(tests.schema(), keyed[(b, a)], column))
            else:
                values.append(None)
        out[f"{tests.words.metric}_{column}"] = values
    return out


def record_matrix(tests: EmbeddingPairTests) -> DistanceMatrix:
    """The pairs' size-free effects as a labelled matrix (for the heatmap)."""
    groups = list(dict.fromkeys([*tests.table[GROUP_A], *tests.table[GROUP_B]]))
    where = {g: i for i, g in enumerate(groups)}
    z = np.zeros((len(groups), len(groups)))
    for _, row in tests.table.iterrows():
        i, j = where[row[GROUP_A]], where[row[GROUP_B]]
        z[i, j] = z[j, i] = float(row["effect"])
    return DistanceMatrix("pair_test_effect", groups, z, np.zeros_like(z), 1)


def pair_table(tests: PairwiseTests) -> list[str]:
    """Markdown: the test's table, one row per pair, its declared ``shown`` columns and verdict.

    One renderer for every test: a column in points is written as points (a ``low`` end with
    its ``high`` as one interval); an ``optional`` column only where some pair has a value.
    """
    shown = [c for c in tests.schema() if c.shown and _has_values(tests, c)]
    ends: dict[str, str] = {c.signed: c.name for c in tests.schema() if c.signed in ("low", "high")}
    header = "| pair | " + " | ".join(c.shown for c in shown) + " | verdict |"
    rule = "|" + "---|" * (len(shown) + 2)
    body = [
        "| " + " | ".join([pair_name(r), *(_cell(c, r, ends) for c in shown), _verdict(r)]) + " |"
        for _, r in tests.table.iterrows()
    ]
    return [header, rule, *body]


def _has_values(tests: PairwiseTests, column: PairColumn) -> bool:
    return not column.optional or bool(np.isfinite(tests.table[column.name].astype(float)).any())


def _cell(column: PairColumn, row: pd.Series, ends: dict[str, str]) -> str:
    value = row[column.name]
    if column.mc_sd and np.isfinite(float(value)):
        return monte_carlo_text(value, row.get(column.mc_sd), CELL_DIGITS)
    if not column.points:
        return cell_text(value)
    if column.signed == "low":
        return points_interval(float(value), float(row[ends["high"]]))
    return _points(float(value))


def _verdict(row: pd.Series) -> str:
    why = row[UNTESTABLE] if isinstance(row[UNTESTABLE], str) else ""  # a read NaN: tested
    if why:
        return f"untestable: {markdown_text(why)}"
    return "differs" if bool(row[DIFFERS]) else "not shown to differ"


def record_section(tests: EmbeddingPairTests | None) -> str:
    """Markdown: the test of record's table and figure (empty without one)."""
    if tests is None:
        return ""
    return "\n".join(
        [
            "## Which pairs differ: the test of record",
            "",
            f"One permutation test per pair ({tests.method()}), once for the whole sweep: the "
            "exchangeable units are the groups' texts, one vector each, so there are no "
            "repetitions and no passages. Texts both groups hold are left out of that pair "
            "(`shared`: the count removed; against a region, a reference group loses every "
            "text of the region before any cap, so `mixed` against a region is the region "
            "against the other regions). A group larger than the cap is subsampled once, "
            "seeded. `effect`: the size-free effect, an unbiased estimate of the statistic's "
            "population value (it does not grow with the groups' sizes), with its bootstrap "
            f"interval over texts at {1 - tests.alpha:.0%} (`effect_ci_low`, `effect_ci_high`; "
            "the heatmap shows it), each end printed to the digit its Monte Carlo sd "
            "(`effect_ci_mc` in `pair_tests.csv`) supports. The interval is not the test "
            "inverted: the verdict is the test's, so a pair can differ beside an interval "
            "that reaches 0, or not differ beside one that leaves 0 out (Holm adjusts the "
            "test, not the interval). "
            "`z`: the test's standardised statistic (its value in "
            "standard deviations of its relabelled values), which grows with the sizes and "
            "ranks no pairs. Region pairs are one family, pairs with a reference group "
            "another, each Holm-adjusted within its family.",
            "",
            *pair_table(tests),
            "",
            f"![pair tests]({PAIR_TEST_FIGURE})",
            "",
        ]
    )


def _intervals_words(tests: PerformancePairTests, level: str) -> str:
    """How the performance intervals were made, or why there are none."""
    if not level:
        text = tests.interval_note or "no intervals: analysis.robustness.resamples=0"
        return f"{text[0].upper()}{text[1:]}."
    return (
        f"Intervals ({level}): a two-stage bootstrap for the training procedure, the seeds "
        "drawn first (a seed's folds share its training sample; with one seed its folds "
        "are drawn, for that sample), with Student t tails for their few number, then the "
        "texts within group and label stratum; a text one model held out moves with its "
        "seed. They cover which seeds trained the models and which texts were scored; not "
        "the choice of groups."
    )


def perf_section(tests: PerformancePairTests | None) -> str:
    """Markdown: each group's metric with its interval, the pair table and the figure."""
    if tests is None:
        return ""
    level = f"{tests.confidence:.0%}" if math.isfinite(tests.confidence) else ""
    groups = tests.groups[tests.groups["metric"] == tests.metric]
    group_rows = [
        f"| {markdown_text(r['group'])} | {r['value']:.4f} | "
        f"{_interval_plain(r['ci_low'], r['ci_high'])} | {int(r['n_texts'])} |"
        for _, r in groups.iterrows()
    ]
    return "\n".join(
        [
            "### Which pairs the classifiers treat differently: the test of record",
            "",
            "Every model scored every distinct text of every group once (never a text of its "
            f"own training data{_baseline_words(tests)}). A text's score is "
            f"what the {models_words(tests.models)} said of it; a group's {tests.metric} is "
            f"{_group_metric_words(tests.metric)}. Pairs are tested by relabelling whole texts "
            f"within their label stratum ({tests.settings.relabellings} relabellings), so a "
            "different mix of labels is not called a difference: `gap` is the stratum-"
            "standardised gap (Cochran-Mantel-Haenszel weights, points of the metric), "
            "`raw gap` the plain one. Region pairs and pairs with a reference group are two "
            "families, Holm-adjusted apart.",
            "",
            _intervals_words(tests, level),
            "",
            f"| group | {markdown_text(tests.metric)} | interval | texts |",
            "|---|---|---|---|",
            *group_rows,
            "",
            f"![performance per group]({PERF_FIGURE})",
            "",
            *pair_table(tests),
            "",
        ]
    )


def _baseline_words(tests: PerformancePairTests) -> str:
    if BASELINE not in set(tests.groups["group"]):
        return ""
    return "; `baseline` is each model's held-out fold"


def _group_metric_words(metric: str) -> str:
    if metric == "accuracy":
        return "the mean of its texts' correctness (the share of models right about each)"
    return "the micro-F1 of its texts' true positive, false positive and false negative topics"


def _points(value: float) -> str:
    return points(value) if math.isfinite(value) else ""


def _interval_plain(low: float, high: float) -> str:
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return "no interval"
    return f"{float(low):.4f} to {float(high):.4f}"


def perf_figure(tests: PerformancePairTests) -> Figure:
    """Each group's metric with its interval, largest first (a forest plot)."""
    groups = tests.groups[tests.groups["metric"] == tests.metric]
    groups = groups.sort_values("value", ascending=True, kind="stable")
    fig = new_figure(6.0, 0.45 * len(groups) + 1.4)
    ax = fig.add_subplot()
    y = np.arange(len(groups))
    value = groups["value"].to_numpy(dtype=float)
    low = groups["ci_low"].to_numpy(dtype=float)
    high = groups["ci_high"].to_numpy(dtype=float)
    known = np.isfinite(low) & np.isfinite(high)
    errors = np.vstack([np.where(known, value - low, 0.0), np.where(known, high - value, 0.0)])
    ax.errorbar(value, y, xerr=errors, fmt="o", color="#1f77b4", capsize=3)
    ax.set_yticks(y, [str(g).upper() for g in groups["group"]])
    level = f"{tests.confidence:.0%} " if math.isfinite(tests.confidence) else ""
    ax.set_xlabel(f"{tests.metric} ({level}two-stage bootstrap interval: seeds, texts)")
    ax.set_title(f"{tests.metric} per group, every scored text, {models_words(tests.models)}")
    ax.grid(axis="x", alpha=0.3)
    return fig
