"""The report's first sentence: what was found, and what was not shown.

Built from the tests the Findings list; an unadjusted p never makes a finding (docs/method.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import Correlation
from regbias.analysis.pair_table import RecordedVerdict
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import FAMILIES
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.numbers import p_text
from regbias.report.escape import markdown_text
from regbias.report.record import pairs_numbers

#: What a study in which no test rejected shows: nothing, in either direction (a
#: non-rejection is not evidence that the groups are alike).
NOTHING_SHOWN = "No test rejected, so no difference is shown and none is shown to be absent"
#: The same where a test could not reach its level (too few relabellings): no verdict at all.
NOTHING_VERDICTLESS = (
    "Nothing was shown, and some pairs could get no verdict (too few relabellings)"
)

RANDOM_ENCODER_WARNING = (
    "**Warning: random encoder.** `{name}` is a randomly initialised encoder (for tests and "
    "smoke runs): its distances, scores and correlations say nothing about regional bias."
)
CONTROL_WARNING = (
    "**Warning: random-weights control.** `{name}` has a pre-trained encoder's architecture "
    "and tokenizer but weights drawn from seed {seed}: what it finds is not from "
    "pre-training. Compare it with its pre-trained twin."
)
#: The caveat of a run embedded at the opt-in ``encoder.precision`` (its identity says which).
PRECISION_CAVEAT = (
    "**Embedded in {precision}** (`encoder.precision={precision}`, opt-in, for speed): every "
    "vector moves from its float32 value (MiniLM's by about 0.5%, measured), so every distance, "
    "score and p moves a little from float32's; on the default 5-seed study every verdict of "
    'record held and one secondary correlation crossed its level (docs/scale.md, "Encoder '
    'precision"). '
    "Report numbers from a float32 run."
)
#: The adjustments of the secondary correlations, by ``analysis.correlation.adjust``.
ADJUSTED_NAMES = {"maxt": "maxT", "holm": "Holm", "bh": "Benjamini-Hochberg"}


def random_encoder_warning(meta: Mapping[str, object]) -> str | None:
    """The warning line for a run of a random encoder (its identity starts ``random:``).

    A random-weights control (``encoder_control``: its seed) gets the control's warning.
    """
    if not str(meta.get("encoder_identity", "")).startswith("random:"):
        return None
    if meta.get("encoder_control") is not None:
        return CONTROL_WARNING.format(name=meta.get("encoder"), seed=meta["encoder_control"])
    return RANDOM_ENCODER_WARNING.format(name=meta.get("encoder", "random"))


def precision_caveat(meta: Mapping[str, object]) -> str | None:
    """The caveat of a run embedded below float32 (its ``encoder_precision``; none: float32)."""
    precision = str(meta.get("encoder_precision") or "float32")
    return None if precision == "float32" else PRECISION_CAVEAT.format(precision=precision)


@dataclass(frozen=True)
class Evidence:
    """What the bottom line is made of.

    Attributes:
        primary: the primary hypothesis's regions-only test, or None.
        correlations: the correlations (secondary tests), or None.
        record: the test of record of every pair (None: not run).
        adjust: ``analysis.correlation.adjust`` (the secondary tests' adjustment).
        significance: the level.
        record_enabled: ``analysis.tests.embedding.enabled`` (off: the sentence says the pairs
            were not tested, rather than keep silent about them).
        performance: the test of record for performance (None: not run).
        recorded: ``task=analyze``: the verdicts its table carries (read, not re-run).
    """

    primary: PrimaryTest | None
    correlations: Sequence[Correlation] | None
    record: EmbeddingPairTests | None
    adjust: str
    significance: float
    record_enabled: bool = True
    performance: PerformancePairTests | None = None
    recorded: tuple[RecordedVerdict, ...] = ()

    @classmethod
    def of(cls, results: StudyResults, analysis: Analysis, settings: AnalysisSettings) -> Evidence:
        """The evidence of a study's results, their analysis and its settings."""
        return cls(
            analysis.primary,
            analysis.correlations,
            results.record,
            settings.correlation.adjust,
            settings.significance,
            settings.tests.embedding.enabled,
            getattr(analysis, "performance_record", None),
            recorded=tuple(results.recorded),
        )

    @property
    def significant_correlations(self) -> int | None:
        """Secondary correlations below the level after adjustment (None: not adjusted)."""
        if self.correlations is None or self.adjust not in ADJUSTED_NAMES:
            return None
        rows = self.correlations
        return sum(row.p_value(self.adjust) < self.significance for row in rows)

    @property
    def found(self) -> bool:
        """Whether any test makes a finding: the primary, an adjusted correlation, a pair."""
        if self.primary is not None and self.primary.significant:
            return True
        if self.significant_correlations:
            return True
        if any(v.differing for v in self.recorded):
            return True
        return any(t is not None and t.differs for t in (self.record, self.performance))

    @property
    def verdictless(self) -> bool:
        """Whether a pairwise test ran on a family it cannot reject in (too few relabellings)."""
        tests = [t for t in (self.record, self.performance) if t is not None]
        return any(len(t.family(f)) and not t.can_reject(f) for t in tests for f in FAMILIES)

    def numbers(self) -> dict[str, float]:
        """The bottom line's numbers, for a run's short headline metric set (``headline/...``).

        Keys: ``primary_rho``, ``primary_p``, ``primary_significant`` (0/1), with its bootstrap
        interval ``primary_ci_low``, ``primary_ci_high`` when computed, its checks
        ``primary_fragile`` (0/1), ``primary_noise_only_rho`` (the median rho of noise alone),
        ``primary_noise_only_p``
        and ``primary_left_out_p_max`` when run, ``correlations``,
        ``significant_correlations`` (adjusted as ``analysis.correlation.adjust`` says), and
        per family of the test of record that can give a verdict ``differing_pairs/<family>``,
        and the same of the performance test of record,
        ``performance_differing_pairs/<family>``.
        """
        numbers: dict[str, float] = {}
        primary = self.primary
        if primary is not None and math.isfinite(primary.rho):
            numbers["primary_rho"] = float(primary.rho)
            numbers["primary_p"] = float(primary.p_value)
            numbers["primary_significant"] = float(primary.significant)
            if math.isfinite(primary.ci_low) and math.isfinite(primary.ci_high):
                numbers["primary_ci_low"] = float(primary.ci_low)
                numbers["primary_ci_high"] = float(primary.ci_high)
            numbers.update(_checks_numbers(primary))
        if self.correlations is not None and len(self.correlations):
            numbers["correlations"] = float(len(self.correlations))
        if self.significant_correlations is not None:
            numbers["significant_correlations"] = float(self.significant_correlations)
        numbers.update(pairs_numbers(self.record))
        numbers.update(pairs_numbers(self.performance))
        return numbers


def _checks_numbers(test: PrimaryTest) -> dict[str, float]:
    """The primary's checks as headline metrics: noise alone's rho and p, worst left-out p."""
    checks = test.checks
    if checks is None:
        return {}
    numbers = {"primary_fragile": float(bool(test.fragile))}
    if checks.noise.tested:
        numbers["primary_noise_only_rho"] = float(checks.noise.null_rho)
        numbers["primary_noise_only_p"] = float(checks.noise.p_value)
    tested = [c.p_value for c in checks.without_each if c.tested]
    if tested:
        numbers["primary_left_out_p_max"] = float(max(tested))
    return numbers


def checks_clause(test: PrimaryTest) -> str:
    """The primary's checks in one clause, each result said once (empty: not checked).

    A check a supported primary does not survive ends in ``not shown``: that is why it is
    fragile (docs/method.md, "Is the primary more than group size?").
    """
    checks = test.checks
    if checks is None:
        return ""
    supported = test.significant
    noise = checks.noise
    if noise.tested:
        lost = ", not shown" if supported and not noise.significant else ""
        noise_part = (
            f"beyond the groups' noise, p = {p_text(noise.p_value)}{lost} (noise alone gives "
            f"rho {noise.null_rho:.2f})"
        )
    else:
        noise_part = f"no test beyond the groups' noise ({markdown_text(noise.note)})"
    tested = [c.p_value for c in checks.without_each if c.tested]
    if not tested:
        note = checks.without_each[0].note if checks.without_each else "no regions"
        return f"{noise_part}; no region left out ({note})"
    each = f"each region left out, p = {p_text(min(tested))} to {p_text(max(tested))}"
    lost_regions = [markdown_text(c.left_out) for c in checks.lost_without()]  # data: escaped
    if supported and lost_regions:
        each += f", not shown without {word_list(lost_regions, 'or')}"
    return f"{noise_part}; {each}"


def word_list(items: Sequence[str], conjunction: str) -> str:
    """``a``, ``a or b``, ``a, b or c`` (``conjunction`` ``or``); empty for no items."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def mantel_kind(test: PrimaryTest) -> str:
    """``exact Mantel p`` or ``Mantel p``: how the primary test's p was found."""
    return "exact Mantel p" if test.exact else "Mantel p"
