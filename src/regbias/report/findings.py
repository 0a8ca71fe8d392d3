"""The findings in detail: each headline correlation with its own evidence, then the terms.

The primary hypothesis comes first; every other sentence is a secondary correlation with its
adjusted p (docs/method.md, "Correlations, with a clear family").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import Correlation, strongest_rows
from regbias.analysis.pair_table import DISTANCE_PREFIX
from regbias.analysis.power.embedding import TARGET_POWER
from regbias.analysis.power.primary import NO_SIGNAL, POWER_CONFIDENCE
from regbias.distances import distance_label
from regbias.numbers import p_text
from regbias.report.bottom_line import ADJUSTED_NAMES, word_list
from regbias.report.bullets import bullet_lines
from regbias.report.escape import markdown_code, markdown_text
from regbias.report.findings_model import DETAILS_HEADING, TERMS_HEADING

#: One line per term the findings use.
GLOSSARY = [
    "- *epsilon*: the entropic regularisation of the Sinkhorn divergence, in the units of the "
    "squared embedding distance (one value per sweep); smaller is closer to exact transport.",
    "- *floor*: the distance between two disjoint draws of the same group, the value sampling "
    "noise alone gives.",
    "- *excess*: a pair's distance minus the mean floor of its two groups (its size, not its "
    "evidence: whether a pair differs is its pair test's verdict).",
    "- *pair test* (the test of record): one permutation test per pair of groups, once per "
    "sweep, on all their distinct texts (one sentence vector each; texts both groups hold left "
    "out, a group above the cap subsampled once), against relabellings of the pooled texts; "
    "*differ* means its p, Holm-adjusted within its family (the region pairs; the pairs with a "
    "reference group), is at most the level. A pair with fewer than 2 texts a side is "
    "*untestable*, said with why and kept out of its family.",
    "- *energy distance*: twice the mean distance between the two groups' points minus the mean "
    "distances within each (Szekely-Rizzo); `energy_sentence` compares the texts' sentence "
    "vectors, `energy_short`/`energy_long` the same token clouds as Sinkhorn.",
    "- *gap* (`gap_<metric>`, e.g. `gap_accuracy`): the absolute difference between two "
    "groups' mean score over the models.",
    "- *dcor* (`dcor_<metric>`): the distance correlation between two groups' per-model "
    "scores, 0 to 1: how much the models' quality moves together on both groups.",
    "- *bottom line*: the first sentence; a finding there is a primary test below its level, a "
    "secondary correlation below it after adjustment, or a pair whose adjusted pair test "
    "differs. An unadjusted p is never a finding.",
    "- *mixed*: a group drawn from all regions together (it shares texts with every region).",
    "- *baseline*: the general training sample, scored on each model's held-out fold; a sample "
    "of another kind than the regions.",
    "- *primary hypothesis*: declared before the data and tested alone at the level, on the "
    "regions' pairs only, in the direction the protocol expects; every other correlation is "
    "secondary and its p-value is adjusted for the whole table.",
    "- *maxT-adjusted p*: the share of group relabellings under which the strongest "
    "correlation of the whole table reaches this one (Westfall-Young); below the level, the "
    "chance that any secondary finding is false is at most the level.",
]
_ADJUSTED = {k: f"{v}-adjusted" for k, v in ADJUSTED_NAMES.items()} | {"none": "unadjusted"}
#: The primary test's direction (``PrimaryTest.direction``) in words.
SIDES = {"greater": "one-sided rho > 0", "less": "one-sided rho < 0", "two-sided": "two-sided"}
_DETECTS = {"greater": "rho >= {:.2f}", "less": "rho <= {:.2f}", "two-sided": "|rho| >= {:.2f}"}


def describe_column(column: str) -> str:
    """A column in words (Markdown): ``gap_accuracy`` is "the accuracy gap"."""
    if column.startswith(DISTANCE_PREFIX):
        return f"the {markdown_text(distance_label(column.removeprefix(DISTANCE_PREFIX)))}"
    for prefix, words in (("gap_", "gap"), ("dcor_", "dependence across models (dcor)")):
        if column.startswith(prefix):
            return f"the {markdown_text(column.removeprefix(prefix).replace('_', ' '))} {words}"
    return markdown_code(column)


def details_markdown(lines: Sequence[str]) -> str:
    """``## Findings in detail``, one finding per bullet (Markdown), then the terms' section.

    A finding longer than a bullet's limit keeps its first clause as the bullet, its other
    clauses beneath it (:func:`~regbias.report.bullets.bullet_lines`).
    """
    bullets = [bullet for line in lines for bullet in bullet_lines(line)]
    glossary = [bullet for term in GLOSSARY for bullet in bullet_lines(term.removeprefix("- "))]
    terms = [f"## {TERMS_HEADING}", "", *glossary]
    return "\n".join([f"## {DETAILS_HEADING}", "", *bullets, "", *terms]) + "\n"


def finding_lines(
    found: Sequence[Correlation] | None,
    checks: pd.DataFrame | None,
    *,
    primary: tuple[str, str] | None,
    adjust: str,
    significance: float,
    confidence: float,
    n_strongest: int = 3,
    note: str = "",
    primary_test: PrimaryTest | None = None,
    said_above: Sequence[str] = (),
) -> list[str]:
    """The primary test's sentence, then one sentence per headline correlation (Markdown).

    Args:
        found: the correlations, or None.
        checks: the robustness table, or None.
        primary: the declared ``(distance, performance)`` hypothesis.
        adjust: the adjustment whose p-values mark the secondary tests' significance.
        significance: the level.
        confidence: the level of the bootstrap intervals.
        n_strongest: how many of the strongest other correlations follow.
        note: said instead of the sentences when there are no correlations.
        said_above: notes the page has said in full above these lines ("as above" here).
        primary_test: the primary hypothesis's regions-only test, stated first; its pair's row
            of ``found`` (all groups) then follows as a secondary correlation. None: that row
            is stated as the primary hypothesis (reports without a regions-only test).

    Returns:
        The lines, without list markers.
    """
    lines = [primary_sentence(primary_test)] if primary_test is not None else []
    if found is None or not len(found):
        return [*lines, note or "No correlations were computed."]
    label = _PRIMARY_ROW
    if primary_test is not None:
        # With no group left out the row is the same pairs, tested two-sided.
        label = _PRIMARY_PAIR_ALL_GROUPS if primary_test.left_out else _PRIMARY_PAIR_TWO_SIDED
    rows = _with_checks(found, checks)
    stated = _selected(rows, primary, n_strongest, label)
    if primary_test is None and primary is not None and not any(r.is_pair(primary) for r in rows):
        named = f"{markdown_text(primary[0])} vs {markdown_text(primary[1])}"
        lines.append(f"Primary hypothesis ({named}): not measured in this run.")
    lines += [f"{label}{_sentence(row, adjust, significance, confidence)}" for label, row in stated]
    notes = [primary_test.ci_note] if primary_test is not None else []
    notes += [row.bootstrap_note for _, row in stated]
    return each_note_once(lines, notes, said_above)


def each_note_once(
    lines: Sequence[str], notes: Sequence[str], said_above: Sequence[str] = ()
) -> list[str]:
    """``lines`` with each of ``notes`` said in full once, "as above" where it comes again.

    A note in ``said_above`` (said in full before ``lines``) is "as above" everywhere.
    """
    said: set[str] = set(said_above)
    notes = [*notes, *said_above]
    out = []
    for line in lines:
        for note in dict.fromkeys(n for n in notes if n):
            if note in line:
                if note in said:
                    line = line.replace(note, "as above")
                said.add(note)
        out.append(line)
    return out


_PRIMARY_ROW = "**Primary hypothesis.** "
#: How the primary's checks work, in a few words (docs/method.md has the whole).
CHECKS_METHOD = (
    "its rho against the rhos the same distances reach with gaps of the groups' noise alone, "
    "and the same test without each region (their numbers in the bottom line and the table "
    "'The primary against the groups' noise and each region'; docs/method.md, 'Is the "
    "primary more than group size?')"
)
_NO_CI = "none computed"
#: What the primary's interval delivered where it was checked: 0.927-0.980 over five regimes of
#: 150 and of 400 studies (benchmarks/primary_interval_coverage.py; docs/method.md).
COVERAGE = (
    "in five simulated regimes its 95% interval covered their mean measured rho in 0.93-0.98 "
    "of studies, a check of those regimes, not a guarantee for this one"
)
_TARGET = f"{TARGET_POWER:.0%}"
_PRIMARY_PAIR_ALL_GROUPS = "**Primary pair on all groups (secondary).** "
_PRIMARY_PAIR_TWO_SIDED = "**Primary pair, two-sided (secondary).** "


def primary_sentence(test: PrimaryTest) -> str:
    """The primary hypothesis in one sentence: its test, the verdict at the level, its power.

    Args:
        test: the regions-only test.

    Returns:
        E.g. "**Primary hypothesis.** The accuracy gap against the long-text Sinkhorn distance
        (`dist_sinkhorn_long`, `gap_accuracy`; regions only, 15 pairs, one-sided rho > 0):
        rho = 0.31, exact Mantel p = 0.12, not significant at 0.05; with 6 groups ...".
    """
    subject = f"{describe_column(test.performance)} against {describe_column(test.distance)}"
    columns = f"{markdown_code(test.distance)}, {markdown_code(test.performance)}"
    subject = f"{subject[0].upper()}{subject[1:]} ({columns}"
    if test.note:
        return f"{_PRIMARY_ROW}{subject}): {test.note}."
    scope = f"regions only, {test.n_pairs} pairs, {SIDES[test.direction]}"
    if not _finite(test.rho):
        return f"{_PRIMARY_ROW}{subject}; {scope}): no rank correlation (a constant column)."
    kind = "exact Mantel p" if test.exact else f"Mantel p ({test.null_size - 1} relabellings)"
    verdict = "significant" if test.significant else "not significant"
    text = (
        f"{_PRIMARY_ROW}{subject}; {scope}): rho = {test.rho:.2f}{_primary_interval(test)}, "
        f"{kind} = {p_text(test.p_value)}, {verdict} at {test.significance:g}"
    )
    reading = interval_reading(test)
    text += _power_clause(test) + _models_clause(test)
    if test.checks is not None:
        text += f". Its checks against the groups' noise and each region: {CHECKS_METHOD}"
    return f"{text}. {reading[0].upper()}{reading[1:]}." if reading else f"{text}."


def _primary_interval(test: PrimaryTest) -> str:
    if not (_finite(test.ci_low) and _finite(test.ci_high)):
        return f" (no bootstrap interval: {test.ci_note})" if test.ci_note else ""
    return (
        f" (interval for the measured rho {test.ci_low:.2f} to {test.ci_high:.2f}, nominal "
        f"{test.confidence:.0%}; {COVERAGE} (docs/method.md, 'Performance gaps'): a bootstrap "
        "of seeds, evaluation texts and distance repetitions over the same pairs, for the rho "
        "a repeat of this design (these groups, sizes and seeds' procedure) would measure on "
        "average, not the noise-free rho: the gaps' noise moves it, and more in a smaller design)"
    )


def interval_reading(test: PrimaryTest) -> str:
    """What the Mantel p and the primary's interval each answer ("" without an interval)."""
    low, high = test.ci_low, test.ci_high
    if not (_finite(low) and _finite(high)):
        return ""
    text = (
        "the Mantel p answers whether there is an association at all (could the groups' "
        "arrangement give this rho by chance); the interval, what rho a repeat of this design "
        "would measure (its reproducibility, not the association's strength, which the design's "
        "noise hides)"
    )
    if test.significant and low <= 0 <= high:
        return f"{text}: an association is shown, yet a repeat of this design could measure none"
    if not test.significant and (low > 0 or high < 0):
        return (
            f"{text}: a repeat of this design would measure a rho clear of 0, yet the groups' "
            "chance arrangement could give it"
        )
    return text


