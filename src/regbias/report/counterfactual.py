"""Same texts, another variety: its tables, figure, metrics and report section."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from regbias.analysis.counterfactual.classifier_flips import ClassifierFlip, Interval
from regbias.analysis.counterfactual.encoder_shift import EncoderShift
from regbias.analysis.counterfactual.result import Counterfactual
from regbias.analysis.counterfactual.settings import MIN_CHANGED
from regbias.analysis.counterfactual.sign_flip import Verdict
from regbias.data.variety_rewrite import VARIETIES
from regbias.numbers import p_text, points
from regbias.report.canvas import new_figure
from regbias.report.escape import markdown_text
from regbias.tracking import artifacts as paths
from regbias.tracking.run_log import RunLog

_BEYOND = "beyond the control"


def log_counterfactual(run: RunLog, found: Counterfactual) -> None:
    """``counterfactual/encoder.csv``, ``classifier.csv``, the figure and the metrics."""
    run.table(found.encoder_frame(), paths.COUNTERFACTUAL_ENCODER_CSV)
    if found.classifier:
        run.table(found.classifier_frame(), paths.COUNTERFACTUAL_CLASSIFIER_CSV)
    if found.encoder:
        run.figure(shares_figure(found.encoder), paths.COUNTERFACTUAL_FIGURE)
    metrics: dict[str, float] = {}
    for r in found.encoder:
        name = f"counterfactual/{r.source}-to-{r.other}"
        metrics |= {f"{name}/share": r.share, f"{name}/control_share": r.control}
        metrics |= {
            f"{name}/share_changed": r.share_changed,
            f"{name}/p_adjusted": r.verdict.adjusted,
        }
    for f in found.classifier:
        name = f"counterfactual/{f.source}-to-{f.target}"
        metrics |= {f"{name}/flip_rate": f.flips.value, f"{name}/accuracy_change": f.change.value}
        metrics |= {f"{name}/control_flip_rate": f.control_flips.value}
    run.metrics({k: v for k, v in metrics.items() if math.isfinite(v)})


def shares_figure(rows: list[EncoderShift]) -> Figure:
    """Per direction the share of the difference the rewrite explains, beside the control's."""
    fig = new_figure(6.5, 1.4 + 0.42 * len(rows))
    ax = fig.add_subplot()
    y = np.arange(len(rows))
    for offset, colour, label, value, low, high in (
        (-0.18, "#b2182b", "rewrite", "share", "share_low", "share_high"),
        (0.18, "#999999", "control", "control", "control_low", "control_high"),
    ):
        values = np.array([getattr(r, value) for r in rows], dtype=float)
        lows = np.array([getattr(r, low) for r in rows], dtype=float)
        highs = np.array([getattr(r, high) for r in rows], dtype=float)
        ax.barh(y + offset, np.nan_to_num(values), height=0.34, color=colour, label=label)
        # The interval as a line from end to end (a percentile interval need not hold the value).
        shown = np.isfinite(lows) & np.isfinite(highs)
        ax.hlines((y + offset)[shown], lows[shown], highs[shown], color="#222", linewidth=1.0)
    for i, r in enumerate(rows):
        if not math.isfinite(r.share):  # too few texts, or D within its noise: said, not drawn
            reason = "too few changed texts" if r.changed < MIN_CHANGED else _short(r.note)
            ax.text(0, i, f"  no share: {reason}", va="center", fontsize=7, color="#555")
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    labels = [f"{r.source}→{r.other} ({r.share_changed:.1%} changed)" for r in rows]
    ax.set_yticks(y, labels, fontsize=8)
    ax.axvline(0, color="#444", linewidth=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("share of the A-B mean difference the rewrite closes (bootstrap interval)")
    ax.set_title("Same texts, another variety: the encoder's shift toward B", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def _short(note: str) -> str:
    """A note's reason in a few words, for the figure."""
    if "fewer than" in note:
        return "a group too small"
    return "difference too close to its noise" if note else "n/a"


def counterfactual_section(found: Counterfactual) -> str:
    """Markdown: one table of the directions, the encoder's and the classifiers' sides."""
    lines = [
        "## Same texts, another variety",
        "",
        "Each group's texts rewritten into the other group's written variety (spelling and "
        "lexis), beside a control that replaces the same words with same-frequency words of no "
        "variety. Texts the rewrite does not change are counted and left out of the paired "
        "tests. A verdict needs the rewrite to move the texts (toward B; or their accuracy) and "
        "to do so beyond its control: two sign-flip tests over texts, the larger p, Holm over "
        "the directions. The share is the part of the A-B mean difference of sentence vectors "
        "that rewriting A's texts closes, with a basic bootstrap interval over texts (in "
        "simulated groups it covered 0.935-0.959 of studies where a share is given).",
        "",
        "| direction | texts changed | share of the A-B difference explained | control's share "
        "| encoder | flip rate (control) | accuracy change, points (control) | classifiers |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in found.encoder:
        lines.append(_row(r, _flip_of(found.classifier, r)))
    lines += ["", *_notes(found), ""]
    if found.encoder:
        lines += [
            f"![each direction's share beside its control's]({paths.COUNTERFACTUAL_FIGURE})",
            "",
        ]
    lines.append(
        "- A spelling-and-lexis rewrite is a lower bound on the variety: grammar, idiom, topic and "
        "style stay as they were. A share not shown beyond the control does not show that the "
        "variety does not matter, only that these word forms were not shown to carry the "
        "difference."
    )
    return "\n".join(lines) + "\n"


def _flip_of(flips: list[ClassifierFlip], shift: EncoderShift) -> ClassifierFlip | None:
    """The rewrite set that serves ``shift`` (its source, rewritten into its other's variety)."""
    target = VARIETIES.get(shift.other)
    return next((f for f in flips if f.source == shift.source and f.target == target), None)


def _row(r: EncoderShift, flip: ClassifierFlip | None) -> str:
    changed = f"{r.changed:,} of {r.examined:,} ({r.share_changed:.1%})"
    share = _share(r.share, r.share_low, r.share_high)
    control = _share(r.control, r.control_low, r.control_high)
    toward = f"moves toward {markdown_text(r.other)}"
    encoder = _verdict(r.verdict, r.note, toward)
    cells = ["n/a", "n/a", "not measured"]
    if flip is not None:
        cells = [
            f"{_interval(flip.flips, '{:.1%}'.format)} ({flip.control_flips.value:.1%})",
            f"{_interval(flip.change, points)} (control {points(flip.control_change.value)})",
            _verdict(flip.verdict, flip.note, "changes accuracy"),
        ]
    direction = f"{markdown_text(r.source)}→{markdown_text(r.other)}"
    return "| " + " | ".join([direction, changed, share, control, encoder, *cells]) + " |"


def _notes(found: Counterfactual) -> list[str]:
    """Each note once, with the rewrites it is about."""
    about: dict[str, list[str]] = {}
    for r in found.encoder:
        about.setdefault(r.note, []).append(f"{r.source}→{r.other}")
    for f in found.classifier:
        about.setdefault(f.note, []).append(f"{f.name} (classifiers)")
    about.pop("", None)
    out = [f"- {markdown_text(', '.join(w))}: {markdown_text(n)}" for n, w in about.items()]
    if found.note:
        out.append(f"- {markdown_text(found.note)}")
    return out


def _verdict(verdict: Verdict, note: str, claim: str) -> str:
    """``moves toward uk beyond the control (Holm p 0.001)``, or its non-rejection."""
    if not math.isfinite(verdict.adjusted):
        return "not tested" if note else "n/a"
    said = claim if verdict.differs else f"not shown to {_infinitive(claim)}"
    return f"{said} {_BEYOND} (Holm p {p_text(verdict.adjusted)})"


def _infinitive(claim: str) -> str:
    """``moves toward uk`` -> ``move toward uk``; ``changes accuracy`` -> ``change accuracy``."""
    verb, _, rest = claim.partition(" ")
    return f"{verb.removesuffix('s')} {rest}".strip()


def _share(value: float, low: float, high: float) -> str:
    """``+12.00% [+3.00%, +20.00%]``: ``n/a`` without a share, ``(no interval)`` without ends."""
    shown = f"{value:+.2%}" if math.isfinite(value) else "n/a"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{shown} (no interval)"
    return f"{shown} [{low:+.2%}, {high:+.2%}]"


def _interval(value: Interval, text: Callable[[float], str]) -> str:
    """``value`` and its ends (``-1.2 [-2.0, -0.4]``) as ``text`` writes each; alone without."""
    if not (math.isfinite(value.low) and math.isfinite(value.high)):
        return text(value.value)
    return f"{text(value.value)} [{text(value.low)}, {text(value.high)}]"
