"""The planted null: do random splits of one region look like regions? (false-positive rate)

Six "regions" are random splits of the US tweets with the real regions' sizes (AU 2165,
CA 1840, NZ 329, UK 6446, ZA 250, and the rest as US); the general pool is the training group.
A sweep of the real pipeline (``dataset=csv``) then reports which pairs lie above the noise floor
and which correlations survive Holm: every such finding is a false positive. ``--shift`` plants
a real difference instead: ZA's tweets are replaced by Reuters sentences (another domain), so
its pairs should be above noise.

    python benchmarks/null_study.py --seeds 2            # prints the false-positive rates
    python benchmarks/null_study.py --seeds 2 --shift    # the planted shift

Figures, not assertions: it prints the fractions and where the runs are.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"au": 2165, "ca": 1840, "nz": 329, "uk": 6446, "za": 250}


def null_table(data_dir: Path, seed: int, shift: bool) -> pd.DataFrame:
    """US tweets split at random into the regions' sizes, plus the pool as ``train``."""
    from regbias.data.loading import DatasetSettings, load_corpus

    corpus = load_corpus(
        DatasetSettings(name="sentiment140", task="binary", unit="tweet"), data_dir
    )
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
    return table


def _plant_shift(table: pd.DataFrame, data_dir: Path, seed: int) -> pd.DataFrame:
    """ZA's texts become Reuters sentences (labels kept): a real difference in domain."""
    from regbias.data.loading import DatasetSettings, load_corpus

    reuters = load_corpus(
        DatasetSettings(name="reuters21578", task="multilabel", unit="document"), data_dir
    )
    sentences = [s.strip() for d in reuters.train.texts for s in d.split(". ") if len(s) > 40]
    za = table.index[table["group"] == "za"]
    chosen = np.random.default_rng(seed).choice(len(sentences), len(za), replace=False)
    table.loc[za, "text"] = [sentences[i][:200] for i in chosen]
    return table


def run_sweep(csv: Path, seeds: int, work: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [
        sys.executable,
        str(ROOT / "run.py"),
        "-m",
        f"seed=range({seeds})",
        "dataset=csv",
        f"dataset.path={csv}",
        "dataset.groups=[au,ca,nz,uk,us,za]",
        f"tracking.uri=sqlite:///{work}/mlruns.db",
        f"tracking.artifact_root={work}/mlruns",
        f"hydra.sweep.dir={work}/multirun",
    ]
    return subprocess.run(command, env=env, capture_output=True, text=True, cwd=work)


def rates(work: Path) -> dict[str, float]:
    """Share of pairs above noise per distance, and correlations that survive Holm."""
    client = MlflowClient(f"sqlite:///{work}/mlruns.db")
    experiments = [e.experiment_id for e in client.search_experiments()]
    (parent,) = client.search_runs(experiments, "tags.`regbias.role` = 'sweep'")
    folder = Path(client.download_artifacts(parent.info.run_id, "analysis", str(work / "dl")))
    pairs = pd.read_csv(folder / "pairwise.csv")
    found = pd.read_csv(folder / "correlations.csv")
    out = {}
    for column in [c for c in pairs.columns if c.startswith("p_above_noise_")]:
        out[f"above noise ({column.removeprefix('p_above_noise_')})"] = float(
            (pairs[column] <= 0.05).mean()
        )
    out["correlations p_perm <= 0.05"] = float((found["spearman_p_perm"] <= 0.05).mean())
    out["correlations surviving Holm"] = float((found["spearman_p_holm"] <= 0.05).sum())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--shift", action="store_true")
    parser.add_argument("--data-dir", default=os.environ.get("REGBIAS_DATA_DIR", "data"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="regbias-null-"))
    csv = work / "null.csv"
    null_table(Path(args.data_dir), args.split_seed, args.shift).to_csv(csv, index=False)
    result = run_sweep(csv, args.seeds, work)
    if result.returncode != 0:
        print(result.stderr[-3000:])
        raise SystemExit(result.returncode)
    label = "planted shift (za = Reuters)" if args.shift else "planted null (US split)"
    print(f"{label}, {args.seeds} seeds, runs in {work}")
    for name, value in rates(work).items():
        print(f"  {name}: {value:.3g}")


if __name__ == "__main__":
    main()
