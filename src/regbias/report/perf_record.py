"""The test of record for performance in words: the bottom line's clause, findings, section.

Which pairs the classifiers treat differently is said from the performance test of record alone
(:mod:`regbias.analysis.tests.performance`): region pairs and pairs with a reference group are two
families, each Holm-adjusted; an untestable pair is said to be so, with its reason, and counted
in neither family.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from regbias.analysis.tests.embedding import PRIMARY_FAMILY, SECONDARY_FAMILY
from regbias.analysis.tests.performance import PerfTests
from regbias.data.groups import BASELINE
from regbias.report.canvas import new_figure
from regbias.report.escape import markdown_text

__all__ = [
    "PERF_FIGURE",
    "PERF_GROUPS_CSV",
    "PERF_TESTS_CSV",
    "PERF_TESTS_JSON",
    "perf_figure",
    "can_reject",
    "perf_found",
    "perf_lines",
    "perf_metrics",
    "perf_numbers",
    "perf_part",
    "perf_section",
    "read_perf_record",
    "with_perf_columns",
]

PERF_TESTS_CSV = "analysis/perf_tests.csv"
PERF_TESTS_JSON = "analysis/perf_tests.json"
#: Each group's metric with its interval.
PERF_GROUPS_CSV = "performance/group_metrics.csv"
PERF_FIGURE = "figures/perf_test_groups.png"
_FAMILIES = {PRIMARY_FAMILY: "region pairs", SECONDARY_FAMILY: "pairs with a reference group"}
#: The pairwise table's columns from the test, by the test table's column.
_COLUMNS = {
    "gap": "perf_test_gap",
    "ci_low": "perf_test_ci_low",
    "ci_high": "perf_test_ci_high",
    "raw_gap": "perf_test_raw_gap",
    "p": "perf_test_p",
    "p_adjusted": "perf_test_p_adjusted",
    "differs": "perf_test_differs",
}


def read_perf_record(folder: Path) -> PerfTests | None:
    """The performance test of record a report folder holds (None: it has none)."""
    path = folder / PERF_TESTS_JSON
    return PerfTests.from_dict(json.loads(path.read_text())) if path.is_file() else None


def _name(row: pd.Series) -> str:
    return f"{markdown_text(row['group_a'])}-{markdown_text(row['group_b'])}"


def _p(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.2g}" if value < 0.01 else f"{value:.3f}"


def _points(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{100 * value:+.1f}"


def _interval(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no interval"
    return f"[{100 * low:+.1f}, {100 * high:+.1f}]"


def _models(n: int) -> str:
    return f"{n} model" + ("s" if n != 1 else "")


def _method(tests: PerfTests) -> str:
    return (
        f"performance test of record: {tests.metric} of {_models(tests.models)} on every scored "
        f"text, relabelled within label strata ({tests.settings.relabellings} relabellings), "
        f"Holm per family, p <= {tests.alpha:g}"
    )


def can_reject(tests: PerfTests, family: str) -> bool:
    """Whether Holm over the family's testable pairs can reach the level at this resolution."""
    m = len(tests.family(family))
    return m > 0 and m * tests.smallest_p <= tests.alpha


def perf_found(tests: PerfTests | None) -> bool:
    """Whether the classifiers treat any pair differently (either family)."""
    if tests is None:
        return False
    return any(
        can_reject(tests, f) and len(tests.differing(f)) for f in (PRIMARY_FAMILY, SECONDARY_FAMILY)
    )


def perf_part(tests: PerfTests | None) -> str:
    """The bottom line's clause on performance (empty without the test)."""
    if tests is None:
        return ""
    parts = []
    for family, words in _FAMILIES.items():
        rows = tests.family(family)
        if not len(rows):
            continue
        if not can_reject(tests, family):
            parts.append(
                f"no performance verdict on the {len(rows)} {words} (too few relabellings)"
            )
            continue
        found = tests.differing(family)
        listed = ", ".join(_name(r) for _, r in found.iterrows())
        parts.append(
            f"the classifiers are shown to treat {len(found)} of {len(rows)} {words} differently"
            + (f" ({listed})" if listed else "")
        )
    if not parts:
        return ""
    return "; ".join(parts) + f" ({_method(tests)})"


def perf_lines(tests: PerfTests | None) -> list[str]:
    """The findings' lines: per family, the pairs treated differently and the rest."""
    if tests is None:
        return []
    lines = []
    for family, words in _FAMILIES.items():
        rows = tests.family(family)
        if not len(rows):
            continue
        head = f"Performance test of record, {len(rows)} {words}"
        if not can_reject(tests, family):
            lines.append(
                f"{head}: no verdict possible: with {tests.settings.relabellings} relabellings "
                f"the smallest Holm p over {len(rows)} pairs is "
                f"{min(1.0, len(rows) * tests.smallest_p):.2g} > {tests.alpha:g} (raise "
                "analysis.tests.performance.relabellings)."
            )
            continue
        found = tests.differing(family)
        listed = ", ".join(
            f"{_name(r)} ({_points(float(r['gap']))} points "
            f"{_interval(float(r['ci_low']), float(r['ci_high']))}, "
            f"Holm p {_p(float(r['p_adjusted']))})"
            for _, r in found.iterrows()
        )
        text = f"{head}: {len(found)} treated differently ({_method(tests)})"
        text += f": {listed}" if listed else " (none)"
        others = rows[~rows["differs"].astype(bool)]
        if len(others):
            text += "; not shown to differ: " + ", ".join(_within(r) for _, r in others.iterrows())
        lines.append(text + ".")
    for _, row in tests.untestable().iterrows():
        lines.append(f"Performance test of record: {_name(row)} untestable: {row['note']}.")
    if "detectable_gap" not in tests.table:
        lines.append(
            "What the performance test could have detected is not measured in this run: "
            "`analysis.power.enabled=true` plants accuracy gaps at these sizes and reports it."
        )
    return lines


