"""Checks before any heavy work, and what the resume key covers besides the config.

The settings check each value on reading (``regbias.settings``); what is checked here needs
more than one value, the corpus, or the file system.
"""

from __future__ import annotations

from pathlib import Path

from regbias.data.fingerprint import content_fingerprint, dataset_files
from regbias.data.loading import dataset_data_dir
from regbias.distances.lda import check_components
from regbias.distances.suite import DistanceSettings
from regbias.errors import ConfigError
from regbias.settings import StudySettings
from regbias.tracking.provenance import git_state

__all__ = [
    "preflight_job",
    "preflight_study",
    "preflight_sweep",
    "resume_inputs",
]


def preflight_job(settings: StudySettings) -> None:
    """What one ``task=run`` job checks before reading data, beyond the settings' own checks.

    Raises:
        ConfigError: a size that cannot work for this corpus (``k_folds=1`` for a binary task).
    """
    finetune = settings.finetune
    if finetune.enabled and settings.dataset.task == "binary" and finetune.k_folds < 2:
        raise ConfigError(
            f"finetune.k_folds must be at least 2 for a binary task (the held-out fold is the "
            f"baseline), not {finetune.k_folds}"
        )


def preflight_study(distance: DistanceSettings, n_groups: int) -> None:
    """What needs the number of groups, checked before any embedding (LDA components).

    Raises:
        ConfigError: ``distance.lda.n_components`` too large for the groups.
    """
    if distance.enabled and distance.lda.enabled:
        check_components(distance.lda.n_components, n_groups)


def preflight_sweep(settings: StudySettings) -> None:
    """What a sweep checks once, before its jobs: the data directory exists.

    Raises:
        DataError: the data directory is missing (said once, not once per job).
    """
    if settings.task == "run":
        dataset_data_dir(settings.dataset, settings.paths.data_dir)


def resume_inputs(settings: StudySettings) -> dict[str, str]:
    """What the resume key covers besides the config: data contents and the exact code.

    The data files' content fingerprint (hashes memoised in the cache folder by size and
    mtime), the git commit and the hash of uncommitted changes: a job reruns when a data file
    or the code changed, and a dirty tree resumes only with an identical diff.
    """
    dataset, paths = settings.dataset, settings.paths
    data_dir = dataset_data_dir(dataset, paths.data_dir)
    cache_dir = paths.cache_dir
    files = dataset_files(dataset, data_dir)
    state = git_state()
    return {
        "regbias.data_fingerprint": content_fingerprint(
            files, Path(cache_dir) if cache_dir else None
        ),
        "git.commit": state["git.commit"],
        "git.diff_hash": state["git.diff_hash"],
    }
