"""Time-to-accuracy of regbias's Sinkhorn divergence against geomloss and POT.

Needs the ``bench`` extra (``pip install geomloss pot``). Run:

    python benchmarks/sinkhorn.py --n 1000 4000        # add 12800 on a big machine

Clouds: x ~ N(0, I / 2d), y ~ N(mu, I / 2d) with |mu| = 1 in d = 384, so costs |x - y|^2 are
O(1) (mean about 2) and the entropic bias at epsilon 0.005 is small next to the OT value.
Ground truth is exact OT (POT ``emd2``); the debiased divergence of exact OT is W(x, y) since
exact self-transport costs 0. All values are in units of |x - y|^2 (OTT's cost): geomloss uses
|x - y|^2 / 2 with blur^2 = epsilon there, so its values are doubled and blur 0.05 matches
OTT epsilon 0.005.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from regbias.distances.sinkhorn import SinkhornSettings, sinkhorn_divergence

EPSILON = 0.005
DIM = 384


def gaussian_clouds(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = np.sqrt(1.0 / (2 * DIM))
    shift = np.zeros(DIM)
    shift[0] = 1.0
    x = rng.normal(0.0, scale, (n, DIM))
    y = rng.normal(0.0, scale, (n, DIM)) + shift
    return x.astype(np.float32), y.astype(np.float32)


def timed(fn: Callable[[], float]) -> tuple[float, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def exact_ot(x: np.ndarray, y: np.ndarray) -> float:
    import ot

    cost = ot.dist(x.astype(np.float64), y.astype(np.float64))
    return float(ot.emd2([], [], cost, numItermax=10**8))


def geomloss_divergence(x: np.ndarray, y: np.ndarray) -> float:
    import torch
    from geomloss import SamplesLoss

    loss = SamplesLoss("sinkhorn", p=2, blur=np.sqrt(EPSILON / 2), backend="tensorized")
    return 2.0 * float(loss(torch.from_numpy(x), torch.from_numpy(y)))


def pot_divergence(x: np.ndarray, y: np.ndarray) -> float:
    import ot

    def term(u: np.ndarray, v: np.ndarray) -> float:
        cost = ot.dist(u.astype(np.float64), v.astype(np.float64))
        return float(
            ot.sinkhorn2(
                [], [], cost, EPSILON, method="sinkhorn_log", stopThr=1e-3, numItermax=5000
            )
        )

    return term(x, y) - 0.5 * (term(x, x) + term(y, y))


def ours(settings: SinkhornSettings) -> Callable[[np.ndarray, np.ndarray], float]:
    def run(x: np.ndarray, y: np.ndarray) -> float:
        result = sinkhorn_divergence(x, y, settings)
        flags = [t.converged for t in (result.xy, result.xx, result.yy)]
        iterations = [t.iterations for t in (result.xy, result.xx, result.yy)]
        print(f"      converged={flags} iterations={iterations}")
        return result.divergence

    return run


def report(name: str, value: float, seconds: float, truth: float, reference: float) -> None:
    error = (value - truth) / truth
    print(f"  {name:<34} {seconds:8.2f} s  value {value:.5f}  rel.err {error:+.2e}", end="")
    print(f"  speed vs geomloss {reference / seconds:5.2f}x")


def bench(n: int, with_pot: bool) -> None:
    x, y = gaussian_clouds(n)
    truth, t_exact = timed(lambda: exact_ot(x, y))
    print(f"n={n} d={DIM}: exact OT (POT emd2) {truth:.5f} in {t_exact:.2f} s")
    geomloss_divergence(x[:64], y[:64])  # torch warm-up, not a compile
    value, t_geom = timed(lambda: geomloss_divergence(x, y))
    report("geomloss tensorized blur=0.05", value, t_geom, truth, t_geom)
    default = SinkhornSettings(epsilon=EPSILON)
    candidates = {
        "regbias default (annealed)": default,
        "regbias anneal_decay=0.9": replace(default, anneal_decay=0.9),
        "regbias no annealing": replace(default, anneal=False),
        "regbias no annealing, momentum 1.5, check every 5": replace(
            default, anneal=False, momentum=1.5, inner_iterations=5
        ),
    }
    for name, settings in candidates.items():
        value, first = timed(lambda s=settings: ours(s)(x, y))
        report(f"{name}, compile+run", value, first, truth, t_geom)
        value, warm = timed(lambda s=settings: ours(s)(x, y))
        report(f"{name}, warm", value, warm, truth, t_geom)
    if with_pot:
        value, t_pot = timed(lambda: pot_divergence(x, y))
        report("POT sinkhorn_log (linear cost)", value, t_pot, truth, t_geom)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--pot-max-n", type=int, default=1000, help="POT entropic up to this n")
    args = parser.parse_args()
    for n in args.n:
        bench(n, with_pot=n <= args.pot_max_n)


if __name__ == "__main__":
    main()
