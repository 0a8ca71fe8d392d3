"""Stage I's settings under their first module name, for :mod:`regbias.settings`.

Stage I now lives in small modules: :mod:`~regbias.performance.settings` (the ``finetune`` and
``trainer`` groups), :mod:`~regbias.performance.targets` (optimiser and callbacks by
``_target_``), :mod:`~regbias.performance.trainer` (one fit), :mod:`~regbias.performance.predict`
and :mod:`~regbias.performance.folds` (fold plans, :func:`~regbias.performance.folds.run_folds`).
Import from those; this module only keeps ``regbias.settings``'s import working.
"""

from regbias.performance.settings import EvaluationSettings, FinetuneSettings, TrainerSettings

__all__ = ["EvaluationSettings", "FinetuneSettings", "TrainerSettings"]
