"""Checks before any heavy work, and what the resume key covers besides the config.

Every check is a plain function over values, so it survives any reshaping of the config reader;
:func:`preflight_job` and :func:`preflight_sweep` call them from the config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from regbias.data.draws import DrawSizes, validate_draw_sizes
from regbias.data.fingerprint import content_fingerprint, dataset_files
from regbias.data.loading import dataset_data_dir
from regbias.distances.lda import check_components
from regbias.errors import ConfigError
from regbias.tracking.provenance import git_state

__all__ = [
    "MAX_SEED",
    "validate_seed",
    "validate_performance_sizes",
    "draw_sizes",
    "preflight_job",
    "preflight_study",
    "preflight_sweep",
    "resume_inputs",
]

MAX_SEED = 2**32 - 1  # numpy and Lightning seeds


def validate_seed(seed: object) -> int:
    """The job's seed as an int in ``0 .. 2**32 - 1`` (0 is a real seed).

    Raises:
        ConfigError: not an integer, or out of range.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(f"seed must be an integer (0 is a real seed), not {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"seed must be between 0 and {MAX_SEED} (0 is a real seed), not {seed}")
    return seed


def _at_least(name: str, value: Any, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, not {value!r}")


def validate_performance_sizes(finetune: Mapping[str, Any], binary: bool) -> None:
    """The fine-tuning stage's sizes: folds, sample, epochs, batch, evaluation draws.

    Raises:
        ConfigError: a size that cannot work (``k_folds=1``, ``repetitions=0``, ...).
    """
    if binary:
        _at_least("finetune.k_folds", finetune.get("k_folds"), 2)
        _at_least("finetune.sample_size", finetune.get("sample_size"), 1, allow_none=True)
    _at_least("finetune.max_epochs", finetune.get("max_epochs"), 1)
    _at_least("finetune.batch_size", finetune.get("batch_size"), 1)
    evaluation = finetune.get("evaluation") or {}
    _at_least("finetune.evaluation.repetitions", evaluation.get("repetitions"), 1)
    _at_least("finetune.evaluation.draw_size", evaluation.get("draw_size"), 1, allow_none=True)
    fraction = finetune.get("val_fraction")
    if not isinstance(fraction, int | float) or not 0 < fraction < 1 or math.isnan(fraction):
        raise ConfigError(f"finetune.val_fraction must be between 0 and 1, not {fraction!r}")


def draw_sizes(distance: Mapping[str, Any]) -> DrawSizes:
    """The distance suite's draw sizes from the ``distance`` group, validated.

    Raises:
        ConfigError: a size below 1 for an enabled measurement (``repetitions=0`` too).
    """
    d = distance
    sizes = DrawSizes(
        repetitions=d["repetitions"] if d["enabled"] else 0,
        short_texts=d["short"]["texts_per_draw"] if d["short"]["enabled"] else None,
        long_passages=d["long"]["passages_per_draw"] if d["long"]["enabled"] else None,
        texts_per_passage=d["long"]["texts_per_passage"],
        lda_passages=d["lda"]["passages_per_group"] if d["lda"]["enabled"] else None,
    )
    validate_draw_sizes(sizes, enabled=bool(d["enabled"]))
    return sizes


def preflight_job(cfg: Mapping[str, Any]) -> None:
    """Every check of one ``task=run`` job that needs no data: seed and sizes.

    Raises:
        ConfigError: the first bad value, named by its key.
    """
    validate_seed(cfg["seed"])
    draw_sizes(cfg["distance"])
    if cfg["finetune"]["enabled"]:
        binary = cfg["dataset"].get("task", "binary") == "binary"
        validate_performance_sizes(cfg["finetune"], binary)


def preflight_study(distance: Mapping[str, Any], n_groups: int) -> None:
    """What needs the number of groups, checked before any embedding (LDA components).

    Raises:
        ConfigError: ``distance.lda.n_components`` too large for the groups.
    """
    if distance["enabled"] and distance["lda"]["enabled"]:
        check_components(int(distance["lda"]["n_components"]), n_groups)


def preflight_sweep(cfg: Mapping[str, Any]) -> None:
    """What a sweep checks once, before its jobs: the data directory exists.

    Raises:
        DataError: the data directory is missing (said once, not once per job).
    """
    if cfg.get("task") == "run" and cfg.get("dataset") is not None:
        dataset_data_dir(cfg["dataset"], (cfg.get("paths") or {}).get("data_dir"))


def resume_inputs(resolved: Mapping[str, Any]) -> dict[str, str]:
    """What the resume key covers besides the config: data contents and the exact code.

    The data files' content fingerprint (hashes memoised in the cache folder by size and
    mtime), the git commit and the hash of uncommitted changes: a job reruns when a data file
    or the code changed, and a dirty tree resumes only with an identical diff.
    """
    dataset, paths = resolved["dataset"], resolved.get("paths", {})
    data_dir = dataset_data_dir(dataset, paths.get("data_dir"))
    cache_dir = paths.get("cache_dir")
    files = dataset_files(dataset, data_dir)
    state = git_state()
    return {
        "regbias.data_fingerprint": content_fingerprint(
            files, Path(cache_dir) if cache_dir else None
        ),
        "git.commit": state["git.commit"],
        "git.diff_hash": state["git.diff_hash"],
    }
