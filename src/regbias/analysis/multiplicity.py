"""Multiple-testing adjustment of the correlation table's permutation p-values.

A sweep tests every distance against every performance column (3 x 14 in the laptop sweep),
so an unadjusted 0.05 flags about two of 42 null correlations by chance. Each statistic
(Spearman, Kendall) is adjusted over all rows of its table: Holm controls the family-wise
error rate, Benjamini-Hochberg the false discovery rate. NaN p-values (a constant column,
fewer than 3 pairs) are not tests: they are left out of the family and stay NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from regbias.errors import ConfigError

__all__ = ["ADJUSTMENTS", "adjust_p", "add_adjusted_p", "holm", "p_column"]

#: The ``analysis.adjust`` choices: the column suffix each one marks significance with.
ADJUSTMENTS = {"holm": "p_holm", "bh": "p_bh", "none": "p_perm"}
STATISTICS = ("spearman", "kendall")


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
    """Adjusted p-values over one family; NaN entries are left out and stay NaN.

    Args:
        p_values: the raw p-values of the family.
        method: ``holm``, ``bh`` (Benjamini-Hochberg) or ``none`` (a copy of the input).

    Returns:
        The adjusted p-values, in the order of the input.

    Raises:
        ConfigError: an unknown method.
    """
    if method not in ADJUSTMENTS:
        raise ConfigError(f"analysis.adjust must be one of {list(ADJUSTMENTS)}, got {method!r}.")
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


def p_column(statistic: str, adjust: str) -> str:
    """The column marking significance of ``statistic`` under ``analysis.adjust``.

    Args:
        statistic: ``spearman``/``kendall`` or a statistic column (``spearman_rho``).
        adjust: ``holm``, ``bh`` or ``none``.

    Returns:
        E.g. ``spearman_p_holm``; ``none`` gives the unadjusted ``spearman_p_perm``.
    """
    if adjust not in ADJUSTMENTS:
        raise ConfigError(f"analysis.adjust must be one of {list(ADJUSTMENTS)}, got {adjust!r}.")
    return f"{statistic.split('_')[0]}_{ADJUSTMENTS[adjust]}"