def _noise_words(noise: Sequence[float]) -> str:
    """The noise ratios in words; :data:`NO_SIGNAL` is no measurement and is never printed."""
    if min(noise) >= NO_SIGNAL:
        return "the regions' values spread no more than that noise: no true spread is measured"
    high = max(noise)
    top = f"over {NO_SIGNAL:.0f}" if high >= NO_SIGNAL else f"{high:.2g}"
    return f"standard error over the regions' true spread: {min(noise):.2g} to {top}"


def _power_clause(test: PrimaryTest) -> str:
    power = test.power
    if power is None or not len(power.table):
        return ""
    model = f"a group model in {power.dimensions} dimension{'s' * (power.dimensions > 1)}"
    if power.noise:
        noise = _noise_words(power.noise)
        model += f" whose gaps carry this run's measured evaluation noise ({noise})"
    else:  # no interval of the primary's metric to measure it from (too few seeds, another metric)
        model += " whose gaps carry no evaluation noise (none measured here; noise lowers rho)"
    reach = f"{model}, where rho reaches {power.reachable_rho:.2f} at most"
    beyond = ""
    if abs(test.rho) > abs(power.reachable_rho):  # the model's rho: what its studies measure
        beyond = (
            f" (this study's rho, {test.rho:.2f}, lies beyond what the model's studies measure: "
            "the model does not describe these groups, and its power is not this study's)"
        )
    detected = power.detected_rho
    if detected is not None:
        found = _DETECTS[test.direction].format(detected)
        return (
            f"; with {power.n_groups} groups this test detects {found} with {_TARGET} power "
            f"({reach}){beyond}"
        )
    nearest = power.nearest_row
    if nearest is not None:
        return (
            f"; with {power.n_groups} groups this test has power {_power_interval(nearest)} at "
            f"rho = {nearest['mean_rho']:.2f}, not shown to reach {_TARGET} ({reach}){beyond}"
        )
    strongest = power.strongest_row
    return (
        f"; with {power.n_groups} groups {_TARGET} power is not reachable in {model}: at its "
        f"largest rho, {strongest['mean_rho']:.2f}, the power is {_power_interval(strongest)}"
        f"{beyond}"
    )


