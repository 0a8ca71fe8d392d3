"""The table a paper prints: one row per region pair, as CSV and as LaTeX (booktabs).

Per pair: the test of record's effect with its interval and verdict, the performance gap with
its interval and verdict, and each distance's excess over its noise floor. Built from the
pairwise table as the run writes it (``analysis/pairwise.csv``), so every number is one the
report states.
"""

from __future__ import annotations

import math

import pandas as pd

from regbias.analysis.pair_table import DISTANCE_PREFIX
from regbias.numbers import monte_carlo_step, number_text
from regbias.tracking.artifacts import PAPER_CSV, PAPER_TEX

#: The pairwise table's columns of the two tests of record, by the paper table's prefix.
_TESTS = {
    "encoder_effect": ("pair_test_effect", "pair_test_effect_ci_low", "pair_test_effect_ci_high"),
    "performance_gap": ("perf_test_gap", "perf_test_ci_low", "perf_test_ci_high"),
}
_VERDICTS = {"encoder_effect": "pair_test", "performance_gap": "perf_test"}
_EXCESS = f"excess_{DISTANCE_PREFIX}"
#: Where a family column says which pairs are the regions'.
_REGIONS = "regions"


def paper_table(pairwise: pd.DataFrame) -> pd.DataFrame:
    """The region pairs' rows with their numbers (``paper/pairs.csv``).

    Columns: ``pair``; per test of record present ``<test>``, ``<test>_ci_low``,
    ``<test>_ci_high``, ``<test>_p_adjusted`` and ``<test>_verdict`` (``differs``, ``not shown``
    or ``untested``); ``excess_<distance>`` per distance with a floor. Rows: the pairs the tests
    put in the regions' family (every pair where no test ran).
    """
    rows = pairwise
    families = [c for c in ("pair_test_family", "perf_test_family") if c in pairwise]
    if families:
        rows = pairwise[(pairwise[families] == _REGIONS).any(axis=1)]
    out = pd.DataFrame({"pair": (rows["group_a"] + "-" + rows["group_b"]).to_numpy()})
    for name, (value, low, high) in _TESTS.items():
        if value not in rows:
            continue
        prefix = _VERDICTS[name]
        out[name] = rows[value].to_numpy()
        out[f"{name}_ci_low"] = rows[low].to_numpy()
        out[f"{name}_ci_high"] = rows[high].to_numpy()
        if f"{value}_ci_mc" in rows:  # the test of record's ends' Monte Carlo sd
            out[f"{name}_ci_mc"] = rows[f"{value}_ci_mc"].to_numpy()
        out[f"{name}_p_adjusted"] = rows[f"{prefix}_p_adjusted"].to_numpy()
        out[f"{name}_verdict"] = [
            _verdict(d, p)
            for d, p in zip(rows[f"{prefix}_differs"], rows[f"{prefix}_p_adjusted"], strict=True)
        ]
    for column in (c for c in rows.columns if c.startswith(_EXCESS)):
        out[column.replace(f"_{DISTANCE_PREFIX}", "_", 1)] = rows[column].to_numpy()
    return out


def _verdict(differs: object, p_adjusted: object) -> str:
    if not isinstance(p_adjusted, float | int) or not math.isfinite(float(p_adjusted)):
        return "untested"
    return "differs" if bool(differs) else "not shown"


def paper_latex(table: pd.DataFrame, confidence: float) -> str:
    """``table`` as a booktabs LaTeX table: each estimate with its interval, then its verdict."""
    shown = pd.DataFrame({"Pair": table["pair"]})
    for name in (n for n in _TESTS if n in table):
        label = name.replace("_", " ").capitalize()  # Encoder effect, Performance gap
        sd = table[f"{name}_ci_mc"] if f"{name}_ci_mc" in table else [math.nan] * len(table)
        shown[f"{label} [{confidence:.0%} CI]"] = [
            _estimate(v, lo, hi, mc)
            for v, lo, hi, mc in zip(
                table[name], table[f"{name}_ci_low"], table[f"{name}_ci_high"], sd, strict=True
            )
        ]
        shown[f"{label}: verdict"] = table[f"{name}_verdict"]
    for column in (c for c in table.columns if c.startswith("excess_")):
        shown[f"Excess {column.removeprefix('excess_')}"] = [number_text(v) for v in table[column]]
    styler = (
        shown.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    )
    return styler.to_latex(hrules=True, column_format="l" + "r" * (shown.shape[1] - 1))


def _estimate(value: object, low: object, high: object, mc_sd: object = math.nan) -> str:
    """``v [lo, hi]`` to the digit the ends' Monte Carlo sd supports, as the report prints them.

    Where that sd was not measured (the performance gap), to the decimal a twentieth of the
    interval's width reaches: an end's Monte Carlo error is 2-4% of the width at 999 resamples
    (docs/method.md).
    """
    v, lo, hi, mc = (float(x) for x in (value, low, high, mc_sd))  # type: ignore[arg-type]
    if not (math.isfinite(v) and math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return number_text(v)
    if math.isfinite(mc) and mc > 0:
        step = monte_carlo_step(mc)  # the unit the report prints the ends to
    else:
        step = math.floor(math.log10((hi - lo) / 20))
    if step >= -4:
        decimals = max(0, -step)
        return f"{v:.{decimals}f} [{lo:.{decimals}f}, {hi:.{decimals}f}]"
    # Tiny values (a random encoder's): as many significant digits as that step allows.
    top = math.floor(math.log10(max(abs(v), abs(lo), abs(hi))))
    digits = max(0, top - step)
    return f"{v:.{digits}e} [{lo:.{digits}e}, {hi:.{digits}e}]"


def paper_section(table: pd.DataFrame) -> str:
    """``## For a paper``: where the paper table and the print figures are."""
    return (
        "## For a paper\n\n"
        f"One row per region pair ({len(table)}): the test of record's effect and the "
        "performance gap, each with its interval and verdict, and each distance's excess over "
        f"its noise floor: [{PAPER_CSV}]({PAPER_CSV}) and [{PAPER_TEX}]({PAPER_TEX}) (LaTeX, "
        "booktabs; each estimate to the digit its interval's Monte Carlo error supports). The "
        "heatmaps, the tests of record's figures and the scatter plots are also PDFs beside "
        "their PNGs, for print.\n"
    )
