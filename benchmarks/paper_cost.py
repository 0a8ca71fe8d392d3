"""What ``experiment=paper`` costs: measured on this machine, projected for a 5-seed sweep.

Measures, through regbias's own code on the real data:

- one repetition of the paper preset's distance stage (tokens: all, 100 texts a draw, the
  exact solver, floors, energy and LDA tests) for a subset of the groups (default: us, uk,
  one pair);
- one epoch of full fine-tuning (``finetune.mode=full``, MiniLM) on a subset of the
  16,000-tweet training sample, and the prediction of as many tweets.

Then projects a job and a 5-seed sweep from the per-unit costs: exact solves are CPU work
(POT, one core each, as many at once as cores and memory allow: ``exact_workers``), the rest
scales with pairs or texts. For the GPU host (16 cores, one H200) the CPU parts scale with the
cores at this machine's per-core speed, and the torch parts (fine-tuning, embedding) by
``--gpu-speedup`` (an assumption until ``benchmarks/gpu_check.sh`` measures them there).

    python benchmarks/paper_cost.py                     # ~5 min on a quiet 2-core machine
    python benchmarks/paper_cost.py --json cost.json --finetune-texts 512
    python benchmarks/paper_cost.py --skip-distance     # fine-tuning only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from regbias.app.settings import read_settings
from regbias.config_files import CONFIG_DIR
from regbias.data.draws import evaluation_draws
from regbias.data.groups import BASELINE
from regbias.distances.sinkhorn.exact import BYTES_PER_ENTRY, MEMORY_SHARE
from regbias.distances.suite import run_distance_suite
from regbias.embeddings.cache import EmbeddingCache
from regbias.performance.predict import predict_proba
from regbias.performance.stage import evaluation_size
from regbias.performance.trainer import EncoderParts, train_model
from regbias.study.pipeline import prepare, study_encoder
from regbias.study.settings import StudySettings

HOST_CORES = 16
HOST_MEMORY_GB = 128
SEEDS = 5


def compose(*overrides: str) -> StudySettings:
    """The shipped config with ``experiment=paper`` and ``overrides`` (Hydra compose API)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = hydra_compose("config", overrides=["experiment=paper", *overrides])
    return read_settings(cfg)


def timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def measure_distance(groups: list[str]) -> dict[str, Any]:
    """One repetition of the paper's distance stage for ``groups`` (their pairs only)."""
    settings = compose(
        f"dataset.groups=[{','.join(groups)}]",
        "distance.repetitions=1",
        f"distance.lda.n_components={min(3, len(groups) - 1)}",  # at most groups - 1
        "finetune.enabled=false",
    )
    _, draws = prepare(settings)
    encoder = study_encoder(settings)
    cache = EmbeddingCache(Path(os.environ.get("REGBIAS_CACHE_DIR", ".cache/regbias")))
    suite, wall = timed(
        lambda: run_distance_suite(draws, encoder, cache, settings.distance, seed=0)
    )
    points = {k: int(v.config.get("n_points_padded", 0)) for k, v in suite.matrices.items()}
    return {
        "groups": groups,
        "pairs": len(groups) * (len(groups) - 1) // 2,
        "wall_s": wall,
        "timings_s": dict(suite.timings),
        "padded_points": points,
        "texts_embedded": len(draws.distinct_texts(list(draws.texts))),
        "peak_rss_gb": peak_rss_gb(),
        "cores": os.cpu_count() or 1,
        "memory_gb": _memory_gb(),
    }


