"""The encoder contrast on simulated studies at the real group sizes: nulls, coverage, power.

Six regions at the default sweep's sizes (au 2,160, ca 1,830, nz 330, uk 6,400, us 17,400,
za 250, no cap), their true means on a line ``shift`` apart in ``d`` dimensions with unit
noise; both encoders embed the same texts, as the comparison page's do
(:func:`regbias.analysis.encoders.separation.contrast_encoders`, 15 region pairs). Scenarios:

- ``copies``: the second encoder is a scaled, rotated and shifted copy of the first (the true
  difference is 0, the estimate 0 up to rounding);
- ``shared``: the same law up to scale and rotation, correlated text by text (the second
  keeps half the first's noise and adds its own: the test's null) at ``shift`` 0.3 and at 0
  (zero separation);
- ``spread``: zero separation (every true separation 0 in both encoders), the second
  encoder a rotated copy that spreads za 2 and nz 1.5 times wider (the replicates' bias,
  ``tr S_a / n_a + tr S_b / n_b`` over the spread, then differs between the encoders);
- ``planted``: the second encoder adds noise of variance ``v`` (its separations are the
  first's over ``1 + v``).

Prints, with 95% Wilson intervals (pairs within a study are not independent, so the pair
rows' intervals are too narrow): the share of pairs with raw p at most 0.05 and 0.01 and
Holm-"differs", of studies with any pair or the mean "differs", the intervals' coverage of
the true difference (pairs and mean), their mean width over the width the estimates' spread
across studies calls for (``2 z sd``), and the intervals' mid-point minus the estimate.
Run it with ``PYTHONPATH`` at another checkout's ``src`` for its numbers (before/after)::

    python benchmarks/encoder_contrast_rates.py --workers 8
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.stats import binomtest, norm

from regbias.analysis.encoders.separation import contrast_encoders
from regbias.analysis.pairs.embedding import EmbeddingTestSettings
from regbias.analysis.pairs.pairwise import PRIMARY_FAMILY

SIZES = {"au": 2160, "ca": 1830, "nz": 330, "uk": 6400, "us": 17400, "za": 250}
#: Only the cap (none: every text) and seed (of a cap) choose the contrast's texts.
SETTINGS = EmbeddingTestSettings(True, "mean", 99, None, None, 0, seed=0)


@dataclass(frozen=True)
class Outcome:
    """One simulated study's contrast: per region pair and for their mean."""

    truth: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray
    differs: np.ndarray
    mean_truth: float
    mean: dict[str, float]


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    return np.linalg.qr(rng.standard_normal((d, d)))[0]


def study(kind: str, shift: float, v: float, d: int, bootstrap: int, seed: int) -> Outcome:
    """One simulated study of ``kind`` (the module) and the page's contrast of its encoders."""
    rng = np.random.default_rng([seed, len(kind), int(1000 * (shift + v))])
    offsets = np.repeat(np.arange(len(SIZES)), list(SIZES.values()))
    mu = np.zeros((len(offsets), d))
    mu[:, 0] = shift * offsets
    noise = rng.standard_normal(mu.shape)
    first = mu + noise
    if kind == "copies":
        second = rng.uniform(0.1, 10) * first @ _rotation(rng, d) + rng.normal(0, 5, d)
    elif kind == "spread":
        wider = np.where(offsets == 5, 2.0, np.where(offsets == 2, 1.5, 1.0))
        second = (mu + wider[:, None] * noise) @ _rotation(rng, d)
    elif kind == "shared":
        own = rng.standard_normal(mu.shape)
        second = 2 * (mu + (noise + own) / np.sqrt(2)) @ _rotation(rng, d)
    else:
        second = 3 * (first + np.sqrt(v) * rng.standard_normal(mu.shape))
    texts = {g: [f"{g}:{i}" for i in range(n)] for g, n in SIZES.items()}
    where = {t: k for k, t in enumerate(t for names in texts.values() for t in names)}

    def encoder(x: np.ndarray):
        return lambda ts: x[[where[t] for t in ts]]

    (contrast,) = contrast_encoders(
        texts, {"A": encoder(first), "B": encoder(second)}, SETTINGS,
        n_bootstrap=bootstrap, seed=seed,
    )  # fmt: skip
    t = contrast.table[contrast.table["family"] == PRIMARY_FAMILY]
    a = t["group_a"].map(list(SIZES).index).to_numpy()
    b = t["group_b"].map(list(SIZES).index).to_numpy()
    true_first = (shift * (a - b)) ** 2 / d
    truth = true_first - true_first / (1 + v) if kind == "planted" else 0 * true_first
    return Outcome(
        truth, t["difference"].to_numpy(), t["ci_low"].to_numpy(), t["ci_high"].to_numpy(),
        t["p"].to_numpy(), t["differs"].to_numpy(bool), float(truth.mean()), contrast.mean,
    )  # fmt: skip


