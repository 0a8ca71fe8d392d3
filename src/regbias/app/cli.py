"""The ``regbias`` console command: the Hydra app of ``run.py``, runnable from any folder.

The configs ship inside the package (``regbias/conf``, the repository's ``conf/`` folder), so an
installed ``regbias`` finds them wherever it runs; outputs, the MLflow store and the default
data and cache folders are relative to the folder it runs in, as with ``python run.py``.
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from regbias.app.job import main as run_job
from regbias.config_files import CONFIG_DIR

__all__ = ["main"]


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def main(cfg: DictConfig) -> object:
    """Compose the config, then run its task (run, describe, analyze or power) as one job."""
    return run_job(cfg)


if __name__ == "__main__":
    main()
