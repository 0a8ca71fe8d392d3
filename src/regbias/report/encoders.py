"""An encoder sweep's comparison: per encoder the verdicts, the primary rho, the heatmaps.

Each random-weights control is set against its pre-trained twin: what survives in the twin
but not in the control, pre-training made (not the vocabulary or the architecture).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from regbias.analysis.correlation.result import Correlation
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.analysis.pairs.pairwise import FAMILIES
from regbias.numbers import number_text, p_text
from regbias.report.publish import Published
from regbias.tracking import artifacts as paths

#: The adjustments whose p decides, the first a table has (adjusted across the family).
_ADJUSTED_P = ("maxt", "holm", "bh")
_CONTROL_SUFFIX = re.compile(r"\+random_weights_seed=\d+")


@dataclass(frozen=True)
class EncoderEvidence:
    """What one encoder's pooled analysis found.

    Attributes:
        label: the variant's label (``encoder=minilm_l6``).
        folder: the variant's folder, relative to the page.
        encoder: the encoder's name.
        identity: the encoder's identity (a control's starts ``random:``).
        control: whether it is a random-weights control (or a toy of random weights).
        primary: ``rho``, ``p``, ``ci_low``, ``ci_high`` and ``significant`` (1/0 at the
            run's level) of the primary hypothesis (NaN: none).
        primary_name: ``distance ~ performance`` of the primary hypothesis.
        record: its test of record (None: the variant has none).
        correlations: ``distance ~ performance`` -> (rho, adjusted p) of every correlation.
        distances: the names of its distance matrices.
    """

    label: str
    folder: str
    encoder: str
    identity: str
    control: bool
    primary: dict[str, float]
    primary_name: str
    record: EmbeddingPairTests | None
    correlations: dict[str, tuple[float, float]]
    distances: list[str]

    @property
    def twin_identity(self) -> str:
        """A control's pre-trained twin's identity (its own for a pre-trained encoder)."""
        return _CONTROL_SUFFIX.sub("", self.identity.removeprefix("random:"))

    def differing_pairs(self) -> set[tuple[str, str]]:
        """``(test of record, family, "a-b")`` of every pair its test of record finds different."""
        if self.record is None:
            return set()
        return {
            (f"test of record, {family}", f"{row.group_a}-{row.group_b}")
            for family in FAMILIES
            for row in self.record.differing(family).itertuples()
        }

    def verdicts(self) -> str:
        """Per family of its test of record, ``k of n`` differing pairs ("" without one)."""
        if self.record is None:
            return ""
        return "; ".join(
            f"test of record, {family} {verdict_count(self.record, family)}"
            for family in FAMILIES
            if len(self.record.family(family)) or len(self.record.untestable(family))
        )

    def significant_correlations(self, alpha: float) -> set[str]:
        """The correlations whose adjusted p is at most ``alpha``."""
        return {name for name, (_, p) in self.correlations.items() if p <= alpha}


def encoder_evidence(
    variants: Mapping[str, tuple[str, Published]], primary: tuple[str, str] | None
) -> list[EncoderEvidence]:
    """Each variant's evidence, from its pooled analysis as it was written.

    Args:
        variants: by label, the variant's folder (relative to the page) and what its pooled
            analysis wrote.
        primary: ``analysis.correlation.primary`` (distance, performance), or None.
    """
    found = []
    for label, (folder, written) in variants.items():
        meta = written.results.meta
        identity = str(meta.get("encoder_identity", ""))
        test = written.analysis.primary
        pairs = f"regions only, {test.n_pairs} pairs" if test is not None else "regions only"
        found.append(
            EncoderEvidence(
                label=label,
                folder=folder,
                encoder=str(meta.get("encoder", label)),
                identity=identity,
                control=identity.startswith("random:"),
                primary=_primary(written.headline.metrics),
                primary_name=f"{' ~ '.join(primary)} ({pairs})" if primary else "n/a",
                record=written.results.record,
                correlations=_correlation_cells(written.analysis.correlations),
                distances=sorted(written.results.distances),
            )
        )
    return found


def encoders_markdown(
    evidence: list[EncoderEvidence], alpha: float = 0.05, primary: pd.DataFrame | None = None
) -> str:
    """The page's encoder sections: verdicts, primary rho, controls against twins, heatmaps.

    ``primary`` (the joint-bootstrap contrasts of the primary rhos, by encoder label) backs
    each control's sentence with the interval of the twin's rho minus the control's.
    """
    if not evidence:
        return ""
    lines = ["## Encoders side by side", ""]
    header = "| encoder | primary | rho | bootstrap interval (same pairs) | p | differing pairs |"
    lines += [header, "|---" * 6 + "|"]
    for item in evidence:
        rho, low, high, p = (
            item.primary.get(k, math.nan) for k in ("rho", "ci_low", "ci_high", "p")
        )
        label = f"{item.label} (random-weights control)" if item.control else item.label
        pairs = item.verdicts()
        lines.append(
            f"| {label} | {item.primary_name} | {number_text(rho)} | "
            f"{number_text(low)} to {number_text(high)} | {p_text(p)} | {pairs or 'not tested'} |"
        )
    lines += ["", *_controls(evidence, alpha, primary), *_heatmaps(evidence)]
    return "\n".join(lines) + "\n"


def verdict_count(tests: EmbeddingPairTests, family: str) -> str:
    """``k of n`` differing pairs of a family, which, and how many were untestable."""
    differing = tests.differing(family)
    names = ", ".join(f"{r.group_a}-{r.group_b}" for r in differing.itertuples())
    untestable = len(tests.untestable(family))
    return (
        f"{len(differing)} of {len(tests.family(family))}"
        + (f" ({names})" if names else "")
        + (f", {untestable} untestable" if untestable else "")
    )


def _controls(
    evidence: list[EncoderEvidence], alpha: float, primary: pd.DataFrame | None = None
) -> list[str]:
    """Per control: what its pre-trained twin finds and it does not, and what both find."""
    trained = {e.identity: e for e in evidence if not e.control}
    lines = []
    for control in (e for e in evidence if e.control):
        twin = trained.get(control.twin_identity)
        if twin is None:
            continue
        pairs, control_pairs = twin.differing_pairs(), control.differing_pairs()
        found, control_found = (e.significant_correlations(alpha) for e in (twin, control))
        kept_pairs, shared_pairs = sorted(pairs - control_pairs), sorted(pairs & control_pairs)
        kept, both = sorted(found - control_found), sorted(found & control_found)
        lines += [
            f"### {twin.encoder} against its random-weights control {control.encoder}",
            "",
            f"- pair verdicts that survive in {twin.encoder} but not in the control "
            f"(pre-training made them): {_pairs(kept_pairs)}",
            f"- pair verdicts both find (the vocabulary or the architecture can make them): "
            f"{_pairs(shared_pairs)}",
            f"- correlations (adjusted p <= {alpha}) that survive in {twin.encoder} but not in "
            f"the control: {_names(kept, twin)}",
            f"- correlations both find: {_names(both, twin)}",
            f"- the primary hypothesis ({twin.primary_name}): {_primary_against(twin, control)}",
            *_backed(twin, control, primary),
            "",
        ]
    return lines


_PRIMARY_VERDICTS = {
    (True, False): "supported in {twin} only: pre-training made it",
    (True, True): "supported in both: the vocabulary or the architecture can make it, so it "
    "is no evidence of what pre-training learned",
    (False, True): "supported in the control only: random weights give it, so it says nothing "
    "about what pre-training learned",
    (False, False): "supported in neither",
}


def _primary_against(twin: EncoderEvidence, control: EncoderEvidence) -> str:
    """The primary's verdict in a pre-trained encoder against its control, with both rhos."""
    found = [item.primary.get("significant", math.nan) for item in (twin, control)]
    if not all(math.isfinite(value) for value in found):
        return "not tested in both"
    verdict = _PRIMARY_VERDICTS[(bool(found[0]), bool(found[1]))].format(twin=twin.encoder)
    numbers = "; ".join(
        f"{item.encoder} rho {number_text(item.primary['rho'])}, p {p_text(item.primary['p'])}"
        for item in (twin, control)
    )
    return f"{verdict} ({numbers})"


def _backed(
    twin: EncoderEvidence, control: EncoderEvidence, primary: pd.DataFrame | None
) -> list[str]:
    """The test behind the twin-against-control sentence: its rhos' difference and interval."""
    rows = () if primary is None else (r for _, r in primary.iterrows())
    row = next((r for r in rows if {r["first"], r["second"]} == {twin.label, control.label}), None)
    if row is None:
        return ["- the difference of the two rhos: not tested (no joint bootstrap)"]
    sign = 1.0 if row["first"] == twin.label else -1.0
    low, high = sorted((sign * row["ci_low"], sign * row["ci_high"]))
    if not (math.isfinite(low) and math.isfinite(high)):
        note = str(row.get("note", "") or "").strip()
        why = f": {note}" if note and note != "nan" else ""
        return [f"- the difference of the two rhos: no interval{why}"]
    verdict = (
        "shown: the verdicts' contrast stands"
        if low > 0 or high < 0
        else "not shown: the interval covers 0, so the two verdicts' contrast is no "
        "evidence of a difference between them"
    )
    return [
        f"- the difference of the two rhos ({twin.encoder} minus {control.encoder}): "
        f"{number_text(sign * row['difference'])}, interval {number_text(low)} to "
        f"{number_text(high)} (joint bootstrap): {verdict}"
    ]


def _heatmaps(evidence: list[EncoderEvidence]) -> list[str]:
    names = list(dict.fromkeys(n for e in evidence for n in e.distances))
    if not names:
        return []
    lines = ["## Distance heatmaps side by side", ""]
    lines += ["| distance | " + " | ".join(e.label for e in evidence) + " |"]
    lines += ["|---" * (len(evidence) + 1) + "|"]
    for name in names:
        cells = [
            f"![{name} {e.label}]({e.folder}/{paths.distance_figure(name)})"
            if name in e.distances
            else ""
            for e in evidence
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _pairs(pairs: list[tuple[str, str]]) -> str:
    return "; ".join(f"{pair} ({name})" for name, pair in pairs) or "none"


def _names(names: list[str], twin: EncoderEvidence) -> str:
    if not names:
        return "none"
    return "; ".join(f"{n} (rho {twin.correlations[n][0]:.2f})" for n in names)


def _correlation_cells(
    correlations: Sequence[Correlation] | None,
) -> dict[str, tuple[float, float]]:
    cells = {}
    for row in correlations or ():
        adjust = next((a for a in _ADJUSTED_P if a in row.p.get("spearman", {})), "none")
        p = row.p_value(adjust)
        pairs = f"all groups, {row.n_pairs} pairs" if row.n_pairs else "all groups"
        cells[f"{row.distance} ~ {row.performance} ({pairs})"] = (
            row.rho,
            p if math.isfinite(p) else math.inf,
        )
    return cells


def _primary(metrics: Mapping[str, float]) -> dict[str, float]:
    """The primary test's rho, p and bootstrap interval (its ``headline/...`` metrics)."""
    keys = {"rho": "primary_rho", "p": "primary_p", "ci_low": "primary_ci_low"}
    keys.update(ci_high="primary_ci_high", significant="primary_significant")
    return {k: float(metrics.get(f"headline/{key}", math.nan)) for k, key in keys.items()}