def _models_clause(test: PrimaryTest) -> str:
    """The power's range over position models: one model's number is no law."""
    models = test.power_models
    if models is None or not len(models):
        return ""
    parts = []
    for _, row in models.iterrows():
        rho = float(row["detected_rho"])
        found = f"rho {rho:.2f} detected" if math.isfinite(rho) else "80% not reached"
        parts.append(
            f"{row['model']}: rho up to {row['reachable_rho']:.2f}, power there "
            f"{row['power']:.2f}, {found}"
        )
    return (
        "; the power depends on the model of the groups' positions (the one above is "
        f"{_model_name(test)}): " + "; ".join(parts)
    )


def _model_name(test: PrimaryTest) -> str:
    power = test.power
    return "not computed" if power is None else f"{power.dimensions}-D isotropic"


def _power_interval(row: pd.Series) -> str:
    return (
        f"{row['power']:.2f} ({POWER_CONFIDENCE:.0%} interval "
        f"{row['power_low']:.2f}-{row['power_high']:.2f})"
    )


def _with_checks(found: Sequence[Correlation], checks: pd.DataFrame | None) -> list[Correlation]:
    """Each correlation with its robustness columns its row lacks (NaN: no check of it)."""
    if checks is None:
        return list(found)
    by_pair = {(r["distance"], r["performance"]): r for r in checks.to_dict(orient="records")}
    return [
        row.with_checks(
            {c: by_pair.get((row.distance, row.performance), {}).get(c, math.nan) for c in checks}
        )
        for row in found
    ]


