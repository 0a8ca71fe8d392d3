"""The test of record in words: the bottom line's pairs, the findings' lines, its section.

Which pairs differ is said from the test of record alone (:mod:`regbias.analysis.tests.embedding`):
the region pairs are its primary family, the pairs with a reference group a secondary one,
each Holm-adjusted. A pair not shown to differ is said with what the test could have
detected at its size (the power plants), where that was measured.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from regbias.analysis.tests.embedding import PRIMARY_FAMILY, SECONDARY_FAMILY, PairTests
from regbias.distances.matrix import DistanceMatrix
from regbias.report.escape import markdown_text

__all__ = [
    "PAIR_TESTS_CSV",
    "PAIR_TESTS_JSON",
    "read_record",
    "record_found",
    "record_lines",
    "record_matrix",
    "record_metrics",
    "record_part",
    "record_section",
]

#: The test of record's table, and its JSON form (read back by the headline and comparison).
PAIR_TESTS_CSV = "analysis/pair_tests.csv"
PAIR_TESTS_JSON = "analysis/pair_tests.json"
_FAMILIES = {PRIMARY_FAMILY: "region pairs", SECONDARY_FAMILY: "pairs with a reference group"}


def read_record(folder: Path) -> PairTests | None:
    """The test of record a report folder holds (None: it has none)."""
    path = folder / PAIR_TESTS_JSON
    return PairTests.from_dict(json.loads(path.read_text())) if path.is_file() else None


def _p(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.2g}" if value < 0.01 else f"{value:.3f}"


def _name(row: pd.Series) -> str:
    """The pair as Markdown text (a group's name comes from the data: escaped)."""
    return f"{markdown_text(row['group_a'])}-{markdown_text(row['group_b'])}"


def _method(tests: PairTests) -> str:
    s = tests.settings
    return (
        f"{s.words()} of sentence vectors, all distinct texts"
        + (f" (at most {s.group_cap} a group), " if s.group_cap is not None else ", ")
        + f"{s.relabellings} relabellings, Holm per family p <= {tests.alpha:g}"
    )


def _how(tests: PairTests) -> str:
    return f"test of record: {_method(tests)}"


def record_part(tests: PairTests | None) -> str:
    """The bottom line's clause on pairs (empty without a test of record)."""
    if tests is None:
        return ""
    parts = []
    for family, words in _FAMILIES.items():
        rows = tests.tested(family)
        untested = _untested_count(tests, family)
        if not len(rows):
            if untested:
                parts.append(f"no {words} testable{untested}")
            continue
        if not tests.can_reject(family):
            parts.append(f"no verdict on the {len(rows)} {words} (too few relabellings){untested}")
            continue
        found = tests.differing(family)
        listed = ", ".join(_name(r) for _, r in found.iterrows())
        parts.append(
            f"{len(found)} of {len(rows)} {words} differ"
            + (f" ({listed})" if listed else "")
            + untested
        )
    return "; ".join(parts) + (f" ({_how(tests)})" if parts else "")


def _untested_count(tests: PairTests, family: str) -> str:
    n = len(tests.untested(family))
    return f", {n} untestable" if n else ""


def _untested_names(tests: PairTests, family: str) -> str:
    """The family's untestable pairs with why ("" where there is none)."""
    rows = tests.untested(family)
    if not len(rows):
        return ""
    listed = ", ".join(f"{_name(r)} ({r.get('untestable') or 'no p'})" for _, r in rows.iterrows())
    return f"; untestable, kept out of the count: {listed}"


def record_found(tests: PairTests | None) -> bool:
    """Whether the test of record finds any pair that differs (in either family)."""
    if tests is None:
        return False
    return any(
        tests.can_reject(f) and len(tests.differing(f)) for f in (PRIMARY_FAMILY, SECONDARY_FAMILY)
    )


def _within(row: pd.Series, measured: bool) -> str:
    share = float(row["detectable_share"])
    donor = markdown_text(row.get("power_donor", "") or "donor")
    if math.isfinite(share):
        return (
            f"{_name(row)} (at these sizes the test would detect a mixture of >= {share:.0%} "
            f"of {donor}-like texts with 80% power)"
        )
    if measured:
        return (
            f"{_name(row)} (at these sizes no planted mixture of {donor}-like texts is "
            "detected with 80% power)"
        )
    return _name(row)


def record_lines(tests: PairTests | None) -> list[str]:
    """The findings' lines: per family, the pairs that differ and those not shown to differ."""
    if tests is None:
        return []
    measured = bool(np.isfinite(tests.table["detectable_share"].astype(float)).any())
    lines = []
    for family, words in _FAMILIES.items():
        rows = tests.tested(family)
        untested = _untested_names(tests, family)
        if not len(rows):
            if untested:
                lines.append(f"Test of record, no {words} tested{untested}.")
            continue
        head = f"Test of record, {len(rows)} {words}"
        if not tests.can_reject(family):
            lines.append(
                f"{head}: no verdict possible: with {tests.settings.relabellings} relabellings "
                f"the smallest Holm p over {len(rows)} pairs is "
                f"{min(1.0, len(rows) * tests.smallest_p):.2g} > {tests.alpha:g} (raise "
                f"analysis.tests.embedding.relabellings){untested}."
            )
            continue
        found = tests.differing(family)
        listed = ", ".join(
            f"{_name(r)} (effect {r['effect']:.3g} [{r['effect_ci_low']:.3g}, "
            f"{r['effect_ci_high']:.3g}], Holm p {_p(float(r['p_adjusted']))})"
            for _, r in found.iterrows()
        )
        within = rows[~rows["differs"]]
        text = f"{head}: {len(found)} differ ({_method(tests)})"
        text += f": {listed}" if listed else " (none)"
        if len(within):
            text += "; not shown to differ: " + ", ".join(
                _within(r, measured) for _, r in within.iterrows()
            )
        lines.append(text + untested + ".")
    if not measured:
        lines.append(
            "What the test of record could have detected is not measured in this run: "
            "`regbias task=power` (or `analysis.power.enabled=true`) plants graded mixtures "
            "at these sizes and reports it."
        )
    return lines


def record_matrix(tests: PairTests) -> DistanceMatrix:
    """The pairs' size-free effects as a labelled matrix (for the heatmap)."""
    groups = list(dict.fromkeys([*tests.table["group_a"], *tests.table["group_b"]]))
    where = {g: i for i, g in enumerate(groups)}
    z = np.zeros((len(groups), len(groups)))
    for _, row in tests.table.iterrows():
        i, j = where[row["group_a"]], where[row["group_b"]]
        z[i, j] = z[j, i] = float(row["effect"])
    return DistanceMatrix("pair_test_effect", groups, z, np.zeros_like(z), 1)


def record_metrics(tests: PairTests) -> dict[str, float]:
    """Per pair ``pair_test/<a>__<b>/z``, ``.../effect``, ``.../p_adjusted``; family counts."""
    out: dict[str, float] = {}
    for _, row in tests.table.iterrows():
        key = f"pair_test/{row['group_a']}__{row['group_b']}"
        out[f"{key}/z"] = float(row["z"])
        out[f"{key}/effect"] = float(row["effect"])
        out[f"{key}/p_adjusted"] = float(row["p_adjusted"])
    for family in _FAMILIES:
        if len(tests.family(family)):
            out[f"pair_test/differing/{family}"] = float(len(tests.differing(family)))
    return {k: v for k, v in out.items() if math.isfinite(v)}


def record_section(tests: PairTests | None) -> str:
    """Markdown: the test of record's table and figure (empty without one)."""
    if tests is None:
        return ""
    columns = ["family", "n_a", "n_b", "shared", "effect", "effect_ci_low", "effect_ci_high"]
    columns += ["z", "p", "p_adjusted", "differs"]
    table = tests.table.copy()
    table.index = [_name(r) for _, r in table.iterrows()]
    table["differs"] = table["differs"].astype(object)
    table.loc[~np.isfinite(table["p"].astype(float)), "differs"] = "untestable"
    if np.isfinite(table["detectable_share"].astype(float)).any():
        columns.append("detectable_share")
    header = "| pair | " + " | ".join(columns) + " |"
    rule = "|" + "---|" * (len(columns) + 1)
    body = [
        "| " + " | ".join([str(i), *(_cell(row[c]) for c in columns)]) + " |"
        for i, row in table.iterrows()
    ]
    return "\n".join(
        [
            "## Which pairs differ: the test of record",
            "",
            f"One permutation test per pair ({_method(tests)}), once for the whole sweep: the "
            "exchangeable units are the groups' texts, one vector each, so there are no "
            "repetitions and no passages. Texts both groups hold are left out of that pair "
            "(`shared`: the count removed; against a region, a reference group loses every "
            "text of the region before any cap, so `mixed` against a region is the region "
            "against the other regions). A group larger than the cap is subsampled once, "
            "seeded. `effect`: the size-free effect, an unbiased estimate of the statistic's "
            "population value (it does not grow with the groups' sizes), with its bootstrap "
            f"interval over texts at {1 - tests.alpha:.0%} (`effect_ci_low`, `effect_ci_high`; "
            "the heatmap shows it). `z`: the test's standardised statistic (its value in "
            "standard deviations of its relabelled values), which grows with the sizes and "
            "ranks no pairs. Region pairs are one family, pairs with a reference group "
            "another, each Holm-adjusted within its family.",
            "",
            header,
            rule,
            *body,
            "",
            "![pair tests](figures/pair_test_effect.png)",
            "",
        ]
    )


def _cell(value: object) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{value:.4g}"
    return markdown_text(value)
