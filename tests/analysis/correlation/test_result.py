"""The correlation table's rows as typed values: what every reader takes instead of columns."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from regbias.analysis.correlation.result import (
    RHO,
    Correlation,
    correlation_rows,
    p_name,
    strongest_rows,
)
from regbias.analysis.correlation.table import correlations
from tests.conftest import ROOT


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    groups = [f"g{i}" for i in range(6)]
    rows = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    table = pd.DataFrame(rows, columns=["group_a", "group_b"])
    table["dist_x"] = rng.normal(size=len(table))
    table["dist_y"] = rng.normal(size=len(table))
    table["gap_f1"] = table["dist_x"] + rng.normal(scale=0.3, size=len(table))
    return table


def test_every_row_reads_as_the_table_holds_it() -> None:
    frame = correlations(_table(), relabellings=99)
    rows = correlation_rows(frame)
    assert [(r.distance, r.performance) for r in rows] == [
        ("dist_x", "gap_f1"),
        ("dist_y", "gap_f1"),
    ]
    for row, (_, cells) in zip(rows, frame.iterrows(), strict=True):
        assert row.rho == cells[RHO] and row.n_pairs == cells["n_pairs"] == 15
        for adjust in ("none", "holm", "bh", "maxt"):
            assert row.p_value(adjust) == cells[p_name("spearman", adjust)]
        assert row.p_value("maxt", "kendall") == cells["kendall_p_maxt"]
        assert not row.has_interval and row.bootstrap_note == ""
    assert rows[0].is_pair(("dist_x", "gap_f1")) and not rows[0].is_pair(None)


def test_a_missing_column_takes_its_default_and_checks_are_kept() -> None:
    row = Correlation.of(
        {"distance": "d", "performance": "p", RHO: 0.4, "loo_rho_min": 0.1, "bootstrap_note": 1.0}
    )
    assert row.n_pairs == 0 and row.n_pairs_left_out == 0 and math.isnan(row.tau)
    assert math.isnan(row.p_value("maxt")) and row.check("loo_rho_min") == 0.1
    assert row.bootstrap_note == ""  # a NaN read from a CSV is no note
    assert math.isnan(row.check("partial_rho"))


def test_the_strongest_come_first_and_a_row_without_rho_last() -> None:
    rows = [
        Correlation("a", "p", 3, 0.2),
        Correlation("b", "p", 3, math.nan),
        Correlation("c", "p", 3, -0.9),
        Correlation("d", "p", 3, 0.2),
    ]
    assert [r.distance for r in strongest_rows(rows, 4)] == ["c", "a", "d", "b"]


def test_the_column_names_are_written_in_one_module() -> None:
    """Readers take typed rows: ``"spearman_rho"`` is a literal of one module (issue 57)."""
    modules = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "src").rglob("*.py")
        if re.search(r"[\"']spearman_rho[\"']", path.read_text())
    ]
    assert modules == ["src/regbias/analysis/correlation/result.py"]
