"""The comparison page's answers: separation, agreement, primary rhos, encoder against encoder.

Every table names each column and explains it in the legend under it; no unadjusted p stands
as a finding (only a pair's Holm-adjusted bootstrap p makes a verdict).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from regbias.analysis.encoders.separation import EncoderContrast
from regbias.analysis.pairs.embedding import EmbeddingPairTests
from regbias.numbers import number_text
from regbias.report.escape import markdown_text, path_text
from regbias.tracking.artifacts import name_hash


def markdown_table(frame: pd.DataFrame, legend: Mapping[str, str]) -> list[str]:
    """A Markdown table of ``frame`` (every column named) and its legend, one line a column.

    Raises:
        ValueError: a column is unnamed or missing from the legend (a page bug, caught by
            the tests).
    """
    columns = [str(c) for c in frame.columns]
    missing = [c for c in columns if not c.strip() or c not in legend]
    if missing:
        raise ValueError(f"table columns without a name or a legend entry: {missing}")
    lines = ["| " + " | ".join(markdown_text(c) for c in columns) + " |"]
    lines.append("|---" * len(columns) + "|")
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    lines += ["", "Columns: " + "; ".join(f"*{markdown_text(c)}*: {legend[c]}" for c in columns)]
    return [*lines, ""]


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return number_text(value) if isinstance(value, float) else markdown_text(value)


def separation_lines(contrasts: Sequence[EncoderContrast]) -> list[str]:
    """Per pair of encoders: the answer and the table of every pair's separations."""
    if not contrasts:
        return []
    first = contrasts[0]
    level = f"{first.confidence:.0%}"
    lines = [
        "## Which encoder separates the regions more (the same texts in both)",
        "",
        "Separation of a pair = the squared distance of the two groups' mean sentence vectors "
        "over the groups' mean within-group dispersion (covariance trace), a U-statistic: "
        "free of the encoder's scale and of the groups' sizes (docs/method.md). Differences "
        f"have paired bootstrap intervals over texts ({first.n_bootstrap} replicates, the same "
        "texts drawn for both encoders); pairs are Holm-adjusted within their family.",
        "",
    ]
    for contrast in contrasts:
        lines += [f"- {markdown_text(contrast.sentence())}", ""]
        a, b = markdown_text(contrast.first), markdown_text(contrast.second)
        t = contrast.table
        frame = pd.DataFrame(
            {
                "pair": t["group_a"] + "-" + t["group_b"],
                "family": t["family"],
                "texts a": t["n_a"],
                "texts b": t["n_b"],
                f"separation {contrast.first}": t["first"],
                f"separation {contrast.second}": t["second"],
                "difference": t["difference"],
                "interval low": t["ci_low"],
                "interval high": t["ci_high"],
                "p (bootstrap)": t["p"],
                "p (Holm, family)": t["p_holm"],
                "differs": t["differs"].astype(bool),
            }
        )
        legend = {
            "pair": "the two groups",
            "family": "regions (the primary family) or reference (a pair with mixed/baseline)",
            "texts a": "texts of the first group in this pair (shared texts left out)",
            "texts b": "texts of the second group",
            f"separation {contrast.first}": f"the pair's separation in {a}",
            f"separation {contrast.second}": f"the pair's separation in {b}",
            "difference": f"{a} minus {b}",
            "interval low": f"{level} paired bootstrap interval of the difference, lower end",
            "interval high": "its upper end",
            "p (bootstrap)": (
                "two-sided bootstrap p of no difference, 1 for a difference at rounding level "
                "(unadjusted: not a finding)"
            ),
            "p (Holm, family)": "the same, Holm-adjusted within the pair's family",
            "differs": f"the adjusted p is at most {contrast.alpha}",
        }
        lines += [f"### {a} against {b}, per pair", "", *markdown_table(frame, legend)]
    return lines


