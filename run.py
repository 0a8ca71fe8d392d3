"""regbias entry point: `python run.py [-m] [key=value ...]` (see README.md)."""

from pathlib import Path

from regbias.app.cli import main

if __name__ == "__main__":
    # This checkout's configs, and Hydra's job name `run` (its log file, cluster jobs' names).
    main(config_dir=Path(__file__).resolve().parent / "conf", job_name="run")
