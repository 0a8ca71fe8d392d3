"""The planted null: do random splits of one region look like regions? (false-positive rate)

Six "regions" are random splits of the US tweets with the real regions' sizes (AU 2165,
CA 1840, NZ 329, UK 6446, ZA 250, and the rest as US); the general pool is the training group.
A sweep of the real pipeline (``dataset=csv``) then reports, per distance, how many of the 15
pairs its pair test calls different (adjusted over the pairs, as the report does) and how the
unadjusted p-values spread (uniform under the null: a text histogram), and which correlations
survive their adjustment: every such finding is a false positive. ``--shift`` plants a real
difference instead: ZA's tweets are replaced by Reuters sentences (another domain); ``--flip
0.2`` plants a performance gap with the texts unchanged: a share of one group's labels flipped,
so the performance test of record must find that group's pairs while the distance test of
record stays silent. ``--splits 6`` repeats the study on independent splits. ``--power``
runs ``task=power`` on the real Sentiment140 data: graded mixtures of UK tweets planted into
splits of the US tweets, the power curve of every test and the share it detects with 80%.

    python benchmarks/null_study.py --seeds 5                  # false-positive rates
    python benchmarks/null_study.py --seeds 5 --distances-only # the pair tests alone (faster)
    python benchmarks/null_study.py --seeds 5 --code ../old    # the same with another checkout
    python benchmarks/null_study.py --power                    # the power curves
    python benchmarks/null_study.py --seeds 5 --splits 6 --performance-only   # measure I's null
    python benchmarks/null_study.py --seeds 5 --flip 0.2 --performance-only   # a planted gap

Figures, not assertions: it prints the rates and where the runs are.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"au": 2165, "ca": 1840, "nz": 329, "uk": 6446, "za": 250}


def null_table(
    data_dir: Path, seed: int, shift: bool, flip: float = 0.0, flip_group: str = "za"
) -> pd.DataFrame:
    """US tweets split at random into the regions' sizes, plus the pool as ``train``."""
    from regbias.data.registry import packaged_dataset

    corpus = packaged_dataset("sentiment140").read(data_dir)
    us = corpus.groups["us"]
    order = np.random.default_rng(seed).permutation(len(us))
    rows, start = [], 0
    for group, size in {**SIZES, "us": len(us) - sum(SIZES.values())}.items():
        for i in order[start : start + size]:
            rows.append((us.texts[i], int(us.labels[i]), group))
        start += size
    pool = corpus.train
    keep = np.random.default_rng(seed + 1).choice(len(pool), 6000, replace=False)
    rows += [(pool.texts[i], int(pool.labels[i]), "train") for i in keep]
    table = pd.DataFrame(rows, columns=["text", "label", "group"])
    if shift:
        table = _plant_shift(table, data_dir, seed)
    if flip > 0:
        table = _flip_labels(table, flip_group, flip, seed)
    return table


def _flip_labels(table: pd.DataFrame, group: str, share: float, seed: int) -> pd.DataFrame:
    """A share of one group's labels flipped (0 <-> 1), its texts unchanged: a planted gap."""
    rows = table.index[table["group"] == group]
    chosen = np.random.default_rng(seed + 7).choice(rows, round(share * len(rows)), False)
    table.loc[chosen, "label"] = 1 - table.loc[chosen, "label"]
    return table


def _plant_shift(table: pd.DataFrame, data_dir: Path, seed: int) -> pd.DataFrame:
    """ZA's texts become Reuters sentences (labels kept): a real difference in domain."""
    from regbias.data.registry import packaged_dataset

    reuters = packaged_dataset("reuters21578").read(data_dir)
    sentences = [s.strip() for d in reuters.train.texts for s in d.split(". ") if len(s) > 40]
    za = table.index[table["group"] == "za"]
    chosen = np.random.default_rng(seed).choice(len(sentences), len(za), replace=False)
    table.loc[za, "text"] = [sentences[i][:200] for i in chosen]
    return table


def run_sweep(
    csv: Path, seeds: int, work: Path, code: Path, extra: list[str]
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(code / "src")}
    command = [
        sys.executable,
        str(code / "run.py"),
        "-m",
        f"seed=range({seeds})",
        "dataset=csv",
        f"dataset.path={csv}",
        "dataset.groups=[au,ca,nz,uk,us,za]",
        f"tracking.uri=sqlite:///{work}/mlruns.db",
        f"tracking.artifact_root={work}/mlruns",
        f"hydra.sweep.dir={work}/multirun",
        *extra,
    ]
    return subprocess.run(command, env=env, capture_output=True, text=True, cwd=work)


def _parent_folder(work: Path, name: str) -> Path:
    client = MlflowClient(f"sqlite:///{work}/mlruns.db")
    experiments = [e.experiment_id for e in client.search_experiments()]
    (parent,) = client.search_runs(experiments, "tags.`regbias.role` = 'sweep'")
    return Path(client.download_artifacts(parent.info.run_id, name, str(work / "dl")))


def _interval(hits: int, n: int) -> str:
    low, high = stats.binomtest(hits, n).proportion_ci(0.95)
    return f"{hits}/{n} = {hits / n:.3f} (95% CI {low:.3f}-{high:.3f})"


def _histogram(p: np.ndarray, bins: int = 10) -> str:
    counts = np.histogram(p, bins=bins, range=(0, 1))[0]
    return " ".join(f"{c:2d}" for c in counts) + "   (p in tenths, 0-0.1 first)"