def agreement_table(records: Mapping[str, EmbeddingPairTests]) -> pd.DataFrame:
    """Per pair: each encoder's test-of-record verdict (Holm p, differs) and whether they agree."""
    if not records:
        return pd.DataFrame()
    keys = ["group_a", "group_b", "family"]
    frame: pd.DataFrame | None = None
    for label, tests in records.items():
        own = tests.table[[*keys, "p_adjusted", "differs"]].rename(
            columns={"p_adjusted": f"Holm p {label}", "differs": f"differs {label}"}
        )
        frame = own if frame is None else frame.merge(own, on=keys, how="outer", sort=False)
    assert frame is not None
    verdicts = frame[[f"differs {label}" for label in records]].astype("boolean")
    frame["agree"] = verdicts.nunique(axis=1, dropna=False).eq(1).to_numpy()
    pair = frame["group_a"] + "-" + frame["group_b"]
    return pd.concat([pair.rename("pair"), frame.drop(columns=["group_a", "group_b"])], axis=1)


def agreement_lines(records: Mapping[str, EmbeddingPairTests]) -> list[str]:
    """Where the encoders' tests of record agree on which pairs differ, side by side."""
    if len(records) < 2:
        return []
    frame = agreement_table(records)
    for label in records:
        frame[f"differs {label}"] = frame[f"differs {label}"].astype(bool)
    alpha = next(iter(records.values())).alpha
    legend = {"pair": "the two groups", "family": "the Holm family of the test of record"}
    for label in records:
        legend[f"Holm p {label}"] = f"{markdown_text(label)}'s test of record, Holm-adjusted p"
        legend[f"differs {label}"] = f"that p is at most {alpha}"
    legend["agree"] = "every encoder gives the same verdict"
    apart = frame[~frame["agree"]]
    words = ", ".join(apart["pair"]) or "none"
    return [
        "## Do the encoders agree on which pairs differ (test of record)",
        "",
        f"- They disagree on {len(apart)} of {len(frame)} pairs: {markdown_text(words)}.",
        "",
        *markdown_table(frame, legend),
    ]


#: What the joint bootstrap resamples, and what its intervals are for.
_OF = " of models, distance repetitions and scored evaluation texts, for the measured rhos"
#: Beside every verdict on two encoders' rhos: they are measured, and noise lowers a measured rho.
MEASURED_CAVEAT = (
    "the rhos are measured ones: an encoder whose distances are noisier measures a lower rho "
    "at the same association, so a difference may be one of noise"
)


def primary_sentence(row: Mapping[str, object], confidence: float) -> str:
    """The difference of two encoders' primary rhos, with its joint-bootstrap interval."""
    first, second = str(row["first"]), str(row["second"])
    rhos = f"rho {number_text(row['rho_first'])} against {number_text(row['rho_second'])}"
    numbers = (
        f"{rhos}, difference {number_text(row['difference'])}, {confidence:.0%} interval "
        f"{number_text(row['ci_low'])} to {number_text(row['ci_high'])}, joint bootstrap{_OF}"
        + ("" if row.get("paired", True) else " (resampled apart: other models or repetitions)")
    )
    low, high = float(row["ci_low"]), float(row["ci_high"])  # type: ignore[arg-type]
    if not (math.isfinite(low) and math.isfinite(high)):
        why = str(row.get("note") or "") or "nothing could be resampled"
        return f"{first} against {second}: no interval for the difference ({rhos}; {why})"
    if low > 0 or high < 0:
        higher = first if low > 0 else second
        return f"the primary rho is higher in {higher} ({numbers}); {MEASURED_CAVEAT}"
    return (
        f"{first} against {second}: no difference of primary rhos shown ({numbers}); "
        f"{MEASURED_CAVEAT}"
    )