def measure_finetune(n_texts: int) -> dict[str, Any]:
    """One epoch of full fine-tuning on ``n_texts`` training tweets, then their prediction."""
    settings = compose("finetune.max_epochs=1", "distance.enabled=false")
    study, _ = prepare(settings)
    encoder = study_encoder(settings)
    parts = EncoderParts.from_encoder(encoder)
    texts = list(study.training.texts[:n_texts])
    labels = np.asarray(study.training.labels[:n_texts])
    n_val = max(1, n_texts // 10)
    model, train_s = timed(
        lambda: train_model(
            texts[n_val:],
            labels[n_val:],
            texts[:n_val],
            labels[:n_val],
            settings.finetune,
            settings.trainer,
            encoder=parts,
        )
    )
    _, predict_s = timed(lambda: predict_proba(model, texts))
    return {
        "train_texts": n_texts - n_val,
        "val_texts": n_val,
        "epoch_s": train_s,
        "predict_texts": n_texts,
        "predict_s": predict_s,
        "device": settings.trainer.device_kind(),
        "precision": settings.trainer.resolved_precision(),
    }


def paper_sizes() -> dict[str, Any]:
    """The counts a paper job runs: groups, pairs, repetitions, models, texts to predict."""
    settings = compose()
    study, _ = prepare(settings)
    groups = {g: t for g, t in study.groups.items() if g != BASELINE}
    finetune = settings.finetune
    evaluation, policy = finetune.evaluation, settings.sampling.policy
    size = evaluation_size(evaluation, groups, policy)
    scored = sum(  # the distinct texts a model predicts (every draw's texts, once)
        len(
            np.unique(
                np.concatenate(evaluation_draws(g, len(t), size, evaluation.repetitions, 0, policy))
            )
        )
        for g, t in groups.items()
    )
    n_groups = len(study.groups)
    train = finetune.sample_size * (finetune.k_folds - 1) // finetune.k_folds
    return {
        "groups": n_groups,
        "pairs": n_groups * (n_groups - 1) // 2,
        "repetitions": settings.distance.repetitions,
        "models_per_job": finetune.k_folds,
        "epochs": finetune.max_epochs,
        "train_texts_per_model": int(train * (1 - finetune.val_fraction)),
        "val_texts_per_model": int(train * finetune.val_fraction),
        "test_texts_per_model": finetune.sample_size // finetune.k_folds,
        "eval_texts_per_model": int(scored),
        "energy_relabellings": settings.distance.methods["energy"].relabellings,
        "sinkhorn_relabellings": settings.distance.methods["sinkhorn"].relabellings,
    }


def workers(cores: int, memory_gb: float, points: int) -> int:
    """Exact solves at once (``exact_workers``' rule) for ``points`` x ``points`` problems."""
    fit = int(MEMORY_SHARE * memory_gb * 2**30 // (BYTES_PER_ENTRY * points * points))
    return max(1, min(cores, fit))


def project(
    distance: dict[str, Any] | None,
    finetune: dict[str, Any] | None,
    sizes: dict[str, Any],
    machine: dict[str, float],
) -> dict[str, float]:
    """Seconds of one job's stages on ``machine`` (cores, memory_gb, torch_speedup)."""
    out: dict[str, float] = {}
    reps, pairs, groups = sizes["repetitions"], sizes["pairs"], sizes["groups"]
    if distance is not None:
        t, measured_pairs = distance["timings_s"], distance["pairs"]
        for kind in ("short", "long"):
            name = f"sinkhorn_{kind}"
            if name not in t:
                continue
            points = distance["padded_points"].get(name, 0) or 1
            # The measured pairs ran ``workers`` at a time here: the time of one solve.
            here = workers(distance["cores"], distance["memory_gb"], points)
            one = t[name] / math.ceil(measured_pairs / here)
            w = workers(int(machine["cores"]), machine["memory_gb"], points)
            solves = reps * (pairs + groups)  # each pair, each group's floor, per repetition
            out[name] = math.ceil(solves / w) * one
            if sizes["sinkhorn_relabellings"]:
                out[f"{name}_relabellings"] = (
                    math.ceil(reps * pairs * sizes["sinkhorn_relabellings"] / w) * one
                )
        cpu_scale = distance["cores"] / machine["cores"]  # numpy and BLAS on all cores
        # Energy and LDA: linear in the pairs (their relabellings); an upper bound for the
        # block sums, which grow with the texts of all groups.
        for name in ("energy_short", "energy_long", "energy_sentence", "lda"):
            if name in t:
                out[name] = reps * t[name] * pairs / measured_pairs * cpu_scale
        # Every text is embedded once (cached): the pools of the groups, not the repetitions.
        embed = sum(t.get(k, 0.0) for k in ("embed", "embed_tokens", "embed_pooled"))
        out["embed"] = embed * groups / len(distance["groups"]) / machine["torch_speedup"]
    if finetune is not None:
        per_train = finetune["epoch_s"] / (finetune["train_texts"] + finetune["val_texts"])
        per_predict = finetune["predict_s"] / finetune["predict_texts"]
        epoch = per_train * sizes["train_texts_per_model"]
        epoch += per_predict * sizes["val_texts_per_model"]
        predict = per_predict * (sizes["test_texts_per_model"] + sizes["eval_texts_per_model"])
        model = sizes["epochs"] * epoch + predict
        out["finetune"] = sizes["models_per_job"] * model / machine["torch_speedup"]
    return out


def hours(seconds: float) -> str:
    return f"{seconds / 3600:8.2f} h"


def print_projection(label: str, stages: dict[str, float]) -> None:
    job = sum(stages.values())
    print(f"\n{label}")
    for name, seconds in sorted(stages.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<30} {hours(seconds)} a job")
    print(f"  {'one job':<30} {hours(job)}")
    print(f"  {'5-seed sweep (jobs in turn)':<30} {hours(SEEDS * job)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", nargs="+", default=["us", "uk"])
    parser.add_argument("--finetune-texts", type=int, default=256)
    parser.add_argument("--skip-distance", action="store_true")
    parser.add_argument("--skip-finetune", action="store_true")
    parser.add_argument(
        "--gpu-speedup",
        type=float,
        default=50.0,
        help="torch work on one H200 vs this machine (assumed; gpu_check.sh measures it)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    sizes = paper_sizes()
    print("paper job:", json.dumps(sizes))
    distance = None if args.skip_distance else measure_distance(args.groups)
    if distance is not None:
        print("\nmeasured: one repetition of the distance stage,", " vs ".join(args.groups))
        for name, seconds in distance["timings_s"].items():
            print(f"  {name:<30} {seconds:8.1f} s")
        rss = distance["peak_rss_gb"]
        print(f"  {'wall':<30} {distance['wall_s']:8.1f} s  (peak RSS {rss:.1f} GB)")
    finetune = None if args.skip_finetune else measure_finetune(args.finetune_texts)
    if finetune is not None:
        print(
            f"\nmeasured: full fine-tuning, one epoch on {finetune['train_texts']} tweets "
            f"(+{finetune['val_texts']} validation): {finetune['epoch_s']:.1f} s; predicting "
            f"{finetune['predict_texts']}: {finetune['predict_s']:.1f} s ({finetune['device']}, "
            f"{finetune['precision']})"
        )
    here = {"cores": float(os.cpu_count() or 1), "memory_gb": _memory_gb(), "torch_speedup": 1.0}
    host = {"cores": HOST_CORES, "memory_gb": HOST_MEMORY_GB, "torch_speedup": args.gpu_speedup}
    projected_here = project(distance, finetune, sizes, here)
    projected_host = project(distance, finetune, sizes, host)
    print_projection(f"projected on this machine ({here['cores']:.0f} cores)", projected_here)
    print_projection(
        f"projected on the GPU host ({HOST_CORES} cores, {HOST_MEMORY_GB} GB, one H200; torch "
        f"work {args.gpu_speedup:g}x this machine: assumed)",
        projected_host,
    )
    if distance is not None and not sizes["sinkhorn_relabellings"]:
        tested = project(distance, None, {**sizes, "sinkhorn_relabellings": 99}, host)
        extra = sum(v for k, v in tested.items() if k.endswith("_relabellings"))
        print(f"\n(Sinkhorn's pair test with 99 relabellings would add {hours(extra)} a job there)")
    if args.json:
        figures = {
            "sizes": sizes,
            "distance": distance,
            "finetune": finetune,
            "projected_here_s": projected_here,
            "projected_host_s": projected_host,
            "gpu_speedup_assumed": args.gpu_speedup,
        }
        args.json.write_text(json.dumps(figures, indent=2))


def _memory_gb() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


if __name__ == "__main__":
    main()
