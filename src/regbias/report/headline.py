"""The headline of a run: findings in a few lines, extreme pairs, stable metrics.

Built from what the run wrote, as it wrote it (:func:`headline_of`), or read back from the
report folder of a run an earlier process wrote (:func:`read_headline`), so the end-of-run
summary, the run's description in the MLflow UI and the parent's headline metrics all say
the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from regbias.analysis.correlation.result import Correlation, correlation_rows, strongest_rows
from regbias.analysis.multiplicity import ADJUSTMENTS
from regbias.analysis.pairs.pairwise import PRIMARY_FAMILY
from regbias.distances.matrix import DistanceMatrix
from regbias.numbers import p_text
from regbias.report.escape import description_text, markdown_text
from regbias.report.findings_model import Findings
from regbias.tracking import artifacts as paths

#: The adjustments whose Spearman p is logged as ``corr/<distance>/<performance>/<suffix>``
#: (after ``rho``), in this order; the suffix is the p's (``p_perm``, ``p_holm``...).
METRIC_ADJUSTMENTS = ("none", "holm", "bh", "maxt")


@dataclass
class Headline:
    """What a report says first.

    Attributes:
        findings: the report's findings (``findings.json``), or None (a folder without them).
        strongest: one plain line per strongest correlation, said where there are no findings.
        pairs: ``farthest differing`` as ``(group_a, group_b, effect, name)``: the region
            pair (else any pair) with the largest size-free effect among those the test of
            record calls different
            (empty when it finds none: then no pair is a finding).
        metrics: stable names for the runs table and charts: the short headline set
            (``headline/primary_rho``, ``headline/primary_p``,
            ``headline/significant_correlations``, ``headline/differing_pairs/<family>``),
            then every correlation (``corr/dist_sinkhorn_long/gap_accuracy/rho``) and mean
            distance (``dist_mean/sinkhorn_long``).
    """

    findings: Findings | None = None
    strongest: list[str] = field(default_factory=list)
    pairs: dict[str, tuple[str, str, float, str]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The headline as plain lines: bottom line, the answers, caveats (else correlations)."""
        if self.findings is not None:
            return self.findings.plain_lines()
        return self.strongest or ["no correlations computed"]

    def markdown(self) -> str:
        """The headline as a run description: the findings' summary, then the farthest pair.

        In the form MLflow's UI renders (:func:`~regbias.report.escape.description_text`).
        """
        if self.findings is not None:
            lines = [self.findings.summary(), ""]
        else:
            lines = [f"- {markdown_text(line)}" for line in self.lines()]
        lines += [f"- {label} pair: {_pair(p)}" for label, p in self.pairs.items()]
        return description_text("\n".join(lines))


def headline_of(
    findings: Findings | None,
    numbers: Mapping[str, float],
    correlations: Sequence[Correlation] | None,
    matrices: Mapping[str, DistanceMatrix],
    pair_tests: pd.DataFrame | None,
    n_strongest: int = 3,
) -> Headline:
    """The headline of what a run wrote, as it wrote it.

    From its findings, bottom-line numbers, correlation table, distance matrices and its test
    of record's pair table (each None or empty: none).
    """
    lines = []
    if findings is None and correlations is not None:
        lines = [_correlation_line(row) for row in strongest_rows(list(correlations), n_strongest)]
    metrics = {f"headline/{k}": float(v) for k, v in numbers.items() if math.isfinite(float(v))}
    metrics.update(correlation_metrics(correlations) if correlations is not None else {})
    for name, matrix in matrices.items():
        values = matrix.pairs()["mean"]
        if len(values) and values.notna().any():
            metrics[f"dist_mean/{name}"] = float(values.mean())
    return Headline(findings, lines, _extreme_pairs(pair_tests), metrics)


def read_headline(folder: Path, n_strongest: int = 3) -> Headline:
    """The headline of a report folder: a run an earlier process wrote (a reused job's)."""
    return headline_of(
        Findings.read(folder),
        paths.read_json(folder, paths.HEADLINE_JSON) or {},
        correlation_rows(paths.read_table_at(folder, paths.CORRELATIONS_CSV)),
        paths.read_distances(folder),
        paths.read_table_at(folder, paths.PAIR_TESTS_CSV),
        n_strongest,
    )


def correlation_metrics(correlations: Sequence[Correlation]) -> dict[str, float]:
    """``corr/<distance>/<performance>/rho`` (and ``p_perm``, ``p_holm``...) per row."""
    metrics = {}
    for row in correlations:
        values = {"rho": row.rho}
        values |= {ADJUSTMENTS[a]: row.p_value(a) for a in METRIC_ADJUSTMENTS}
        for suffix, value in values.items():
            if math.isfinite(value):
                metrics[f"corr/{row.distance}/{row.performance}/{suffix}"] = value
    return metrics


def _correlation_line(row: Correlation) -> str:
    line = (
        f"{row.performance} vs {row.distance}: Spearman rho = {row.rho:.2f} "
        f"over {row.n_pairs} pairs, unadjusted Mantel permutation p = {p_text(row.p_value('none'))}"
    )
    maxt = row.p_value("maxt")
    if math.isfinite(maxt):
        line += f", maxT-adjusted p = {p_text(maxt)}"
    return line


def _extreme_pairs(table: pd.DataFrame | None) -> dict[str, tuple[str, str, float, str]]:
    """The region pair (else any pair) called different with the largest effect."""
    if table is None or not len(table):
        return {}
    found = table[table["differs"].astype(str).str.lower() == "true"]
    regions = found[found["family"] == PRIMARY_FAMILY]
    found = regions if len(regions) else found
    if not len(found):
        return {}
    key = "effect" if "effect" in found else "z"  # a report written before effects: its z
    top = found.sort_values(key, kind="stable").iloc[-1]
    words = "test of record effect" if key == "effect" else "test of record z"
    return {"farthest differing": (top.group_a, top.group_b, float(top[key]), words)}


def _pair(pair: tuple[str, str, float, str]) -> str:
    return f"{markdown_text(pair[0])}-{markdown_text(pair[1])} ({pair[3]} {pair[2]:.4g})"