def _within(row: pd.Series) -> str:
    """A pair not shown to differ, with what the test detects at its size where measured."""
    if "detectable_gap" not in row:
        return _name(row)
    gap = float(row["detectable_gap"])
    if math.isfinite(gap):
        return (
            f"{_name(row)} (at these sizes a gap of {100 * gap:.0f} points would be found "
            "with 80% power)"
        )
    return f"{_name(row)} (no planted gap is found with 80% power at these sizes)"


def perf_metrics(tests: PerfTests) -> dict[str, float]:
    """Per pair ``perf_test/<a>__<b>/gap`` and ``.../p_adjusted``; per family the count."""
    out: dict[str, float] = {}
    for _, row in tests.table.iterrows():
        key = f"perf_test/{row['group_a']}__{row['group_b']}"
        out[f"{key}/gap"] = float(row["gap"])
        out[f"{key}/p_adjusted"] = float(row["p_adjusted"])
    for _, row in tests.groups.iterrows():
        if row["metric"] == tests.metric:
            out[f"perf_test/{row['group']}/{tests.metric}"] = float(row["value"])
    return {k: v for k, v in out.items() if math.isfinite(v)}


def perf_numbers(tests: PerfTests | None) -> dict[str, float]:
    """The headline counts ``performance_differing_pairs/<family>`` (where a verdict can be)."""
    if tests is None:
        return {}
    return {
        f"performance_differing_pairs/{family}": float(len(tests.differing(family)))
        for family in (PRIMARY_FAMILY, SECONDARY_FAMILY)
        if can_reject(tests, family)
    }


def with_perf_columns(pairwise: pd.DataFrame, tests: PerfTests | None) -> pd.DataFrame:
    """The pair table with the performance test's columns (``perf_test_*``), either order.

    The gap is ``group_a - group_b`` of the pairwise row (its sign flips with the order).
    """
    if tests is None:
        return pairwise
    keyed = {(r["group_a"], r["group_b"]): r for _, r in tests.table.iterrows()}
    out = pairwise.copy()
    for column, name in _COLUMNS.items():
        values = []
        for a, b in zip(out["group_a"], out["group_b"], strict=True):
            row, sign = (keyed.get((a, b)), 1.0) if (a, b) in keyed else (keyed.get((b, a)), -1.0)
            values.append(None if row is None else _oriented(row, column, sign))
        out[name] = values
    return out


def _oriented(row: pd.Series, column: str, sign: float) -> object:
    if column in ("gap", "raw_gap"):
        return sign * float(row[column])
    if column in ("ci_low", "ci_high") and sign < 0:
        return -float(row["ci_high" if column == "ci_low" else "ci_low"])
    return row[column]


def _cell(value: object, points: bool = False) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating | int | np.integer):
        number = float(value)
        if not math.isfinite(number):
            return ""
        return _points(number) if points else f"{number:.4g}"
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
    pair_rows = [_pair_line(r) for _, r in tests.table.iterrows()]
    return "\n".join(
        [
            "### Which pairs the classifiers treat differently: the test of record",
            "",
            "Every model scored every distinct text of every group once (never a text of its "
            f"own training data{_baseline_words(tests)}). A text's score is "
            f"what the {_models(tests.models)} said of it; a group's {tests.metric} is "
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


def _pair_line(row: pd.Series) -> str:
    cells = [
        _name(row),
        markdown_text(row["family"]),
        str(int(row["n_a"])),
        str(int(row["n_b"])),
        _cell(float(row["gap"]), True),
        _interval(float(row["ci_low"]), float(row["ci_high"])),
        _cell(float(row["raw_gap"]), True),
        _cell(float(row["p"])),
        _cell(float(row["p_adjusted"])),
        _verdict(row),
    ]
    return "| " + " | ".join(cells) + " |"


def _interval_plain(low: float, high: float) -> str:
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return "no interval"
    return f"{float(low):.4f} to {float(high):.4f}"


def _verdict(row: pd.Series) -> str:
    if not bool(row["testable"]):
        return f"untestable: {markdown_text(row['note'])}"
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
    ax.set_title(f"{tests.metric} per group, every scored text, {_models(tests.models)}")
    ax.grid(axis="x", alpha=0.3)
    return fig
