"""Coverage of the counterfactual track's share interval, in simulated groups of known truth.

A and B are Gaussian point clouds (``--dims`` dimensions, each coordinate of sd
``1/sqrt(dims)``, as unit sentence vectors spread) whose means differ by ``D`` of length
``--gap``. A's texts are rewritten at the rate ``changed / n_A`` (how many is drawn): each
moves by ``s D`` plus noise of per-coordinate sd ``tau`` times theirs. The truth is the
population share ``s * changed / n_A``; a study whose difference is too close to its noise has
no share (:data:`~regbias.analysis.counterfactual.encoder_shift.CLEAR_OF_NOISE`; nor does one
with a group under :data:`~regbias.analysis.counterfactual.encoder_shift.MIN_GROUP_TEXTS`
texts), and how often that happens is printed. Each
regime runs ``--studies`` studies through the track's own share and bootstrap
(:mod:`regbias.analysis.counterfactual.encoder_shift`) and prints how often the 95% interval
covers the truth (with its Wilson interval), its mean width and the estimate's mean.

Regimes: the real sizes and the real ratio of ``|D|^2`` to its noise of four directions, noisier
shifts, a small B (250 texts) just above the threshold, no shift at all, and a ``D`` within its
noise (us-nz's ratio: refused).

    python benchmarks/counterfactual_coverage.py --studies 300
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from regbias.analysis.counterfactual.encoder_shift import share_with_interval

NAN = float("nan")


@dataclass(frozen=True)
class Regime:
    """Sizes, how far ``D`` stands above its noise, and a changed text's share and noise.

    ``ratio``: ``|D|^2`` over its noise ``1/n_A + 1/n_B`` (each coordinate's sd is
    ``1/sqrt(dims)``); on MiniLM's vectors of the shipped tweets it is 18 for us-uk, 5 for
    us-au, 1.5 for us-nz and 0.2 for us-za (the last two get no share).
    """

    name: str
    n_a: int
    n_b: int
    changed: int
    ratio: float
    share: float = 1.0
    tau: float = 0.3

    @property
    def gap(self) -> float:
        """``|D|``."""
        return float(np.sqrt(self.ratio * (1 / self.n_a + 1 / self.n_b)))


REGIMES = (
    Regime("us>uk: real sizes and ratio (18)", 17426, 6387, 846, 18),
    Regime("uk>us: real sizes and ratio (18)", 6387, 17426, 183, 18),
    Regime("us>au sizes, ratio 16", 17426, 2163, 846, 16),
    Regime("au>us sizes, ratio 16", 2163, 17426, 56, 16),
    Regime("us>uk, noisy shifts (tau 1)", 17426, 6387, 846, 18, tau=1.0),
    Regime("small B (250), ratio 16", 6387, 250, 183, 16),
    Regime("no shift (share 0)", 6387, 17426, 183, 18, share=0.0),
    Regime("us>au: real ratio (5), refused", 17426, 2163, 846, 5),
)


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a share ``hits / n``."""
    share = hits / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def study(regime: Regime, dims: int, resamples: int, rng: np.random.Generator) -> tuple[float, ...]:
    """One simulated study: the share, its interval and the truth."""
    sd = 1 / np.sqrt(dims)
    direction = np.zeros(dims)
    direction[0] = regime.gap
    a = rng.normal(0, sd, (regime.n_a, dims))
    b = rng.normal(0, sd, (regime.n_b, dims)) + direction
    # A's texts hold a rewritable word at a rate: how many do is drawn with the sample.
    n = rng.binomial(regime.n_a, regime.changed / regime.n_a)
    shift = regime.share * direction + rng.normal(0, regime.tau * sd, (n, dims))
    changed = rng.choice(regime.n_a, n, replace=False)
    share, low, high = share_with_interval(a, b, changed, shift, resamples, rng)
    truth = regime.share * regime.changed / regime.n_a
    return share, low, high, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--studies", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=199)
    parser.add_argument("--dims", type=int, default=32)
    args = parser.parse_args()
    rng = np.random.default_rng(20261206)
    print("regime | truth | no share | mean estimate | coverage [Wilson 95%] | mean width")
    for regime in REGIMES:
        runs = range(args.studies)
        found = np.array([study(regime, args.dims, args.resamples, rng) for _ in runs])
        measured = found[np.isfinite(found[:, 0])]
        share, low, high, truth = measured.T
        covered = (low <= truth) & (truth <= high)
        c_low, c_high = wilson(int(covered.sum()), max(len(covered), 1))
        print(
            f"{regime.name} | {found[0, 3]:.4f} | {1 - len(measured) / len(found):.0%} | "
            f"{share.mean():.4f} | {covered.mean():.3f} [{c_low:.3f}, {c_high:.3f}] | "
            f"{(high - low).mean():.4f}"
        )


if __name__ == "__main__":
    main()
