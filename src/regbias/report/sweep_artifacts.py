"""Write a sweep's own artifacts into its parent run: its variants, its jobs, its versions.

Also the copy of a variant's run into the sweep's parent (``variant-<hash>/``), which the
comparison page reads there.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from regbias.tracking import artifacts as paths
from regbias.tracking.runs import RunLog

__all__ = ["copy_run", "write_jobs", "write_variants", "write_versions"]


def write_variants(parent: RunLog, rows: Sequence[Mapping[str, str]]) -> None:
    """One row per variant of the sweep: its hash, its jobs and their overrides."""
    parent.table(pd.DataFrame(list(rows)), paths.VARIANTS_CSV)


def write_versions(parent: RunLog, versions: Mapping[str, str]) -> None:
    """The packages' versions, as one artifact of the sweep's parent."""
    parent.json(dict(versions), paths.VERSIONS_JSON)


def write_jobs(parent: RunLog, records: list[dict[str, Any]]) -> None:
    """Every job record of the sweep (its ledger), as ``sweep/jobs.json``."""
    parent.json(records, paths.JOBS_JSON)


def copy_run(source: RunLog, target: RunLog) -> None:
    """Every artifact of ``source`` written to ``target`` as well (under its prefix).

    Args:
        source: the run whose artifacts to copy (a variant's run).
        target: where to write them (the sweep's parent, under ``variant-<hash>/``).
    """
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(source.client.download_artifacts(source.run_id, "", tmp))
        target.directory(local)
