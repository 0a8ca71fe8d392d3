"""An encoder sweep's comparison: per encoder the verdicts, the primary rho, the heatmaps.

A sweep over encoders (``encoder=minilm_l6,minilm_random,mpnet_base``) pools each encoder's
jobs into its own variant folder. This page sets them side by side: per encoder the pair
verdicts, the primary rho with its bootstrap interval, and each distance's heatmap; and for
each random-weights control, what survives in its pre-trained twin but not in the control
(there, pre-training made the difference, not the vocabulary or the architecture).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from regbias.analysis.tests.embedding import PRIMARY_FAMILY, SECONDARY_FAMILY
from regbias.analysis.tests.verdict import DistanceVerdict
from regbias.report.record import read_record
from regbias.tables import read_table

__all__ = ["EncoderEvidence", "encoder_evidence", "encoders_markdown", "variant_verdicts"]

#: Correlation p-value columns, the first present one decides (adjusted across the family).
_ADJUSTED_P = ("spearman_p_maxt", "spearman_p_holm", "spearman_p_bh")
_CONTROL_SUFFIX = re.compile(r"\+random_weights_seed=\d+")


@dataclass(frozen=True)
class EncoderEvidence:
    """What one encoder's pooled analysis found, read back from its report folder.

    Attributes:
        label: the variant's label (``encoder=minilm_l6``).
        folder: the variant's folder, relative to the page.
        encoder: the encoder's name.
        identity: the encoder's identity (a control's starts ``random:``).
        control: whether it is a random-weights control (or a toy of random weights).
        primary: ``rho``, ``p``, ``ci_low``, ``ci_high`` and ``significant`` (1/0 at the
            run's level) of the primary hypothesis (NaN: none).
        primary_name: ``distance ~ performance`` of the primary hypothesis.
        verdicts: each distance's pair verdicts (:func:`variant_verdicts`).
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
    verdicts: dict[str, DistanceVerdict]
    correlations: dict[str, tuple[float, float]]
    distances: list[str]

    @property
    def twin_identity(self) -> str:
        """A control's pre-trained twin's identity (its own for a pre-trained encoder)."""
        return _CONTROL_SUFFIX.sub("", self.identity.removeprefix("random:"))

    def differing_pairs(self) -> set[tuple[str, str]]:
        """``(distance, "a-b")`` of every pair its distance's adjusted test calls different."""
        return {
            (name, f"{row.group_a}-{row.group_b}")
            for name, verdict in self.verdicts.items()
            for row in verdict.differing.itertuples()
        }

    def significant_correlations(self, alpha: float) -> set[str]:
        """The correlations whose adjusted p is at most ``alpha``."""
        return {name for name, (_, p) in self.correlations.items() if p <= alpha}


def variant_verdicts(folder: Path) -> dict[str, DistanceVerdict]:
    """The pair verdicts of one variant's report folder: the one place this page reads them.

    The test of record's, one verdict per family (``test of record, regions`` and ``...,
    reference``), Holm within it; empty where the variant has no test of record.
    """
    tests = read_record(folder)
    if tests is None:
        return {}
    out = {}
    for family in (PRIMARY_FAMILY, SECONDARY_FAMILY):
        rows = tests.family(family)
        if len(rows):
            name = f"test of record, {family}"
            out[name] = DistanceVerdict(
                name, tests.settings.relabellings, "holm", tests.alpha, rows
            )
    return out


def encoder_evidence(
    root: Path, folders: Mapping[str, str], primary: tuple[str, str] | None
) -> list[EncoderEvidence]:
    """Each variant's evidence, from its report folder ``root / folder``.

    Args:
        root: the sweep's report folder.
        folders: each variant's folder under ``root``, by label.
        primary: ``analysis.correlation.primary`` (distance, performance), or None.
    """
    found = []
    for label, folder in folders.items():
        path = root / folder
        meta = _meta(path)
        correlations = _correlations(path)
        numbers = _primary(path)
        found.append(
            EncoderEvidence(
                label=label,
                folder=folder,
                encoder=str(meta.get("encoder", label)),
                identity=str(meta.get("encoder_identity", "")),
                control=str(meta.get("encoder_identity", "")).startswith("random:"),
                primary=numbers,
                primary_name=f"{' ~ '.join(primary)} ({_primary_pairs(path)})"
                if primary
                else "n/a",
                verdicts=variant_verdicts(path),
                correlations=_correlation_cells(correlations),
                distances=_heatmap_names(path),
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
        pairs = "; ".join(
            f"{name} {verdict_count(v)}" for name, v in item.verdicts.items() if v.tested
        )
        lines.append(
            f"| {label} | {item.primary_name} | {_num(rho)} | {_num(low)} to {_num(high)} "
            f"| {_num(p)} | {pairs or 'not tested'} |"
        )
    lines += ["", *_controls(evidence, alpha, primary), *_heatmaps(evidence)]
    return "\n".join(lines) + "\n"


def verdict_count(verdict: DistanceVerdict) -> str:
    """``k of n`` differing pairs, and which."""
    differing = verdict.differing
    names = ", ".join(f"{r.group_a}-{r.group_b}" for r in differing.itertuples())
    return f"{len(differing)} of {verdict.n_pairs}" + (f" ({names})" if names else "")


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
        kept_pairs = sorted(twin.differing_pairs() - control.differing_pairs())
        shared_pairs = sorted(twin.differing_pairs() & control.differing_pairs())
        kept = sorted(
            twin.significant_correlations(alpha) - control.significant_correlations(alpha)
        )
        both = sorted(
            twin.significant_correlations(alpha) & control.significant_correlations(alpha)
        )
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
        f"{item.encoder} rho {_num(item.primary['rho'])}, p {_num(item.primary['p'])}"
        for item in (twin, control)
    )
    return f"{verdict} ({numbers})"


def _backed(
    twin: EncoderEvidence, control: EncoderEvidence, primary: pd.DataFrame | None
) -> list[str]:
    """The test behind the twin-against-control sentence: its rhos' difference and interval."""
    if primary is None or not len(primary):
        return ["- the difference of the two rhos: not tested (no joint bootstrap)"]
    for _, row in primary.iterrows():
        if {row["first"], row["second"]} == {twin.label, control.label}:
            sign = 1.0 if row["first"] == twin.label else -1.0
            low, high = sorted((sign * row["ci_low"], sign * row["ci_high"]))
            shown = low > 0 or high < 0
            verdict = (
                "shown: the verdicts' contrast stands"
                if shown
                else "not shown: the interval covers 0, so the two verdicts' contrast is no "
                "evidence of a difference between them"
            )
            return [
                f"- the difference of the two rhos ({twin.encoder} minus {control.encoder}): "
                f"{_num(sign * row['difference'])}, interval {_num(low)} to {_num(high)} "
                f"(joint bootstrap): {verdict}"
            ]
    return ["- the difference of the two rhos: not tested (no joint bootstrap)"]


def _heatmap_names(path: Path) -> list[str]:
    """The distances a variant measured (``distances/<name>.json``) that have a heatmap."""
    measured = sorted((path / "distances").glob("*.json"))
    return [p.stem for p in measured if (path / "figures" / f"{p.stem}.png").is_file()]


def _heatmaps(evidence: list[EncoderEvidence]) -> list[str]:
    names = list(dict.fromkeys(n for e in evidence for n in e.distances))
    if not names:
        return []
    lines = ["## Distance heatmaps side by side", ""]
    lines += ["| distance | " + " | ".join(e.label for e in evidence) + " |"]
    lines += ["|---" * (len(evidence) + 1) + "|"]
    for name in names:
        cells = [
            f"![{name} {e.label}]({e.folder}/figures/{name}.png)" if name in e.distances else ""
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


def _num(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.3g}"


def _meta(folder: Path) -> dict[str, object]:
    study = folder / "results" / "study.json"
    return json.loads(study.read_text()).get("meta", {}) if study.is_file() else {}


def _correlations(folder: Path) -> pd.DataFrame | None:
    path = folder / "analysis" / "correlations.csv"
    return read_table(path) if path.is_file() else None


def _correlation_cells(correlations: pd.DataFrame | None) -> dict[str, tuple[float, float]]:
    if correlations is None or not len(correlations):
        return {}
    column = next((c for c in _ADJUSTED_P if c in correlations.columns), "spearman_p_perm")
    return {
        f"{row['distance']} ~ {row['performance']} ({_pairs_of(row, 'all groups')})": (
            float(row["spearman_rho"]),
            float(row[column]) if math.isfinite(float(row[column])) else math.inf,
        )
        for _, row in correlations.iterrows()
    }


def _pairs_of(row: pd.Series, scope: str) -> str:
    """The pair set a rho is computed over: its scope and, where known, its pair count."""
    n = pd.to_numeric(row.get("n_pairs"), errors="coerce")
    return f"{scope}, {int(n)} pairs" if pd.notna(n) else scope


def _primary_pairs(folder: Path) -> str:
    """The primary rho's pair set (``analysis/primary.csv``): the regions' pairs only."""
    path = folder / "analysis" / "primary.csv"
    table = read_table(path) if path.is_file() else None
    if table is None or not len(table):
        return "regions only"
    return _pairs_of(table.iloc[0], "regions only")


def _primary(folder: Path) -> dict[str, float]:
    """The primary test's rho, p and bootstrap interval (``analysis/headline.json``)."""
    path = folder / "analysis" / "headline.json"
    numbers = json.loads(path.read_text()) if path.is_file() else {}
    keys = {"rho": "primary_rho", "p": "primary_p", "ci_low": "primary_ci_low"}
    keys.update(ci_high="primary_ci_high", significant="primary_significant")
    return {k: float(numbers.get(key, math.nan)) for k, key in keys.items()}
