"""The counterfactual track's result: one row per direction and per rewrite set."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from regbias.analysis.counterfactual.classifier_flips import ClassifierFlip
from regbias.analysis.counterfactual.encoder_shift import EncoderShift


@dataclass(frozen=True)
class Counterfactual:
    """Same texts, another variety: the encoder's shifts and the classifiers' flips.

    Attributes:
        encoder: per direction A>B, how far the rewrite moves A's texts toward B.
        classifier: per rewrite set, how the classifiers' predictions change (empty where no
            model scored the rewrites).
        note: why the classifiers' side is missing ("" where it is not).
    """

    encoder: list[EncoderShift] = field(default_factory=list)
    classifier: list[ClassifierFlip] = field(default_factory=list)
    note: str = ""

    def encoder_frame(self) -> pd.DataFrame:
        """``counterfactual/encoder.csv``: one row per direction."""
        rows = [
            {
                "direction": r.direction,
                "changed": r.changed,
                "examined": r.examined,
                "share_changed": r.share_changed,
                "share": r.share,
                "share_ci_low": r.share_low,
                "share_ci_high": r.share_high,
                "share_per_changed_text": r.per_text,
                "control_share": r.control,
                "control_ci_low": r.control_low,
                "control_ci_high": r.control_high,
                "p_toward": r.verdict.moved,
                "p_beyond_control": r.verdict.beyond,
                "p": r.verdict.p,
                "p_adjusted": r.verdict.adjusted,
                "moves_toward_beyond_control": r.verdict.differs,
                "note": r.note,
            }
            for r in self.encoder
        ]
        return pd.DataFrame(rows)

    def classifier_frame(self) -> pd.DataFrame:
        """``counterfactual/classifier.csv``: one row per rewrite set."""
        rows = []
        for r in self.classifier:
            row: dict[str, object] = {"rewrite": r.name, "texts": r.texts, "models": r.models}
            for name, value in (
                ("flip_rate", r.flips),
                ("control_flip_rate", r.control_flips),
                ("accuracy_change", r.change),
                ("control_accuracy_change", r.control_change),
            ):
                row |= {
                    name: value.value,
                    f"{name}_ci_low": value.low,
                    f"{name}_ci_high": value.high,
                }
            verdict = r.verdict
            row |= {"p_change": verdict.moved, "p_beyond_control": verdict.beyond, "p": verdict.p}
            row |= {"p_adjusted": verdict.adjusted, "changes_beyond_control": verdict.differs}
            row["note"] = r.note
            rows.append(row)
        return pd.DataFrame(rows)
