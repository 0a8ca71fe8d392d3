"""The study's questions answered from its tests: the bottom line and the Findings table.

Built from the study's tests (:class:`~regbias.report.bottom_line.Evidence`); each answer is
short (counts and names), every number behind it is in the report's details. Each verdict is
said once: in its answer, not again in the bottom line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import Correlation, strongest_rows
from regbias.analysis.pair_table import GAP_PREFIX, RECORDED_TESTS, RecordedVerdict
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import PRIMARY_FAMILY, SECONDARY_FAMILY, PairwiseTests
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.numbers import models_words
from regbias.report.bottom_line import (
    ADJUSTED_NAMES,
    NOTHING_SHOWN,
    NOTHING_VERDICTLESS,
    Evidence,
    checks_clause,
    mantel_kind,
)
from regbias.report.escape import markdown_code, markdown_text
from regbias.report.findings import SIDES
from regbias.report.findings_model import Answer, Findings
from regbias.report.record import FAMILY_PAIRS, pair_name

#: The study's questions, in the order every reader shows them.
QUESTIONS = (
    "Which region pairs differ in the encoder's space?",
    "Which does the classifier treat differently?",
    "Is the primary hypothesis supported?",
    "Which correlations survive adjustment?",
)
_RECORD = "Which pairs differ: the test of record"
_PERFORMANCE = "Performance gaps: the test of record for performance"
_CORRELATIONS = "Correlations, with a clear family"
#: At most this many pairs or correlations are named in an answer (the rest are counted).
_NAMED = 6


@dataclass(frozen=True)
class _Family:
    """One family of a pairwise test, as the answers count it."""

    tested: int
    decidable: bool
    differing: pd.DataFrame
    untestable: int

    def answer(self, words: str, verb: str) -> str:
        """``3 of 15 region pairs differ: a-b, ...``; ``no verdict ...``; ``none of 15 ...``."""
        untestable = f" ({self.untestable} untestable)" if self.untestable else ""
        if not self.tested:
            return f"no {words} testable{untestable}"
        if not self.decidable:
            also = f"; {self.untestable} untestable" if self.untestable else ""
            return f"no verdict on the {self.tested} {words} (too few relabellings{also})"
        if not len(self.differing):
            return f"none of the {self.tested} {words} {verb}{untestable}"
        names = _listed([pair_name(r) for _, r in self.differing.iterrows()])
        return f"{len(self.differing)} of {self.tested} {words} {verb}{untestable}: {names}"


def _listed(names: list[str]) -> str:
    """The first :data:`_NAMED` names, then how many more."""
    more = len(names) - _NAMED
    return ", ".join(names[:_NAMED]) + (f" and {more} more" if more > 0 else "")


def _family(tests: PairwiseTests, family: str) -> _Family:
    """One family of either test of record: tested pairs, verdict possible, differing, untested."""
    return _Family(
        len(tests.family(family)),
        tests.can_reject(family),
        tests.differing(family),
        len(tests.untestable(family)),
    )


def _pairs_answer(tests: PairwiseTests, verb: str) -> str:
    """Both families of a test of record, the reference one where it has pairs."""
    regions, reference = _family(tests, PRIMARY_FAMILY), _family(tests, SECONDARY_FAMILY)
    text = regions.answer("region pairs", verb)
    if reference.tested or reference.untestable:
        text += f"; {reference.answer('pairs with a reference group', verb)}"
    return text[0].upper() + text[1:]


def record_answer(
    tests: EmbeddingPairTests | None,
    enabled: bool = True,
    recorded: Sequence[RecordedVerdict] = (),
) -> Answer:
    """Which region pairs differ in the encoder's space (the test of record).

    ``recorded``: ``task=analyze``'s verdicts of this test as its table records them (used
    where the test did not run here).
    """
    question = QUESTIONS[0]
    if tests is None and recorded:
        return Answer(question, _recorded_answer(recorded), _AS_RECORDED, _RECORD)
    if tests is None:
        why = "not tested (analysis.tests.embedding.enabled=false)" if not enabled else "not tested"
        return Answer(question, why.capitalize(), "pair test of record", _RECORD)
    how = (
        f"permutation test of the {tests.settings.words()} of sentence vectors; Holm within "
        f"each family, p <= {tests.alpha:g}"
    )
    return Answer(question, _pairs_answer(tests, "differ"), how, _RECORD)


def performance_answer(
    tests: PerformancePairTests | None, recorded: Sequence[RecordedVerdict] = ()
) -> Answer:
    """Which pairs the classifiers treat differently (the performance test of record).

    ``recorded``: as for :func:`record_answer`.
    """
    question = QUESTIONS[1]
    if tests is None and recorded:
        return Answer(question, _recorded_answer(recorded), _AS_RECORDED, _PERFORMANCE)
    if tests is None:
        return Answer(question, "Not tested", "performance test of record", _PERFORMANCE)
    how = (
        f"studentized gap in {markdown_code(tests.metric)} of {models_words(tests.models)} per "
        f"text, relabelled within label strata; Holm within each family, p <= {tests.alpha:g}"
    )
    return Answer(question, _pairs_answer(tests, "are treated differently"), how, _PERFORMANCE)


#: How a verdict read from a pairwise table was reached (``task=analyze``).
_AS_RECORDED = "as the pair table records it (read, not re-run here)"


def _recorded_answer(recorded: Sequence[RecordedVerdict]) -> str:
    """A test's recorded verdicts: ``3 of 15 region pairs differ (au-nz, ...)`` per family."""
    parts = []
    for verdict in recorded:
        named = ", ".join(markdown_text(p) for p in verdict.differing[:_NAMED])
        more = len(verdict.differing) - _NAMED
        listed = f" ({named}{f', {more} more' if more > 0 else ''})" if verdict.differing else ""
        pairs = FAMILY_PAIRS[verdict.family]
        parts.append(f"{len(verdict.differing)} of {verdict.tested} {pairs}{listed}")
    return f"As recorded, not re-run: {'; '.join(parts)}"


