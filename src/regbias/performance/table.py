"""Stage I's result: one row per model, group, evaluation draw and metric."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

#: The columns of ``performance/per_model.csv``, in order.
COLUMNS = ("model", "seed", "fold", "group", "repetition", "metric", "value", "n_texts")


@dataclass(frozen=True)
class PerformanceTable:
    """Per-model scores of a job (or of a sweep's jobs together).

    Attributes:
        frame: the long table with :data:`COLUMNS`; ``n_texts`` is how many texts each value
            was measured on.
        texts: what every model said of every text (``performance/texts.csv``, the ``texts``
            design: :mod:`regbias.performance.text_scores`); None for the ``draws`` design.
        rewrites: what every model said of each changed text as written, rewritten into
            another variety and as control (``performance/rewrites.csv``); None where the
            counterfactual track is off.
    """

    frame: pd.DataFrame
    texts: pd.DataFrame | None = None
    rewrites: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        missing = [c for c in COLUMNS if c not in self.frame.columns]
        if missing:
            raise ValueError(f"a performance table needs the columns {missing}")

    @property
    def models(self) -> list[str]:
        """The models, in order of first appearance."""
        return list(dict.fromkeys(self.frame["model"]))

    @property
    def groups(self) -> list[str]:
        """The scored groups, in order of first appearance."""
        return list(dict.fromkeys(self.frame["group"]))