def _selected(
    rows: list[Correlation], primary: tuple[str, str] | None, n_strongest: int, label: str
) -> list[tuple[str, Correlation]]:
    stated = [(label, row) for row in rows if row.is_pair(primary)]
    others = [row for row in rows if not row.is_pair(primary) and row.has_rho]
    return stated + [("", row) for row in strongest_rows(others, n_strongest)]


def _sentence(row: Correlation, adjust: str, significance: float, confidence: float) -> str:
    subject = f"{describe_column(row.performance)} against {describe_column(row.distance)}"
    left_out = row.n_pairs_left_out
    if not row.has_rho:
        if left_out and row.n_pairs < 3:
            return (
                f"{subject.capitalize()}: no rank correlation: {left_out} of its "
                f"{left_out + row.n_pairs} pairs have no defined value."
            )
        return f"{subject.capitalize()}: no rank correlation (a constant column or too few pairs)."
    p = row.p_value(adjust)
    below = _finite(p) and p < significance
    if adjust == "none":
        # An unadjusted p of one of many tests is no finding: never called significant.
        verdict = f"{'nominally below' if below else 'not below'} {significance:g}, no adjustment"
    else:
        verdict = f"{'significant' if below else 'not significant'} at {significance:g}"
    label, remark = _adjusted(row, adjust)
    text = (
        f"{subject[0].upper()}{subject[1:]} "
        f"({markdown_code(row.distance)}, {markdown_code(row.performance)}): "
        f"rho = {row.rho:.2f} over {row.n_pairs} pairs{_left_out(left_out)}, "
        f"{label} p = {p_text(p)} "
        f"({verdict}{remark})"
    )
    if row.has_interval:
        low, high = row.interval
        resampled = [s for s in row.bootstrap_sources.split("+") if s]
        sources = word_list(resampled, "and") or "the inputs"
        text += (
            f", interval for the measured rho {low:.2f} to {high:.2f} (nominal "
            f"{confidence:.0%}, the primary's kind; resampling {sources})"
        )
    else:
        text += f", no bootstrap interval ({row.bootstrap_note or _NO_CI})"
    significant = below and adjust != "none"
    return text + _logo_clause(row, significant, significance) + _size_clause(row) + "."