def rates(work: Path) -> list[str]:
    """The test of record, then per secondary distance test: pairs called different, raw p."""
    pairs = pd.read_csv(
        _parent_folder(work, "analysis") / "pairwise.csv", keep_default_na=False, na_values=[""]
    )
    lines = []
    if "pair_test_p" in pairs.columns:  # the test of record: the verdicts of the study
        p = pairs["pair_test_p"].to_numpy(dtype=np.float64)
        p = p[np.isfinite(p)]
        found = int(pairs["pair_test_differs"].astype(str).str.lower().eq("true").sum())
        lines += [
            f"  test of record: raw p <= 0.05: {_interval(int(np.sum(p <= 0.05)), len(p))}; "
            f"differs (Holm within its family): {found}",
            f"    histogram of raw p: {_histogram(p)}",
        ]
    if "perf_test_p" in pairs.columns:  # the performance test of record
        p = pairs["perf_test_p"].to_numpy(dtype=np.float64)
        p = p[np.isfinite(p)]
        differs = pairs["perf_test_differs"].astype(str).str.lower().eq("true")
        found = ", ".join(f"{a}-{b}" for a, b in pairs.loc[differs, ["group_a", "group_b"]].values)
        at05, at01 = (_interval(int(np.sum(p <= a)), len(p)) for a in (0.05, 0.01))
        lines += [
            f"  performance test of record: raw p <= 0.05: {at05}; raw p <= 0.01: {at01}; "
            f"differs (Holm within its family): {int(differs.sum())} ({found or 'none'})",
            f"    histogram of raw p: {_histogram(p)}",
        ]
    if "pair_test_differs" in pairs.columns:
        differs = pairs["pair_test_differs"].astype(str).str.lower().eq("true")
        found = ", ".join(f"{a}-{b}" for a, b in pairs.loc[differs, ["group_a", "group_b"]].values)
        lines.append(f"  distance test of record differs: {found or 'none'}")
    for column in sorted(c for c in pairs.columns if c.startswith("p_above_noise_dist_")):
        name = column.removeprefix("p_above_noise_dist_")
        p = pairs[column].to_numpy(dtype=np.float64)
        p = p[np.isfinite(p)]
        adjusted = pairs.get(f"p_adjusted_dist_{name}")
        line = f"  {name}: raw p <= 0.05: {_interval(int(np.sum(p <= 0.05)), len(p))}"
        if adjusted is not None:
            line += f"; adjusted p <= 0.05: {int(np.sum(adjusted.to_numpy() <= 0.05))}"
        lines += [line, f"    histogram of raw p: {_histogram(p)}"]
    correlations = _parent_folder(work, "analysis") / "correlations.csv"
    if correlations.exists():
        found = pd.read_csv(correlations)
        marked = next(c for c in ("spearman_p_maxt", "spearman_p_holm") if c in found.columns)
        raw = float((found["spearman_p_perm"] <= 0.05).mean())
        survived = int((found[marked] <= 0.05).sum())
        lines.append(f"  correlations p_perm <= 0.05: {raw:.3g}; surviving {marked}: {survived}")
    return lines


def power(work: Path, code: Path, data_dir: str) -> int:
    """``task=power`` on the real data; prints its summary."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(code / "src")}
    env["REGBIAS_DATA_DIR"] = data_dir
    command = [
        sys.executable,
        str(code / "run.py"),
        "task=power",
        f"tracking.uri=sqlite:///{work}/mlruns.db",
        f"tracking.artifact_root={work}/mlruns",
        f"hydra.run.dir={work}/outputs",
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=work)
    print(result.stdout[result.stdout.find("regbias: power") :] or result.stderr[-3000:])
    return result.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--shift", action="store_true")
    parser.add_argument("--power", action="store_true", help="run task=power on the real data")
    parser.add_argument(
        "--distances-only", action="store_true", help="skip fine-tuning (no correlations)"
    )
    parser.add_argument("--flip", type=float, default=0.0, help="flip this share of labels")
    parser.add_argument("--flip-group", default="za")
    parser.add_argument("--splits", type=int, default=1, help="independent splits, one sweep each")
    parser.add_argument(
        "--performance-only", action="store_true", help="skip the distance suite (measure I)"
    )
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--data-dir", default=os.environ.get("REGBIAS_DATA_DIR", "data"))
    args = parser.parse_args()
    if args.power:
        work = Path(tempfile.mkdtemp(prefix="regbias-null-"))
        raise SystemExit(power(work, args.code.resolve(), args.data_dir))
    extra = ["finetune.enabled=false"] if args.distances_only else []
    extra += ["distance.enabled=false"] if args.performance_only else []
    label = "planted shift (za = Reuters)" if args.shift else "planted null (US split)"
    if args.flip:
        label = f"planted gap ({args.flip:.0%} of {args.flip_group}'s labels flipped)"
    for split in range(args.split_seed, args.split_seed + args.splits):
        work = Path(tempfile.mkdtemp(prefix="regbias-null-"))
        csv = work / "null.csv"
        table = null_table(Path(args.data_dir), split, args.shift, args.flip, args.flip_group)
        table.to_csv(csv, index=False)
        start = time.perf_counter()
        result = run_sweep(csv, args.seeds, work, args.code.resolve(), extra)
        if result.returncode != 0:
            print(result.stderr[-3000:])
            raise SystemExit(result.returncode)
        took = time.perf_counter() - start
        print(f"{label}, split {split}, {args.seeds} seeds, {took:.0f} s, runs in {work}")
        for line in rates(work):
            print(line, flush=True)


if __name__ == "__main__":
    main()