def primary_answer(
    test: PrimaryTest | None,
    primary: tuple[str, str] | None,
    correlations: Sequence[Correlation] | None = None,
    adjust: str = "none",
    level: float = 0.05,
) -> Answer:
    """Whether the declared primary hypothesis is supported, with its interval.

    Without a regions-only test (a report of the first version) the declared pair's row of
    the correlation table answers, as the details state it.
    """
    question = QUESTIONS[2]
    if test is None:
        return _primary_row_answer(primary, correlations, adjust, level)
    how = (
        f"Mantel test of {markdown_code(test.performance)} against "
        f"{markdown_code(test.distance)}, regions only ({test.n_pairs} pairs), "
        f"{SIDES[test.direction]}, alone at level {test.significance:g}"
    )
    if test.note:
        return Answer(question, f"Not tested: {test.note}", how, _CORRELATIONS)
    if not math.isfinite(test.rho):
        answer = "Not tested: no rank correlation (a constant column)"
        return Answer(question, answer, how, _CORRELATIONS)
    verdict = "Yes" if test.significant else "No"
    if test.fragile:
        verdict = "Yes, but fragile"
    # Short, as every answer: its checks are the bottom line's, its interval's coverage and
    # reading the details' (each said once on a page).
    answer = f"{verdict}: rho = {test.rho:.2f}, {_interval(test)}, {mantel_kind(test)}"
    answer += f" = {test.p_value:.2g}"
    return Answer(question, answer, how, _CORRELATIONS)


def _primary_row_answer(
    primary: tuple[str, str] | None,
    correlations: Sequence[Correlation] | None,
    adjust: str,
    level: float,
) -> Answer:
    question = QUESTIONS[2]
    how = "Mantel test of the declared pair"
    if primary is None:
        return Answer(question, "None declared", how, _CORRELATIONS)
    row = next((r for r in correlations or () if r.is_pair(primary)), None)
    if row is None or not row.has_rho:
        return Answer(question, "Not tested in this run", how, _CORRELATIONS)
    words = ADJUSTED_NAMES.get(adjust)
    how = (
        f"Spearman rho of {markdown_code(primary[1])} against {markdown_code(primary[0])} "
        f"over {row.n_pairs} pairs, {f'{words}-adjusted' if words else 'unadjusted'} p"
    )
    p = row.p_value(adjust)
    interval = "no interval computed"
    if row.has_interval:
        interval = f"bootstrap interval {row.interval[0]:.2f} to {row.interval[1]:.2f}"
    verdict = "No finding (unadjusted)"
    if words:
        verdict = "Yes" if math.isfinite(p) and p < level else "No"
    answer = f"{verdict}: rho = {row.rho:.2f}, {interval}, p = {p:.2g}"
    return Answer(question, answer, how, _CORRELATIONS)


def said_notes(test: PrimaryTest | None) -> list[str]:
    """The notes the answers say in full (the findings below then say "as above")."""
    if test is None or (math.isfinite(test.ci_low) and math.isfinite(test.ci_high)):
        return []
    return [test.ci_note] if test.ci_note else []


def _interval(test: PrimaryTest) -> str:
    if not (math.isfinite(test.ci_low) and math.isfinite(test.ci_high)):
        return f"no interval ({test.ci_note})" if test.ci_note else "no interval computed"
    ends = f"{test.ci_low:.2f} to {test.ci_high:.2f}"
    return f"interval for the measured rho {ends} (nominal {test.confidence:.0%})"