def _left_out(count: int) -> str:
    return f" ({count} left out: a value is undefined)" if count else ""


def _adjusted(row: Correlation, adjust: str) -> tuple[str, str]:
    """How the row's p was adjusted, and a remark: a maxT row whose pairs differ used Holm."""
    if adjust == "maxt" and row.check("maxt_method") == "holm_fallback":
        return "Holm-adjusted", "; Holm, not maxT: its pairs differ from the other rows'"
    return _ADJUSTED[adjust], ""


def _logo_clause(row: Correlation, significant: bool, significance: float) -> str:
    low, high = row.check("loo_rho_min"), row.check("loo_rho_max")
    if "survives_loo" not in row.row or not _finite(low):
        return ""
    span = f"rho {low:.2f} to {high:.2f} with one group left out"
    if not significant:
        return f"; {span}"
    if bool(row.check("survives_loo")):
        return (
            f"; it survives leaving out any single group (same sign, every unadjusted p below "
            f"{significance:g}; {span})"
        )
    most = markdown_text(row.check("loo_most_influential"))
    moved = row.check("loo_rho_without_most_influential")
    return (
        f"; it does not hold up when single groups are left out ({span}; without {most} rho is "
        f"{moved:.2f}, largest unadjusted permutation p {p_text(row.check('loo_p_max'))})"
    )


def _size_clause(row: Correlation) -> str:
    partial, p = row.check("partial_rho"), row.check("partial_p")
    if not _finite(partial):
        return ""
    return (
        f"; controlling for group size, partial rho = {partial:.2f} (a check, not a test: "
        f"unadjusted p = {p_text(p)})"
    )


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)
