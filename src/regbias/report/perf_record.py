"""The performance test of record's own section: each group's metric, the pair table, a figure.

Its findings, bottom-line clause, metrics and pairwise columns are written by the one
renderer of every pairwise test (:mod:`regbias.report.record`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from regbias.analysis.tests.pairwise import FAMILY, N_A, N_B, P_ADJUSTED, P
from regbias.analysis.tests.performance import PerfTests, models_words, points, points_interval
from regbias.data.groups import BASELINE
from regbias.report.canvas import new_figure
from regbias.report.escape import markdown_text
from regbias.report.record import pair_name
from regbias.tracking.artifacts import PERF_FIGURE

__all__ = [
    "perf_figure",
    "perf_section",
]


def _cell(value: object, in_points: bool = False) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating | int | np.integer):
        number = float(value)
        if not math.isfinite(number):
            return ""
        return points(number) if in_points else f"{number:.4g}"
    return markdown_text(value)


def perf_section(tests: PerfTests | None) -> str:
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
    pair_rows = [_pair_line(tests, r) for _, r in tests.table.iterrows()]
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
            f"Intervals ({level}): a two-stage bootstrap, the models drawn with replacement, "
            "then the texts within group and label stratum. They cover the noise of which "
            "models were trained and which texts were scored; not the choice of groups.",
            "",
            f"| group | {markdown_text(tests.metric)} | interval | texts |",
            "|---|---|---|---|",
            *group_rows,
            "",
            f"![performance per group]({PERF_FIGURE})",
            "",
            "| pair | family | n_a | n_b | gap (points) | interval | raw gap | p | Holm p | "
            "verdict |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *pair_rows,
            "",
        ]
    )


def _baseline_words(tests: PerfTests) -> str:
    if BASELINE not in set(tests.groups["group"]):
        return ""
    return "; `baseline` is each model's held-out fold"


def _group_metric_words(metric: str) -> str:
    if metric == "accuracy":
        return "the mean of its texts' correctness (the share of models right about each)"
    return "the micro-F1 of its texts' true positive, false positive and false negative topics"


def _pair_line(tests: PerfTests, row: pd.Series) -> str:
    cells = [
        pair_name(row),
        markdown_text(row[FAMILY]),
        str(int(row[N_A])),
        str(int(row[N_B])),
        _cell(float(row["gap"]), True),
        points_interval(float(row["ci_low"]), float(row["ci_high"])),
        _cell(float(row["raw_gap"]), True),
        _cell(float(row[P])),
        _cell(float(row[P_ADJUSTED])),
        _verdict(tests, row),
    ]
    return "| " + " | ".join(cells) + " |"


def _interval_plain(low: float, high: float) -> str:
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return "no interval"
    return f"{float(low):.4f} to {float(high):.4f}"


def _verdict(tests: PerfTests, row: pd.Series) -> str:
    if row[tests.reason]:
        return f"untestable: {markdown_text(row[tests.reason])}"
    return "differs" if bool(row["differs"]) else "not shown to differ"


def perf_figure(tests: PerfTests) -> Figure:
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
    ax.set_xlabel(f"{tests.metric} ({level}two-stage bootstrap interval: models, texts)")
    ax.set_title(f"{tests.metric} per group, every scored text, {models_words(tests.models)}")
    ax.grid(axis="x", alpha=0.3)
    return fig