def primary_lines(
    contrasts: pd.DataFrame | None, primary_name: str, confidence: float
) -> list[str]:
    """Each encoder's primary rho with its interval, and every pair's difference."""
    if contrasts is None or not len(contrasts):
        return []
    frame = pd.DataFrame(
        {
            "first": contrasts["first"],
            "second": contrasts["second"],
            "rho first": contrasts["rho_first"],
            "rho first low": contrasts["rho_first_ci_low"],
            "rho first high": contrasts["rho_first_ci_high"],
            "rho second": contrasts["rho_second"],
            "rho second low": contrasts["rho_second_ci_low"],
            "rho second high": contrasts["rho_second_ci_high"],
            "difference": contrasts["difference"],
            "interval low": contrasts["ci_low"],
            "interval high": contrasts["ci_high"],
            "paired": contrasts["paired"].astype(bool),
        }
    )
    level = f"{confidence:.0%}"
    legend = {
        "first": "one encoder",
        "second": "the other",
        "rho first": f"the first's primary rho ({markdown_text(primary_name)}, region pairs)",
        "rho first low": (
            f"its {level} bootstrap interval for the measured rho (its report's), lower end"
        ),
        "rho first high": "its upper end",
        "rho second": "the second's primary rho",
        "rho second low": "its interval's lower end",
        "rho second high": "its upper end",
        "difference": "first minus second",
        "interval low": f"{level} joint bootstrap interval of the difference, lower end",
        "interval high": "its upper end",
        "paired": "both resampled alike (the same models, repetitions and evaluation texts)",
    }
    sentences = [
        f"- {markdown_text(primary_sentence(r, confidence))}" for _, r in contrasts.iterrows()
    ]
    return [
        "## The primary hypothesis compared",
        "",
        *sentences,
        "",
        *markdown_table(frame, legend),
    ]


def contrast_findings(
    contrasts: Sequence[EncoderContrast],
    records: Mapping[str, EmbeddingPairTests],
    primary: pd.DataFrame | None,
    confidence: float,
) -> list[str]:
    """The page's findings: the answers, each backed by its interval or adjusted test."""
    lines = [contrast.sentence() for contrast in contrasts]
    if len(records) >= 2:
        frame = agreement_table(records)
        apart = frame[~frame["agree"]]
        lines.append(
            f"tests of record agree on {len(frame) - len(apart)} of {len(frame)} pairs"
            + (f"; they disagree on {', '.join(apart['pair'])}" if len(apart) else "")
        )
    if primary is not None:
        lines += [primary_sentence(row, confidence) for _, row in primary.iterrows()]
    return lines


@dataclass
class EncoderComparison:
    """What the comparison page reports on a sweep's variants side by side.

    Attributes:
        separation: each pair of variants' separation contrast.
        records: each variant's test of record, by label (for the agreement).
        primary: the primary rhos' joint-bootstrap contrasts (None: not computed).
        confidence: the intervals' level.
        notes: why a part is missing.
    """

    separation: list[EncoderContrast] = field(default_factory=list)
    records: dict[str, EmbeddingPairTests] = field(default_factory=dict)
    primary: pd.DataFrame | None = None
    confidence: float = 0.95
    notes: list[str] = field(default_factory=list)

    def findings(self) -> list[str]:
        """The page's findings (:func:`contrast_findings`) and the notes."""
        found = contrast_findings(self.separation, self.records, self.primary, self.confidence)
        return [*found, *self.notes]

    def markdown(self, primary_name: str) -> str:
        """The separation, agreement and primary sections."""
        lines = [
            *separation_lines(self.separation),
            *agreement_lines(self.records),
            *primary_lines(self.primary, primary_name, self.confidence),
        ]
        return "\n".join(lines) + "\n" if lines else ""

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables behind the sections, by artifact name (``comparison/<name>.csv``).

        One name per pair of encoders: ``separation_<a>_vs_<b>``, made safe; pairs whose names
        would be the same (a label holding `` vs ``, labels a file name cannot tell apart)
        each add ``-`` and a short hash of their exact labels.
        """
        out = {}
        separations: dict[str, list[EncoderContrast]] = {}
        for contrast in self.separation:
            name = path_text(f"separation {contrast.first} vs {contrast.second}".replace(" ", "_"))
            separations.setdefault(name, []).append(contrast)
        for name, contrasts in separations.items():
            for contrast in contrasts:
                names = {"first": contrast.first, "second": contrast.second}
                t = contrast.table.rename(columns={k: f"separation {v}" for k, v in names.items()})
                unique = f"{name}-{name_hash(contrast.first, contrast.second)}"
                out[name if len(contrasts) == 1 else unique] = t
        if len(self.records) >= 2:
            out["agreement"] = agreement_table(self.records)
        if self.primary is not None:
            out["primary"] = self.primary
        return out
