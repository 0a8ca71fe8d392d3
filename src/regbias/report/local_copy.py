"""A local copy of a run's report: ``report.md``, tables and figures next to the Hydra outputs.

A reader opens ``multirun/<date>/<time>/report/report.md`` (or ``outputs/.../report/``) with any
Markdown viewer, without MLflow; its figure links are relative, so they work there too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from regbias.tracking.artifacts import ERROR_TXT, HYDRA_FOLDER, MODELS_FOLDER
from regbias.tracking.runs import RunLog

__all__ = ["LEFT_OUT", "REPORT_FOLDER", "copy_report"]

#: The folder of the copy, inside a run's or a sweep's Hydra output directory.
REPORT_FOLDER = "report"
#: Artifacts not copied: the composed config (already in .hydra/), model weights, tracebacks.
LEFT_OUT = frozenset({HYDRA_FOLDER, MODELS_FOLDER, ERROR_TXT})


def copy_report(run: RunLog, destination: Path) -> Path:
    """Copy every artifact of ``run`` but :data:`LEFT_OUT` into ``destination`` (replaced).

    Args:
        run: the run whose report to copy.
        destination: the folder of the copy; an older copy there is replaced.

    Returns:
        ``destination``.
    """
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    for artifact in run.client.list_artifacts(run.run_id):
        if artifact.path not in LEFT_OUT:
            run.client.download_artifacts(run.run_id, artifact.path, str(destination))
    return destination