def rate(hits: np.ndarray) -> str:
    """``k/n = share [Wilson 95%]``."""
    k, n = int(np.sum(hits)), int(np.size(hits))
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return f"{k}/{n} = {k / n:.3f} [{ci.low:.3f}-{ci.high:.3f}]"


def report(name: str, outcomes: list[Outcome], confidence: float = 0.95) -> None:
    """The scenario's rates, coverage and widths (the module)."""
    fields = ("truth", "estimate", "low", "high", "p", "differs")
    stack = {f: np.stack([getattr(o, f) for o in outcomes]) for f in fields}
    keys = ("difference", "ci_low", "ci_high", "p", "differs")
    mean = {k: np.array([o.mean[k] for o in outcomes]) for k in keys}
    mean_truth = np.array([o.mean_truth for o in outcomes])
    z = 2 * norm.ppf((1 + confidence) / 2)
    pair_width = (stack["high"] - stack["low"]).mean(0) / (z * stack["estimate"].std(0))
    mean_width = (mean["ci_high"] - mean["ci_low"]).mean() / (z * mean["difference"].std())
    mid = (stack["high"] + stack["low"]) / 2 - stack["estimate"]
    print(f"\n== {name}: {len(outcomes)} studies, true mean difference {mean_truth.mean():.4g}")
    print(f"  pairs raw p <= 0.05      {rate(stack['p'] <= 0.05)}")
    print(f"  pairs raw p <= 0.01      {rate(stack['p'] <= 0.01)}")
    print(f"  pairs differs (Holm)     {rate(stack['differs'])}")
    print(f"  studies any pair differs {rate(stack['differs'].any(axis=1))}")
    print(f"  mean differs             {rate(mean['differs'] > 0)}")
    print(f"  mean p <= 0.01           {rate(mean['p'] <= 0.01)}")
    if name.startswith("copies"):  # rounding: the intervals are ulps wide
        print(f"  largest |estimate| {np.abs(stack['estimate']).max():.1e}")
        return
    covered = (stack["low"] <= stack["truth"]) & (stack["truth"] <= stack["high"])
    print(f"  pair interval coverage   {rate(covered)}")
    mean_cover = (mean["ci_low"] <= mean_truth) & (mean_truth <= mean["ci_high"])
    print(f"  mean interval coverage   {rate(mean_cover)}")
    print(
        f"  width / (2 z sd): pairs {np.median(pair_width):.2f} (median; "
        f"{pair_width.min():.2f}-{pair_width.max():.2f}), mean {mean_width:.2f}"
    )
    print(
        f"  interval mid-point - estimate: mean {mid.mean():+.2e}, largest {np.abs(mid).max():.2e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nulls", type=int, default=200, help="studies of each shared-law null")
    parser.add_argument("--studies", type=int, default=100, help="studies of the others")
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--bootstrap", type=int, default=999)
    parser.add_argument("--dims", type=int, default=8)
    parser.add_argument("--planted", type=float, nargs="+", default=[0.02, 0.05])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="scenario names to run")
    args = parser.parse_args()
    scenarios = [("copies", "copies", 0.3, 0.0, args.copies)]
    scenarios += [("shared, shift 0.3", "shared", 0.3, 0.0, args.nulls)]
    scenarios += [("shared, shift 0 (zero separation)", "shared", 0.0, 0.0, args.studies)]
    scenarios += [("spread, shift 0 (za, nz wider in B)", "spread", 0.0, 0.0, args.nulls)]
    scenarios += [(f"planted v={v:g}", "planted", 0.3, v, args.studies) for v in args.planted]
    with ProcessPoolExecutor(args.workers) as pool:
        for name, kind, shift, v, runs in scenarios:
            if args.only and not any(name.startswith(o) for o in args.only):
                continue
            start = time.time()
            one = partial(study, kind, shift, v, args.dims, args.bootstrap)
            report(name, list(pool.map(one, range(runs))))
            print(f"  ({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
