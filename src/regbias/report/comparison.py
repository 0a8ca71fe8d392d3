"""Comparing the variants of one sweep (``encoder=a,b``): a table, a figure, a page.

"Which encoder is more regionally biased" is then one sweep and one page: per variant the
headline correlations (Spearman rho and permutation p of each distance against the accuracy
gap) and the mean distance over all pairs of groups.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from regbias.report.canvas import new_figure, save_figure
from regbias.report.encoder_contrast import markdown_table
from regbias.report.escape import markdown_text, path_text
from regbias.report.headline import Headline
from regbias.tracking.artifacts import COMPARISON_FIGURE, REPORT_MD, comparison_csv
from regbias.tracking.ledger import JobRecord
from regbias.tracking.run_log import RunLog

#: The performance column the comparison puts first (the protocol's primary gap).
HEADLINE_PERFORMANCE = ("gap_accuracy", "gap_roc_auc", "gap_micro_f1", "gap_subset_accuracy")


def variant_labels(records: Sequence[JobRecord]) -> dict[str, str]:
    """Per variant, the overrides that set it apart (``encoder=tiny``), from the job records."""
    labels = {
        v: " ".join(sorted(words)) or f"variant-{v}"
        for v, words in _distinct_overrides(records).items()
    }
    repeated = {label for label in labels.values() if list(labels.values()).count(label) > 1}
    # Variants that differ only in what overrides do not show (the code's commit): add the hash.
    return {v: f"{label} ({v[:8]})" if label in repeated else label for v, label in labels.items()}


def same_override_notes(records: Sequence[JobRecord]) -> list[str]:
    """A warning per set of variants that the overrides do not tell apart.

    They ran the same config on other code or data: a commit, or an edit under ``src/``,
    between their jobs (the provenance tags ``git.commit``, ``git.diff_hash`` and
    ``regbias.data_fingerprint`` say which), so comparing them compares no setting.
    """
    by_words: dict[frozenset[str], list[str]] = {}
    for variant, words in _distinct_overrides(records).items():
        by_words.setdefault(words, []).append(variant)
    shown = variant_labels(records)
    return [
        f"warning: {' and '.join(shown[v] for v in variants)} have the same overrides: they ran "
        "on other code or data (a commit or an edit under src/ during the sweep?); commit, "
        "then run the sweep again to compare settings"
        for variants in by_words.values()
        if len(variants) > 1
    ]


def _distinct_overrides(records: Sequence[JobRecord]) -> dict[str, frozenset[str]]:
    """Per variant, the overrides (but the seed) its jobs share and not every variant has."""
    per_variant: dict[str, list[set[str]]] = {}
    for record in records:
        words = {w for w in shlex.split(record.overrides) if "=" in w}
        words = {w for w in words if w.split("=", 1)[0].lstrip("+~") != "seed"}
        per_variant.setdefault(record.variant, []).append(words)
    common = {v: set.intersection(*sets) for v, sets in per_variant.items()}
    everywhere = set.intersection(*common.values()) if common else set()
    return {v: frozenset(w - everywhere) for v, w in common.items()}


def comparison_table(headlines: Mapping[str, Headline]) -> pd.DataFrame:
    """Per variant: each distance's rho and p_perm against the headline gap, and its mean."""
    rows = []
    for label, headline in headlines.items():
        row: dict[str, Any] = {"variant": label}
        metrics = headline.metrics
        performance = _headline_performance(metrics)
        for distance in sorted({k.split("/")[1] for k in metrics if k.startswith("corr/")}):
            for suffix in ("rho", "p_perm"):
                value = metrics.get(f"corr/{distance}/{performance}/{suffix}")
                if value is not None:
                    row[f"{suffix} {distance} ~ {performance} (all groups)"] = value
        means = {k: v for k, v in sorted(metrics.items()) if k.startswith("dist_mean/")}
        row.update({f"mean {k.removeprefix('dist_mean/')}": v for k, v in means.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("variant")


def _headline_performance(metrics: Mapping[str, float]) -> str | None:
    present = {k.split("/")[2] for k in metrics if k.startswith("corr/")}
    return next((n for n in HEADLINE_PERFORMANCE if n in present), min(present, default=None))


def comparison_metrics(headlines: Mapping[str, Headline]) -> dict[str, float]:
    """Every variant's headline metrics as ``variant/<label>/<metric>`` (``encoder_tiny``)."""
    return {
        f"variant/{path_text(label.replace(' ', '__'))}/{key}": value
        for label, headline in headlines.items()
        for key, value in headline.metrics.items()
    }


def comparison_figure(table: pd.DataFrame) -> Figure:
    """Left: rho of each distance against the headline gap per variant; right: mean distances."""
    fig = new_figure(11, 4.2)
    left, right = fig.subplots(1, 2)
    rho = [c for c in table.columns if c.startswith("rho ")]
    means = [c for c in table.columns if c.startswith("mean ")]
    _bars(left, table, rho, "Spearman rho (distance ~ gap)")
    left.axhline(0, color="black", linewidth=0.8)
    left.set_ylim(-1, 1)
    _bars(right, table, means, "mean distance over pairs")
    fig.suptitle("Variants of the sweep")
    return fig


def _bars(axes: Any, table: pd.DataFrame, columns: list[str], title: str) -> None:
    if not columns:
        axes.set_axis_off()
        return
    positions = np.arange(len(columns))
    width = 0.8 / max(1, len(table))
    for i, (label, row) in enumerate(table.iterrows()):
        values = [row.get(c, math.nan) for c in columns]
        axes.bar(positions + i * width, values, width, label=str(label))
    axes.set_xticks(positions + width * (len(table) - 1) / 2)
    axes.set_xticklabels([c.split(" ", 1)[1].split(" ~ ")[0] for c in columns], fontsize=8)
    axes.set_title(title)
    axes.legend(fontsize=8)


def comparison_markdown(
    table: pd.DataFrame,
    folders: Mapping[str, str],
    sections: str = "",
    findings: Sequence[str] = (),
) -> str:
    """The sweep's page: the findings, the encoders' ``sections``, the exploratory table, links.

    ``findings`` are each backed by an interval or an adjusted test; the per-distance rhos
    (unadjusted) are never findings: they are the exploratory table.
    """
    lines = ["# regbias sweep: variants compared", "", "## Findings", ""]
    lines += [f"- {markdown_text(line)}" for line in findings] or [
        "- no comparison on the same texts could be made (see the sections below)"
    ]
    if sections:
        lines += ["", sections.rstrip()]
    lines += ["", *exploratory_lines(table), f"![comparison]({COMPARISON_FIGURE})"]
    lines += ["", "## Reports of the variants", ""]
    lines += [
        f"- {markdown_text(label)}: [{markdown_text(folder)}/{REPORT_MD}]({folder}/{REPORT_MD})"
        for label, folder in folders.items()
    ]
    return "\n".join(lines) + "\n"


def exploratory_lines(table: pd.DataFrame) -> list[str]:
    """Each distance against the headline gap per variant: rho, unadjusted p, mean distance.

    One row per distance and variant, every column named (the legend under the table);
    labelled exploratory: 12 unadjusted p side by side are no finding.
    """
    rows = []
    for label, row in table.iterrows():
        for column in (c for c in table.columns if c.startswith("rho ")):
            distance, performance = column.removeprefix("rho ").split(" ~ ")
            mean = row.get(f"mean {distance.removeprefix('dist_')}", math.nan)
            rows.append(
                {
                    "variant": str(label),
                    "distance": distance,
                    "performance": performance,
                    "rho": row[column],
                    "p (unadjusted)": row.get(f"p_perm {distance} ~ {performance}", math.nan),
                    "mean distance": mean,
                }
            )
    if not rows:
        return []
    legend = {
        "variant": "the sweep's variant",
        "distance": "the distance column (all pairs of groups)",
        "performance": "the headline gap",
        "rho": "Spearman rho of the distance against the gap, all pairs",
        "p (unadjusted)": "its Mantel permutation p, not adjusted for the other rows",
        "mean distance": "the distance's mean over all pairs (in its own units)",
    }
    return [
        "## Exploratory: every distance against the headline gap (unadjusted)",
        "",
        "Not a finding: these rows are not adjusted for each other, and distances have their "
        "own units (only the separation above compares encoders on one scale).",
        "",
        *markdown_table(pd.DataFrame(rows), legend),
    ]


def write_comparison(
    parent: RunLog, tables: Mapping[str, pd.DataFrame], table: pd.DataFrame, page: str
) -> None:
    """The comparison's tables, page (``report.md``) and figure, into ``parent``.

    The parent's local folder (where each artifact is written too) gets the figure at the
    report's 150 dpi.
    """
    for name, frame in tables.items():
        parent.table(frame, comparison_csv(name))
    parent.table(table, comparison_csv("variants"), index=True)
    parent.text(page, REPORT_MD)
    figure = comparison_figure(table)
    parent.figure(figure, COMPARISON_FIGURE)
    if parent.local is not None:
        save_figure(figure, parent.local / parent.prefix / COMPARISON_FIGURE)
