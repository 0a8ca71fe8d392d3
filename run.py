"""regbias entry point: `python run.py [-m] [key=value ...]` (see README.md)."""

import hydra
from omegaconf import DictConfig

from regbias.app.job import main as run_job


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> object:
    """Compose the config, then run its task (run, describe, analyze or power) as one job."""
    return run_job(cfg)


if __name__ == "__main__":
    main()
