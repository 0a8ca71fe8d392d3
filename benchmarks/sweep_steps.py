"""Where a sweep's wall time goes: each job step, the sweep's end, start-up, and the rest.

Runs one sweep in a fresh folder (its own MLflow store and cache; the data from
``$REGBIAS_DATA_DIR``) and reads the step times the runs logged (``time/<step>_s`` per job,
``time/aggregate/<step>_s`` in the parent). Older code that logged fewer steps shows the
difference as ``unaccounted``. Timings on a shared machine are noisy: compare versions back to
back, on the same machine, and say so.

    python benchmarks/sweep_steps.py -- -m experiment=smoke seed=0,1
    python benchmarks/sweep_steps.py --code /tmp/old-checkout -- -m experiment=smoke seed=0,1
    python benchmarks/sweep_steps.py --folder /tmp/study -- -m 'seed=range(5)'   # kept
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parents[1]


def run_sweep(code: Path, folder: Path, args: list[str]) -> tuple[float, float]:
    """Run ``code/run.py args`` in ``folder``; its wall seconds and when it started."""
    env = {**os.environ, "PYTHONPATH": str(code / "src")}
    launched = time.time()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(code / "run.py"), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    (folder / "sweep.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"the sweep failed (exit {done.returncode}): see {folder / 'sweep.log'}")
    return wall, launched


def step_times(folder: Path, launched: float) -> dict[str, object]:
    """The logged step times of the sweep in ``folder``'s store (launched at ``launched``)."""
    client = MlflowClient(f"sqlite:///{folder / 'mlruns.db'}")
    experiments = [e.experiment_id for e in client.search_experiments()]
    runs = client.search_runs(experiments)
    parent = next(r for r in runs if r.data.tags.get("regbias.role") == "sweep")
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    jobs = []
    for child in sorted(children, key=lambda r: r.info.start_time):
        times = {
            k[5:-2]: v
            for k, v in child.data.metrics.items()
            if k.startswith("time/") and k.endswith("_s")
        }
        times["run"] = (child.info.end_time - child.info.start_time) / 1000
        jobs.append(times)
    aggregate = {
        k.removeprefix("time/aggregate/").removesuffix("_s"): v
        for k, v in parent.data.metrics.items()
        if k.startswith("time/aggregate/")
    }
    first_job = min(r.info.start_time for r in children) / 1000
    return {
        "jobs": jobs,
        "aggregate": aggregate,
        "startup": first_job - launched,
        "last_job_end_to_parent_end": (
            parent.info.end_time - max(r.info.end_time for r in children)
        )
        / 1000,
    }


def render(wall: float, found: dict[str, object]) -> str:
    """A Markdown table: each step summed over the jobs, the sweep's end, the remainder."""
    jobs: list[dict[str, float]] = found["jobs"]  # type: ignore[assignment]
    aggregate: dict[str, float] = found["aggregate"]  # type: ignore[assignment]
    steps = [k for k in dict.fromkeys(k for j in jobs for k in j) if k != "run"]
    lines = ["| step | " + " | ".join(f"job {i}" for i in range(len(jobs))) + " | sum |"]
    lines.append("|---" * (len(jobs) + 2) + "|")
    for step in [*steps, "run"]:
        values = [j.get(step, 0.0) for j in jobs]
        cells = " | ".join(f"{v:.1f}" for v in values)
        lines.append(
            f"| {step if step != 'run' else 'job run (MLflow start to end)'} | {cells} "
            f"| {sum(values):.1f} |"
        )
    summed = sum(v for j in jobs for k, v in j.items() if k != "run")
    aggregated = sum(aggregate.values())
    startup: float = found["startup"]  # type: ignore[assignment]
    bound = summed + aggregated + startup
    lines += [
        "",
        f"- job steps, summed: {summed:.1f} s; the sweep's end: {aggregated:.1f} s "
        f"({', '.join(f'{k} {v:.1f}' for k, v in aggregate.items()) or 'not logged'})",
        f"- last job's end to the parent's end: {found['last_job_end_to_parent_end']:.1f} s",
        f"- start-up (launch to the first job's run: imports, config, parent run): {startup:.1f} s",
        f"- wall: {wall:.1f} s; wall minus steps, the sweep's end and start-up: "
        f"{wall - bound:.1f} s (job switches, anything no step logs)",
        f"- wall / (steps + the sweep's end + start-up): {wall / max(bound, 1e-9):.2f}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose run.py to run")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--folder", type=Path, help="run in this (new) folder and keep it")
    parser.add_argument("args", nargs="+", help="the sweep's arguments, after --")
    options = parser.parse_args()
    if options.folder is not None:
        options.folder.mkdir(parents=True)
        wall, launched = run_sweep(options.code.resolve(), options.folder, options.args)
        found = step_times(options.folder, launched)
    else:
        with tempfile.TemporaryDirectory(prefix="regbias-steps-") as tmp:
            wall, launched = run_sweep(options.code.resolve(), Path(tmp), options.args)
            found = step_times(Path(tmp), launched)
    print(render(wall, found))
    if options.json:
        options.json.write_text(json.dumps({"wall": wall, **found}, indent=2))


if __name__ == "__main__":
    main()
