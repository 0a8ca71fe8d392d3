"""regbias entry point: `python run.py [-m] [key=value ...]` (see README.md)."""

# First, before Hydra and the study load (seconds): Ctrl-C from here on is one line, exit 130.
from regbias.interrupt import interrupted_exits

if __name__ == "__main__":
    with interrupted_exits():
        from pathlib import Path

        from regbias.app.cli import main

        # This checkout's configs, and Hydra's job name `run` (its log file, cluster jobs' names).
        main(config_dir=Path(__file__).resolve().parent / "conf", job_name="run")
