"""A newcomer's first hour, step by step: the README's install, the first job, the 5-seed study.

Each step runs as a user would run it, in a fresh folder (its own MLflow store and embedding
cache; the data from ``$REGBIAS_DATA_DIR``), and prints its wall time:

- ``install``: a fresh virtual environment and the README's ``pip install -e ".[dev,onnx]"``
  (pip's own download cache is used as it is: say whether it was warm);
- ``job``: ``python run.py`` from an empty embedding cache (cold), then again with the cache
  it filled (warm; ``resume=false`` so the finished run is not reused);
- ``study``: ``python run.py -m seed='range(5)'`` cold, then warm, each with its step times.

Timings say nothing unless the machine is at rest: the load average before and after each
step is printed beside it, with the commit and the date. Compare versions back to back. Each
step's CPU seconds (user plus system, all its processes) over its wall time say how many cores
it kept busy: on 2 cores, a step at 2.0 cannot be made faster by overlapping its parts.

    python benchmarks/first_hour.py                       # every step (about an hour today)
    python benchmarks/first_hour.py --steps job study --code /tmp/old-checkout
    python benchmarks/first_hour.py --steps job -- experiment=smoke   # extra overrides
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep_steps import render, step_times

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("install", "job", "study")
STUDY = ("-m", "seed=range(5)")


@dataclass(frozen=True)
class Timed:
    """One step's wall time and the load average around it."""

    step: str
    seconds: float
    load_before: float
    load_after: float
    detail: str = ""
    cpu_seconds: float = float("nan")

    def row(self) -> str:
        """The step as a Markdown table row (its CPU time and the cores it kept busy)."""
        minutes = f"{int(self.seconds // 60)} min {self.seconds % 60:.0f} s"
        load = f"{self.load_before:.1f} / {self.load_after:.1f}"
        busy = self.cpu_seconds / self.seconds if self.seconds > 0 else float("nan")
        return (
            f"| {self.step} | {self.seconds:.1f} | {minutes} | {self.cpu_seconds:.0f} | "
            f"{busy:.2f} | {load} |"
        )


def children_cpu_seconds() -> float:
    """User plus system CPU seconds of this process's finished children so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_command(
    command: Sequence[str], cwd: Path, env: dict[str, str], log: Path
) -> tuple[float, float]:
    """Run ``command`` in ``cwd``; its wall and CPU seconds (the output goes to ``log``)."""
    cpu_before = children_cpu_seconds()
    started = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {done.returncode}): see {log}")
    return seconds, children_cpu_seconds() - cpu_before


def install(code: Path, folder: Path) -> Timed:
    """The README's install into a fresh virtual environment."""
    before = os.getloadavg()[0]
    venv = folder / "venv"
    seconds, cpu = timed_command(
        [sys.executable, "-m", "venv", str(venv)], folder, dict(os.environ), folder / "venv.log"
    )
    more, more_cpu = timed_command(
        [str(venv / "bin" / "pip"), "install", "-q", "-e", f"{code}[dev,onnx]"],
        folder,
        dict(os.environ),
        folder / "install.log",
    )
    return Timed(
        "install (README)", seconds + more, before, os.getloadavg()[0], cpu_seconds=cpu + more_cpu
    )


def run_app(code: Path, folder: Path, args: Sequence[str], name: str) -> tuple[Timed, float]:
    """``code/run.py args`` in ``folder`` (its store and cache there); the step and its start."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("REGBIAS_CACHE_DIR", "MLFLOW_TRACKING_URI")
    }
    env["PYTHONPATH"] = str(code / "src")
    before = os.getloadavg()[0]
    launched = time.time()
    log = folder / f"{name.replace(' ', '_')}.log"
    seconds, cpu = timed_command([sys.executable, str(code / "run.py"), *args], folder, env, log)
    return Timed(name, seconds, before, os.getloadavg()[0], cpu_seconds=cpu), launched


def first_hour(code: Path, steps: Sequence[str], extra: Sequence[str], keep: Path) -> list[Timed]:
    """Every asked step, cold then warm, in folders under ``keep``."""
    found: list[Timed] = []
    if "install" in steps:
        (keep / "install").mkdir()
        found.append(install(code, keep / "install"))
    if "job" in steps:
        folder = keep / "job"
        folder.mkdir()
        for name, args in (("job, cold cache", []), ("job, warm cache", ["resume=false"])):
            step, _ = run_app(code, folder, [*args, *extra], name)
            found.append(step)
    if "study" in steps:
        folder = keep / "study"
        folder.mkdir()
        for name, args in (("study, cold cache", []), ("study, warm cache", ["resume=false"])):
            step, launched = run_app(code, folder, [*STUDY, *args, *extra], name)
            breakdown = render(step.seconds, step_times(folder, launched))
            found.append(replace(step, detail=breakdown))
    return found


def commit_of(code: Path) -> str:
    """The checkout's commit (with ``+changes`` when its tree differs from it)."""
    head = subprocess.run(
        ["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(code), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}+changes" if dirty else head or "unknown"


def report(found: Sequence[Timed], code: Path) -> str:
    """The steps as Markdown: a table, then each study's step breakdown."""
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"First hour of {commit_of(code)} on {os.cpu_count()} CPUs, {when}",
        "",
        "| step | seconds | wall | CPU seconds | cores busy | load before / after |",
        "|---|---|---|---|---|---|",
        *(t.row() for t in found),
    ]
    for t in found:
        if t.detail:
            lines += ["", f"### {t.step}", "", t.detail]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout to time")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument("--folder", type=Path, help="keep the runs here (a new folder)")
    parser.add_argument("extra", nargs="*", help="overrides for every run, after --")
    options = parser.parse_args()
    code = options.code.resolve()
    if options.folder is not None:
        options.folder.mkdir(parents=True)
        found = first_hour(code, options.steps, options.extra, options.folder)
    else:
        with tempfile.TemporaryDirectory(prefix="regbias-first-hour-") as tmp:
            found = first_hour(code, options.steps, options.extra, Path(tmp))
    print(report(found, code))


if __name__ == "__main__":
    main()
