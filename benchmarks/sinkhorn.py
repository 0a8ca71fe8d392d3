"""Time-to-accuracy of regbias's Sinkhorn divergence against geomloss and exact OT (POT).

Needs the ``bench`` extra for geomloss (``pip install geomloss==0.3.1``). Run:

    python benchmarks/sinkhorn.py --clouds real          # MiniLM token clouds, n = 1000, 4000
    python benchmarks/sinkhorn.py --clouds gaussian
    python benchmarks/sinkhorn.py --clouds real --quick  # n = 1000, default and peers only
    python benchmarks/sinkhorn.py --clouds real --n 12800 --online   # paper scale (GPU)

Clouds. ``real``: the real-token vectors (all-MiniLM-L6-v2, d = 384) of US and UK tweets of the
study data, whole tweets drawn until a side holds ~n points (embeddings cached under
``$REGBIAS_CACHE_DIR``). ``gaussian``: x ~ N(0, I / 2d), y ~ N(mu, I / 2d), |mu| = 1.

Epsilons (OTT units, cost |x - y|^2): ``laptop`` = 5% of the pair's mean pooled cost (the
default config), ``paper`` = 0.005. Truth: exact OT (POT ``emd2``; its debiased divergence is
W(x, y), exact self-transport costs 0) at the paper's epsilon, where the entropic bias is
below 5e-4 on these clouds; a tightly converged regbias run (threshold 1e-5) at the laptop's.
geomloss uses |x - y|^2 / 2 with blur^2 = epsilon there, so blur = sqrt(eps / 2) and its
values are doubled. Times: ``compile`` is the first call (XLA compile + run), ``warm`` a second.
The last line is the default's at n = 4000 (or the largest n) and the paper's epsilon.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from regbias.config_files import packaged
from regbias.distances.sinkhorn import (
    SinkhornSettings,
    mean_pooled_cost,
    resolve_settings,
    sinkhorn_divergence,
)

PAPER_EPSILON = 0.005
DIM = 384


@dataclass
class Row:
    """One solver on one pair of clouds at one epsilon."""

    name: str
    value: float
    compile_s: float
    warm_s: float | None = None
    converged: str = "-"
    iterations: str = "-"


def gaussian_clouds(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = np.sqrt(1.0 / (2 * DIM))
    shift = np.zeros(DIM)
    shift[0] = 1.0
    x = rng.normal(0.0, scale, (n, DIM))
    y = rng.normal(0.0, scale, (n, DIM)) + shift
    return x.astype(np.float32), y.astype(np.float32)


def real_clouds(sizes: list[int], seed: int = 0) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """US and UK token clouds of ~n real-token points each, through regbias's own readers."""
    from shipped import shipped_encoder

    from regbias.data.registry import packaged_dataset
    from regbias.embeddings.cache import EmbeddingCache, embed_tokens
    from regbias.embeddings.encoder import load_encoder

    dataset = packaged_dataset("sentiment140")
    corpus = dataset.read(dataset.data_dir(None))
    encoder = load_encoder(shipped_encoder(), device="auto")
    cache = EmbeddingCache(Path(os.environ.get("REGBIAS_CACHE_DIR", ".cache/regbias")))
    rng = np.random.default_rng(seed)
    per_group = {}
    for group in ("us", "uk"):
        texts = corpus.groups[group].texts
        order = rng.permutation(len(texts))[: max(sizes) // 10 + 50]  # >= 10 tokens a tweet
        per_group[group] = embed_tokens(encoder, cache, [texts[i] for i in order])
    out = {}
    for n in sizes:
        clouds = []
        for group in ("us", "uk"):
            tokens = per_group[group]
            counts = np.cumsum([len(t) for t in tokens])
            clouds.append(np.concatenate(tokens[: int(np.searchsorted(counts, n)) + 1]))
        out[n] = (clouds[0], clouds[1])
    return out


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def exact_ot(x: np.ndarray, y: np.ndarray) -> float:
    from regbias.distances.sinkhorn.exact import exact_ot as solve

    return solve(x, y)[0]


def geomloss_divergence(x: np.ndarray, y: np.ndarray, epsilon: float) -> float:
    import torch
    from geomloss import SamplesLoss

    loss = SamplesLoss("sinkhorn", p=2, blur=np.sqrt(epsilon / 2), backend="tensorized")
    return 2.0 * float(loss(torch.from_numpy(x), torch.from_numpy(y)))


def ours(name: str, x: np.ndarray, y: np.ndarray, settings: SinkhornSettings, warm: bool) -> Row:
    """One regbias setting; the warm (second) call only where the first took under a minute."""
    result, first = timed(lambda: sinkhorn_divergence(x, y, settings))
    warm = warm and first < 60
    second = timed(lambda: sinkhorn_divergence(x, y, settings))[1] if warm else None
    if resolve_settings(settings, [x, y]).solver == "exact":
        name += " -> exact"
    terms = (result.xy, result.xx, result.yy)
    return Row(
        name,
        result.divergence,
        first,
        second,
        f"{sum(t.converged for t in terms)}/3",
        "/".join(str(t.iterations) for t in terms),
    )


def variants(
    epsilon: float, args: argparse.Namespace, n: int, default_exact: bool
) -> dict[str, SinkhornSettings]:
    """regbias's default and the settings it was chosen against.

    Sinkhorn variants run at most ``--max-iterations`` (they stall at the paper's epsilon on
    real clouds); above n = 1000 only the previous default is compared, to keep a full run short.
    """
    default = packaged(SinkhornSettings, "distance", "sinkhorn", epsilon=epsilon)
    if args.quick:
        return {"regbias default": default}
    cap = args.max_iterations
    plain = replace(default, solver="sinkhorn", max_iterations=cap)
    out = {"regbias default": default}
    if default_exact:  # what the default's Sinkhorn settings alone would give
        out[f"regbias solver=sinkhorn (cap {cap})"] = plain
    else:  # the previous default: the same iterations with log-domain updates
        out["regbias updates=log (round-2 default)"] = replace(default, updates="log")
    first = replace(plain, anneal_start=0.1, momentum=None, updates="log")
    out[f"regbias first version: anneal from 10%, log (cap {cap})"] = first
    if n <= 1000:
        out[f"regbias no annealing, momentum 1.5 (cap {cap})"] = replace(plain, anneal=False)
        out[f"regbias anneal_decay 0.98 (cap {cap})"] = replace(plain, anneal_decay=0.98)
        out[f"regbias check every 5 (cap {cap})"] = replace(plain, inner_iterations=5)
    return out


def print_rows(rows: list[Row], reference: float, geomloss_s: float | None) -> None:
    head = f"  {'solver':<42} {'compile s':>9} {'warm s':>7} {'value':>10} {'rel.err':>9}"
    print(head + f" {'vs geomloss':>11} {'conv':>5}  iterations xy/xx/yy")
    for row in rows:
        best = row.warm_s if row.warm_s is not None else row.compile_s
        speed = f"{geomloss_s / best:10.2f}x" if geomloss_s else f"{'-':>11}"
        warm = f"{row.warm_s:7.2f}" if row.warm_s is not None else f"{'-':>7}"
        error = (row.value - reference) / reference
        print(
            f"  {row.name:<42} {row.compile_s:9.2f} {warm} {row.value:10.4f} {error:+9.1e}"
            f" {speed} {row.converged:>5}  {row.iterations}"
        )


def bench_pair(
    x: np.ndarray, y: np.ndarray, epsilon: float, label: str, args: argparse.Namespace, n: int
) -> tuple[Row, float, float | None]:
    """Every solver on one pair at one epsilon; returns the default's row, truth, geomloss time."""
    print(f"\n{label} epsilon {epsilon:.4g} (mean pooled cost {mean_pooled_cost([x, y]):.2f})")
    rows = []
    if label == "paper" and n <= args.exact_max_n:
        truth, seconds = timed(lambda: exact_ot(x, y))
        rows.append(Row("exact OT (POT emd2) = solver exact", truth, seconds, None, "1/1"))
    else:
        tight = replace(
            packaged(SinkhornSettings, "distance", "sinkhorn", epsilon=epsilon),
            threshold=1e-5,
            max_iterations=50_000,
        )
        rows.append(ours("reference (threshold 1e-5)", x, y, tight, warm=False))
        truth = rows[0].value
    geomloss_s = None
    if args.geomloss:
        geomloss_divergence(x[:64], y[:64], epsilon)  # torch warm-up, not a compile
        value, geomloss_s = timed(lambda: geomloss_divergence(x, y, epsilon))
        rows.append(Row(f"geomloss tensorized blur={np.sqrt(epsilon / 2):.3g}", value, geomloss_s))
    default_exact = (
        resolve_settings(
            packaged(SinkhornSettings, "distance", "sinkhorn", epsilon=epsilon), [x, y]
        ).solver
        == "exact"
    )
    for name, settings in variants(epsilon, args, n, default_exact).items():
        settings = replace(settings, batch_size=args.batch_size)
        if name != "regbias default" and resolve_settings(settings, [x, y]).solver != "sinkhorn":
            continue
        rows.append(ours(name, x, y, settings, warm=not args.no_warm))
    print_rows(rows, truth, geomloss_s)
    return next(r for r in rows if r.name.startswith("regbias default")), truth, geomloss_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clouds", choices=["real", "gaussian"], default="real")
    parser.add_argument("--n", type=int, nargs="+", default=None, help="points per side")
    parser.add_argument("--epsilon", choices=["laptop", "paper", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="n=1000, default and peers only")
    parser.add_argument("--no-warm", action="store_true", help="skip the second (warm) call")
    parser.add_argument("--exact-max-n", type=int, default=5000, help="POT emd2 up to this n")
    parser.add_argument("--batch-size", type=int, default=None, help="online mode: rows a time")
    parser.add_argument("--max-iterations", type=int, default=1000, help="cap of the variants")
    parser.add_argument("--no-geomloss", dest="geomloss", action="store_false")
    args = parser.parse_args()
    sizes = args.n or ([1000] if args.quick else [1000, 4000])
    pairs = real_clouds(sizes) if args.clouds == "real" else {n: gaussian_clouds(n) for n in sizes}
    last = None
    for n, (x, y) in pairs.items():
        print(f"\n=== {args.clouds} clouds, {len(x)} x {len(y)} points, d={x.shape[1]} ===")
        laptop = resolve_settings(
            packaged(SinkhornSettings, "distance", "sinkhorn", epsilon=None), [x, y]
        ).epsilon
        labels = {"laptop": laptop, "paper": PAPER_EPSILON}
        chosen = labels if args.epsilon == "both" else {args.epsilon: labels[args.epsilon]}
        for label, epsilon in chosen.items():
            last = (*bench_pair(x, y, float(epsilon), label, args, n), label, n)
    if last is not None:
        row, truth, geomloss_s, label, n = last
        best = row.warm_s if row.warm_s is not None else row.compile_s
        speed = f"{geomloss_s / best:.2f}x" if geomloss_s else "n/a"
        error = abs(row.value - truth) / abs(truth)
        print(f"(last line: n={n}, {label} epsilon)")
        print(
            f"default: speed vs geomloss {speed}, rel.err vs exact {error:.1e}, "
            f"converged {row.converged}"
        )


if __name__ == "__main__":
    main()
