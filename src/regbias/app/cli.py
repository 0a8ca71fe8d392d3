"""The ``regbias`` console command and ``python run.py``: one Hydra app, runnable from any folder.

The configs ship inside the package (``regbias/conf``); outputs, the store and the default data
and cache folders are relative to the folder it runs in.

Ctrl-C stops it in one line (``regbias: interrupted``, exit 130) from the first moment: the
handler is in place before Hydra, the config or the study are imported, so only
:mod:`regbias.interrupt` (the standard library) is imported at this module's top.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from regbias.interrupt import ctrl_c_raises, interrupted_exits

if TYPE_CHECKING:
    from omegaconf import DictConfig


def main(config_dir: Path | None = None, job_name: str = "cli") -> None:
    """Compose the config, then run its task (run, describe, analyze or power) as one job or sweep.

    Args:
        config_dir: the folder of ``config.yaml`` (``run.py``: the ``conf/`` beside it; None:
            the configs the package ships).
        job_name: Hydra's ``hydra.job.name`` (the job's log file, a cluster job's name):
            ``cli`` for the console command, ``run`` for ``run.py``.
    """
    with interrupted_exits():
        _main(config_dir, job_name)


def _main(config_dir: Path | None, job_name: str) -> None:
    import hydra

    from regbias.app.removed_keys import removed_override
    from regbias.config_files import CONFIG_DIR
    from regbias.console import exit_with

    removed = removed_override(sys.argv[1:])
    if removed is not None:  # before Hydra, whose own message would not say what replaced it
        exit_with(f"error: {removed}", 2)

    def task(cfg: DictConfig) -> object:
        # The job's work: Ctrl-C raises from here on (while Hydra composed it, Ctrl-C only set
        # the stop flag, raised here). Models, tracking and the analysis load once a config is
        # composed: an override Hydra refuses, or a removed key, is answered in about a second.
        with ctrl_c_raises():
            from regbias.app.job import main as run_job

            return run_job(cfg)

    # Hydra names the job after the module of its task function (a file's name for a script).
    task.__module__ = job_name
    folder = CONFIG_DIR if config_dir is None else config_dir
    app = hydra.main(version_base="1.3", config_path=str(folder), config_name="config")
    app(task)()


if __name__ == "__main__":
    main()
