"""Multiple-testing adjustment of the correlation table's permutation p-values.

Each statistic (Spearman, Kendall) is adjusted over all rows of its table (the secondary
tests): Westfall-Young maxT over the group relabellings the rows share, Holm, and
Benjamini-Hochberg. NaN p-values are no tests: left out of the family, they stay NaN.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.analysis.permutations import maxt_adjusted_p
from regbias.errors import ConfigError

#: The ``analysis.correlation.adjust`` choices.
Adjustment = Literal["maxt", "holm", "bh", "none"]
#: The column suffix each ``analysis.correlation.adjust`` choice marks significance with.
ADJUSTMENTS: dict[str, str] = {  # keys: the Adjustment choices (a test checks)
    "maxt": "p_maxt",
    "holm": "p_holm",
    "bh": "p_bh",
    "none": "p_perm",
}
STATISTICS = ("spearman", "kendall")
_FROM_P = ("holm", "bh", "none")


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values of finite ``p_values`` (no NaN).

    ``p_adj(i) = max over j <= i of min(1, (m - j + 1) p(j))`` with ``p(1) <= ... <= p(m)``.
    """
    p_values = np.asarray(p_values, dtype=np.float64)
    m = len(p_values)
    order = np.argsort(p_values, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p_values[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def adjust_p(p_values: np.ndarray | pd.Series, method: str) -> np.ndarray:
    """Adjusted p-values over one family (``holm``, ``bh`` or ``none``); NaN entries stay NaN.

    Raises:
        ConfigError: an unknown method, or ``maxt`` (it needs the permutation nulls, not the
            p-values: :func:`maxt_family`).
    """
    if method == "maxt":
        raise ConfigError(
            "maxt adjusts from the permutation nulls, not from p-values: use maxt_family "
            f"(adjust_p takes one of {list(_FROM_P)})."
        )
    if method not in _FROM_P:
        raise ConfigError(
            f"analysis.correlation.adjust must be one of {list(ADJUSTMENTS)}, got {method!r}."
        )
    raw = np.asarray(p_values, dtype=np.float64)
    out = raw.copy()
    finite = np.isfinite(raw)
    if method == "none" or not finite.any():
        return out
    tested = raw[finite]
    out[finite] = holm(tested) if method == "holm" else scipy_stats.false_discovery_control(tested)
    return out


def add_adjusted_p(found: pd.DataFrame) -> pd.DataFrame:
    """``found`` with ``spearman_p_holm, spearman_p_bh, kendall_p_holm, kendall_p_bh`` appended.

    Each statistic's permutation p-values (``<statistic>_p_perm``) are adjusted over all rows.
    """
    found = found.copy()
    for statistic in STATISTICS:
        for method in ("holm", "bh"):
            found[f"{statistic}_{ADJUSTMENTS[method]}"] = adjust_p(
                found[f"{statistic}_p_perm"], method
            )
    return found


def maxt_family(
    raw: np.ndarray | pd.Series,
    nulls: Sequence[np.ndarray | None],
    pair_sets: Sequence[Hashable],
) -> tuple[np.ndarray, list[str]]:
    """maxT-adjusted p-values of one statistic over all rows of a correlation table.

    Rows computed on the same pairs share their relabellings, so maxT applies to them
    (method ``maxt``); with missing values it covers the most common pair set (``maxt_split``)
    and the others fall back to Holm (``holm_fallback``), each part at its share ``m_part / m``
    of the level: a Bonferroni split that keeps the family-wise level of the whole family.

    Args:
        raw: each row's permutation p (NaN: no test, left out).
        nulls: each row's statistic under the relabellings, identity first (None: no null).
        pair_sets: a hashable naming each row's pairs (rows with equal ones share relabellings).

    Returns:
        The adjusted p-values and each row's method (NaN and ``""`` where no test).
    """
    raw = np.asarray(raw, dtype=np.float64)
    known = {i: null for i, null in enumerate(nulls) if null is not None}
    tested = [i for i in range(len(raw)) if np.isfinite(raw[i]) and i in known]
    out = np.full(len(raw), np.nan)
    methods = [""] * len(raw)
    if not tested:
        return out, methods
    modal = Counter(pair_sets[i] for i in tested).most_common(1)[0][0]
    shared = [i for i in tested if pair_sets[i] == modal]
    rest = [i for i in tested if pair_sets[i] != modal]
    out[shared] = maxt_adjusted_p(np.column_stack([known[i] for i in shared]))
    if rest:
        m = len(tested)
        out[shared] = np.minimum(1.0, out[shared] * m / len(shared))
        out[rest] = np.minimum(1.0, holm(raw[rest]) * m / len(rest))
    for i in shared:
        methods[i] = "maxt_split" if rest else "maxt"
    for i in rest:
        methods[i] = "holm_fallback"
    return out, methods


def add_maxt_p(
    found: pd.DataFrame,
    nulls: Mapping[str, Sequence[np.ndarray | None]],
    pair_sets: Sequence[Hashable],
) -> pd.DataFrame:
    """A copy of ``found`` with ``spearman_p_maxt, kendall_p_maxt, maxt_method`` appended.

    ``nulls`` per statistic and ``pair_sets`` as for :func:`maxt_family`; ``maxt_method`` is the
    Spearman family's (the Kendall family has the same tested rows).
    """
    found = found.copy()
    methods: list[str] = []
    for statistic in STATISTICS:
        adjusted, labels = maxt_family(found[f"{statistic}_p_perm"], nulls[statistic], pair_sets)
        found[f"{statistic}_p_maxt"] = adjusted
        methods = methods or labels
    found["maxt_method"] = methods
    return found
