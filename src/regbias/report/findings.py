"""The report's opening "Findings" section: each headline correlation with its own evidence."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from regbias.analysis.multiplicity import p_column

__all__ = ["GLOSSARY", "describe_column", "findings_markdown"]

#: One line per term the findings use.
GLOSSARY = [
    "- *epsilon*: the entropic regularisation of the Sinkhorn divergence, in the units of the "
    "squared embedding distance (one value per sweep); smaller is closer to exact transport.",
    "- *floor*: the distance between two disjoint draws of the same group, the value sampling "
    "noise alone gives.",
    "- *excess*: a pair's distance minus the mean floor of its two groups; a pair is above noise "
    "when this is clearly positive.",
    "- *mixed*: a group drawn from all regions together (it shares texts with every region).",
    "- *baseline*: the general training sample, scored on each model's held-out fold; a sample "
    "of another kind than the regions.",
]
_ADJUSTED = {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted", "none": "unadjusted"}
_DISTANCES = {
    "dist_sinkhorn_long": "long-text Sinkhorn distance",
    "dist_sinkhorn_short": "short-text Sinkhorn distance",
    "dist_lda": "LDA centroid distance",
}


def describe_column(column: str) -> str:
    """A column in words: ``gap_accuracy`` is "the accuracy gap"."""
    if column in _DISTANCES:
        return f"the {_DISTANCES[column]}"
    for prefix, words in (("gap_", "gap"), ("dcor_", "dependence across models (dcor)")):
        if column.startswith(prefix):
            return f"the {column.removeprefix(prefix).replace('_', ' ')} {words}"
    return f"`{column}`"


def findings_markdown(
    found: pd.DataFrame | None,
    checks: pd.DataFrame | None,
    *,
    primary: tuple[str, str] | None,
    adjust: str,
    significance: float,
    confidence: float,
    n_strongest: int = 3,
    extra_lines: Sequence[str] = (),
    note: str = "",
) -> str:
    """The "Findings" section: one plain sentence per headline correlation, then a glossary.

    Args:
        found: the correlation table (with its adjusted p-values), or None.
        checks: the robustness table (one row per correlation), or None.
        primary: the declared ``(distance, performance)`` hypothesis, stated first.
        adjust: the adjustment whose p-values mark significance.
        significance: the level.
        confidence: the level of the bootstrap intervals.
        n_strongest: how many of the strongest other correlations (by ``|rho|``) follow.
        extra_lines: further findings (e.g. which pairs are above the noise floor), added as
            they are after the correlation sentences.
        note: said instead of the sentences when there are no correlations.

    Returns:
        Markdown starting with ``## Findings``.
    """
    lines = ["## Findings", ""]
    if found is None or not len(found):
        lines.append(f"- {note or 'No correlations were computed.'}")
    else:
        table = found
        if checks is not None:
            keys = ["distance", "performance"]
            extra = [c for c in checks.columns if c not in found.columns]
            table = found.merge(checks[[*keys, *extra]], on=keys, how="left")
        stated = _selected(table, primary, n_strongest)
        if primary is not None and not _has(table, primary):
            lines.append(
                f"- Primary hypothesis ({primary[0]} vs {primary[1]}): not measured in this run."
            )
        for label, row in stated:
            lines.append(f"- {label}{_sentence(row, adjust, significance, confidence)}")
    lines += [f"- {line}" for line in extra_lines]
    lines += ["", "Terms:", "", *GLOSSARY]
    return "\n".join(lines) + "\n"


def _has(table: pd.DataFrame, pair: tuple[str, str]) -> bool:
    return bool(((table["distance"] == pair[0]) & (table["performance"] == pair[1])).any())


def _selected(
    table: pd.DataFrame, primary: tuple[str, str] | None, n_strongest: int
) -> list[tuple[str, pd.Series]]:
    is_primary = pd.Series(False, index=table.index)
    if primary is not None:
        is_primary = (table["distance"] == primary[0]) & (table["performance"] == primary[1])
    stated = [("**Primary hypothesis.** ", row) for _, row in table[is_primary].iterrows()]
    others = table[~is_primary & table["spearman_rho"].notna()]
    order = others["spearman_rho"].abs().sort_values(ascending=False, kind="stable").index
    stated += [("", others.loc[i]) for i in order[:n_strongest]]
    return stated


def _sentence(row: pd.Series, adjust: str, significance: float, confidence: float) -> str:
    rho = row["spearman_rho"]
    subject = f"{describe_column(row['performance'])} against {describe_column(row['distance'])}"
    if not _finite(rho):
        return f"{subject.capitalize()}: no rank correlation (a constant column or too few pairs)."
    p = row.get(p_column("spearman", adjust), math.nan)
    verdict = "significant" if _finite(p) and p < significance else "not significant"
    text = (
        f"{subject[0].upper()}{subject[1:]} (`{row['distance']}`, `{row['performance']}`): "
        f"rho = {rho:.2f} over {int(row['n_pairs'])} pairs, {_ADJUSTED[adjust]} p = {_p(p)} "
        f"({verdict} at {significance:g})"
    )
    low, high = row.get("spearman_ci_low", math.nan), row.get("spearman_ci_high", math.nan)
    if _finite(low) and _finite(high):
        sources = str(row.get("bootstrap_sources", "")).replace("+", " and ") or "the inputs"
        text += f", {confidence:.0%} interval {low:.2f} to {high:.2f} (resampling {sources})"
    else:
        text += ", no bootstrap interval (one model and one repetition: nothing to resample)"
    return text + _logo_clause(row, verdict == "significant") + _size_clause(row) + "."


def _logo_clause(row: pd.Series, significant: bool) -> str:
    if "survives_loo" not in row or not _finite(row.get("loo_rho_min", math.nan)):
        return ""
    span = f"rho {row['loo_rho_min']:.2f} to {row['loo_rho_max']:.2f} with one group left out"
    if not significant:
        return f"; {span}"
    if bool(row["survives_loo"]):
        return f"; it survives leaving out any single group ({span})"
    most = row["loo_most_influential"]
    moved = row["loo_rho_without_most_influential"]
    return (
        f"; it does not hold up when single groups are left out ({span}; without {most} rho is "
        f"{moved:.2f}, largest permutation p {_p(row['loo_p_max'])})"
    )


def _size_clause(row: pd.Series) -> str:
    partial, p = row.get("partial_rho", math.nan), row.get("partial_p", math.nan)
    if not _finite(partial):
        return ""
    return f"; controlling for group size, partial rho = {partial:.2f} (p = {_p(p)})"


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _p(value: float) -> str:
    return "n/a" if not _finite(value) else f"{value:.2g}"
