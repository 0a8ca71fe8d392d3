"""The study's settings: everything one job reads from its config, typed and validated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from regbias.analysis.study import AnalysisSettings
from regbias.data.data_dir import PathSettings
from regbias.data.dataset import Dataset
from regbias.distances.suite import DistanceSettings
from regbias.embeddings.spec import EncoderSpec
from regbias.performance.settings import FinetuneSettings, TrainerSettings
from regbias.tracking.runs import TrackingSettings


@dataclass(frozen=True)
class SamplingSettings:
    """The ``sampling`` config group.

    Attributes:
        policy: what a draw does when a group has fewer texts than asked: ``error`` or ``all``
            (take the group whole, as the paper did for NZ; logged).
    """

    policy: Literal["error", "all"]


@dataclass(frozen=True)
class StudySettings:
    """Everything one job reads from its config, typed and validated.

    ``task`` is one of :data:`regbias.app.tasks.TASKS`; ``dataset`` is the class its
    ``_target_`` names.
    """

    task: str
    seed: int
    resume: bool
    paths: PathSettings
    sampling: SamplingSettings
    dataset: Dataset
    finetune: FinetuneSettings
    encoder: EncoderSpec
    distance: DistanceSettings
    trainer: TrainerSettings
    tracking: TrackingSettings
    analysis: AnalysisSettings