def correlations_answer(
    correlations: Sequence[Correlation] | None, adjust: str, level: float
) -> Answer:
    """Which secondary correlations are below the level after adjustment."""
    question = QUESTIONS[3]
    if correlations is None or not len(correlations):
        return Answer(
            question, "None computed", "Spearman rho, Mantel permutation p", _CORRELATIONS
        )
    total = len(correlations)
    if adjust not in ADJUSTED_NAMES:
        how = f"Spearman rho over {total} rows, unadjusted p (analysis.correlation.adjust={adjust})"
        return Answer(
            question, "None is a finding: the p-values are unadjusted", how, _CORRELATIONS
        )
    how = (
        f"Spearman rho, Mantel permutation p, {ADJUSTED_NAMES[adjust]}-adjusted over the {total} "
        f"secondary rows, p < {level:g}"
    )
    found = [r for r in correlations if r.p_value(adjust) < level]
    if not found:
        return Answer(question, f"None of the {total}", how, _CORRELATIONS)
    named = [
        f"{markdown_text(r.performance)} ~ {markdown_text(r.distance)} (rho = {r.rho:.2f})"
        for r in strongest_rows(found, len(found))
    ]
    return Answer(question, f"{len(found)} of {total}: {_listed(named)}", how, _CORRELATIONS)


def bottom_lines(evidence: Evidence) -> tuple[str, ...]:
    """The bottom line in at most two lines: the verdict, then the primary's checks.

    Each question's verdict and numbers are its answer's, in the table below it in every
    reader (the page, the MLflow description, the terminal): the bottom line does not say them
    again, only what no answer says (the primary's checks, and what a supported primary means
    where no single pair is shown to differ).

    Args:
        evidence: the tests the bottom line is made of.

    Returns:
        Markdown lines, the first starting ``**Bottom line.**``.
    """
    if evidence.found:
        first = "Some tests rejected at their level: the table below says which."
    elif evidence.verdictless:  # not "nothing found": some pairs could get no verdict at all
        first = f"{NOTHING_VERDICTLESS}; the table below says which."
    else:
        first = f"{NOTHING_SHOWN}; the table below says what was tested."
    lines = [f"**Bottom line.** {first}"]
    parts = (_checks_line(evidence.primary), _within_noise(evidence))
    said = " ".join(part for part in parts if part)
    if said:
        lines.append(said)
    return tuple(lines)


#: What a supported primary means where no region pair's gap is shown (issue 60).
WITHIN_NOISE = (
    "The primary is an association across pairs: larger distances go with larger gaps, while "
    "no single pair's gap is shown to differ from noise."
)


def _within_noise(evidence: Evidence) -> str:
    """:data:`WITHIN_NOISE` where the primary is supported and no region pair's gap is shown."""
    test, performance = evidence.primary, evidence.performance
    if test is None or not test.significant or performance is None:
        return ""
    if test.direction != "greater" or not test.performance.startswith(GAP_PREFIX):
        return ""  # the sentence reads a positive association with gaps
    family = _family(performance, PRIMARY_FAMILY)
    none_differ = bool(family.tested and family.decidable and not len(family.differing))
    return WITHIN_NOISE if none_differ else ""


def _checks_line(test: PrimaryTest | None) -> str:
    """The primary's checks (its verdict and numbers are the table's): why it is fragile."""
    if test is None or test.note or not math.isfinite(test.rho):
        return ""
    checks = checks_clause(test)
    if not checks:
        return ""
    opening = "The primary is fragile" if test.fragile else "The primary's checks"
    return f"{opening}: {checks}."


def study_findings(
    evidence: Evidence,
    primary: tuple[str, str] | None,
    caveats: Sequence[str] = (),
    details: Sequence[str] = (),
) -> Findings:
    """The findings of a study: the bottom line, the four answers, caveats and details.

    Args:
        evidence: the tests (primary, correlations, test of record, performance test).
        primary: the declared ``(distance, performance)`` hypothesis, or None.
        caveats: short warnings for every answer (a random encoder, unusable distances).
        details: the long lines (each test's numbers, intervals and caveats).

    Returns:
        The typed findings the report, ``findings.json`` and the summaries share.
    """
    recorded = {
        test: [v for v in evidence.recorded if v.test == words]
        for test, words in RECORDED_TESTS.items()
    }
    answers = (
        record_answer(evidence.record, evidence.record_enabled, recorded["pair_test"]),
        performance_answer(evidence.performance, recorded["perf_test"]),
        primary_answer(
            evidence.primary, primary, evidence.correlations, evidence.adjust, evidence.significance
        ),
        correlations_answer(evidence.correlations, evidence.adjust, evidence.significance),
    )
    return Findings(bottom_lines(evidence), answers, tuple(caveats), tuple(details))
