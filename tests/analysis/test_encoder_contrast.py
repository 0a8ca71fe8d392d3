"""Two encoders compared on the same texts: planted differences, planted nulls, invariances."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from regbias.analysis.encoders.separation import (
    bootstrap_p,
    contrast_encoders,
    contrast_pairs,
    separation_replicates,
)
from regbias.analysis.pairs.embedding import EmbeddingTestSettings
from tests.conftest import packaged

SETTINGS = packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=9, cap=10_000)
GROUPS = ("au", "ca", "nz", "uk", "us", "za")
D = 6


def _study(rng: np.random.Generator, sizes: dict[str, int], shift: float = 0.5):
    """Texts ``g:i`` with latent vectors: group means on a line, ``shift`` apart; unit noise."""
    means = {g: np.eye(D)[0] * shift * i for i, g in enumerate(sizes)}
    texts = {g: [f"{g}:{i}" for i in range(n)] for g, n in sizes.items()}
    latent = {t: means[g] + rng.standard_normal(D) for g, names in texts.items() for t in names}
    return texts, latent


def _encoder(latent, transform):
    cache = {t: transform(v, t) for t, v in latent.items()}
    return lambda texts: np.stack([cache[t] for t in texts])


def _true_mean_separation(sizes, shift: float, noise: float) -> float:
    """Region pairs' mean of |mu_a - mu_b|^2 / tr(Sigma) for means on a line, spread ``noise``."""
    names = list(sizes)
    values = [
        (shift * (i - j)) ** 2 / (D * noise)
        for i in range(len(names))
        for j in range(i + 1, len(names))
    ]
    return float(np.mean(values))


def test_separation_is_scale_rotation_and_shift_free() -> None:
    rng = np.random.default_rng(0)
    x = {"a": rng.standard_normal((50, 5)) + 1, "b": rng.standard_normal((70, 5))}
    rotation, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    y = {g: 7.5 * v @ rotation + 3.0 for g, v in x.items()}
    capped, pairs = contrast_pairs(
        {g: [f"{g}{i}" for i in range(len(v))] for g, v in x.items()}, SETTINGS, ()
    )
    ones = {g: np.ones((1, len(t))) for g, t in capped.items()}
    assert np.allclose(separation_replicates(x, pairs, ones), separation_replicates(y, pairs, ones))


def test_a_capped_reference_group_brings_each_regions_own_rest() -> None:
    """Against a region, ``mixed`` (larger than the cap) is capped after the region's texts go.

    Its side then holds texts outside its plain capped set: each must still find its vector.
    """
    rng = np.random.default_rng(4)
    texts, latent = _study(rng, {"au": 40, "uk": 40})
    texts["mixed"] = texts["au"][:30] + texts["uk"][:30]
    capped_settings = packaged(
        EmbeddingTestSettings, "analysis.tests.embedding", relabellings=9, cap=25
    )
    groups, pairs = contrast_pairs(texts, capped_settings, ["mixed"])
    assert len(groups["mixed"]) > 25  # the plain cap's set and each region's rest
    for pair in pairs:
        for group, side in ((pair.group_a, pair.side_a), (pair.group_b, pair.side_b)):
            assert len(side) == 25
            if pair.group_b == "mixed" and group == "mixed":
                own = set(texts[pair.group_a])
                assert not own & {groups["mixed"][i] for i in side}
    vectors = _encoder(latent, lambda v, t: v)
    (contrast,) = contrast_encoders(
        texts,
        {"one": vectors, "two": vectors},
        capped_settings,
        references=["mixed"],
        n_bootstrap=49,
    )
    assert len(contrast.table) == 3 and np.allclose(contrast.table["difference"], 0)


def test_separation_does_not_grow_as_groups_shrink() -> None:
    """The U-statistic: at 30 texts a group the estimate's mean is the same as at 3,000."""
    rng = np.random.default_rng(1)
    truth = 0.3**2 / D
    for n in (30, 3000):
        values = []
        for _ in range(300 if n == 30 else 20):
            x = {"a": rng.standard_normal((n, D)), "b": rng.standard_normal((n, D))}
            x["b"][:, 0] += 0.3
            _, pairs = contrast_pairs({g: [f"{g}{i}" for i in range(n)] for g in x}, SETTINGS, ())
            ones = {g: np.ones((1, n)) for g in x}
            values.append(separation_replicates(x, pairs, ones)[0, 0])
        se = np.std(values) / np.sqrt(len(values))
        assert abs(np.mean(values) - truth) < 4 * se + 0.002, n


def test_the_interval_is_centred_on_the_estimate_not_the_replicates_bias() -> None:
    """A replicate's U-statistic sits ``tr S_a / n_a + tr S_b / n_b`` above its sample's.

    Both encoders put the groups 0 apart; the second spreads the small group 3 times wider, so
    the two biases differ by about 0.04. Re-centred, the interval's mid-point stays near the
    estimate (within the skew of 50 dimensions' squared norms) and the interval covers the
    true 0; not re-centred, it sat 0.05 below and left 0 out.
    """
    rng = np.random.default_rng(5)
    sizes, d = {"a": 20, "b": 400}, 50
    texts = {g: [f"{g}:{i}" for i in range(n)] for g, n in sizes.items()}
    latent = {t: rng.standard_normal(d) for names in texts.values() for t in names}
    wide = _encoder(latent, lambda v, t: 3 * v if t.startswith("a") else v)
    encoders = {"A": _encoder(latent, lambda v, t: v), "B": wide}
    (contrast,) = contrast_encoders(texts, encoders, SETTINGS, n_bootstrap=999)
    row = contrast.table.iloc[0]
    assert abs((row["ci_low"] + row["ci_high"]) / 2 - row["difference"]) < 0.025
    assert row["ci_low"] < 0 < row["ci_high"] and row["p"] > 0.05


def test_a_difference_at_rounding_level_is_a_tie() -> None:
    """Scaled, rotated and shifted copies: differences of a few ulps get p = 1, every pair."""
    rng = np.random.default_rng(6)
    texts, latent = _study(rng, dict.fromkeys(GROUPS, 60))
    rotation, _ = np.linalg.qr(rng.standard_normal((D, D)))
    copy = _encoder(latent, lambda v, t: 0.37 * v @ rotation + 11.0)
    encoders = {"A": _encoder(latent, lambda v, t: v), "B": copy}
    (contrast,) = contrast_encoders(texts, encoders, SETTINGS, n_bootstrap=199)
    assert np.abs(contrast.table["difference"]).max() < 1e-12
    assert (contrast.table["p"] == 1).all() and contrast.mean["p"] == 1


def test_bootstrap_p_is_twice_the_smaller_tail() -> None:
    replicates = np.array([[-1.0], [1.0], [2.0], [3.0]])
    assert bootstrap_p(replicates)[0] == pytest.approx(2 * 2 / 5)


def test_a_planted_difference_is_found_and_covered() -> None:
    """Encoder B adds noise of variance 1 to A's latent: its true separation is half A's."""
    sizes = dict.fromkeys(GROUPS, 200)
    covered, found = 0, 0
    truth = _true_mean_separation(sizes, 0.5, 1.0) - _true_mean_separation(sizes, 0.5, 2.0)
    for sim in range(40):
        rng = np.random.default_rng(100 + sim)
        texts, latent = _study(rng, sizes)
        noise = {t: rng.standard_normal(D) for t in latent}
        first = _encoder(latent, lambda v, t: v)
        second = _encoder(latent, lambda v, t, noise=noise: 3 * (v + noise[t]))
        (contrast,) = contrast_encoders(
            texts, {"A": first, "B": second}, SETTINGS, n_bootstrap=299, seed=sim
        )
        mean = contrast.mean
        covered += mean["ci_low"] <= truth <= mean["ci_high"]
        found += bool(mean["differs"]) and mean["difference"] > 0
    assert found == 40
    # 95% intervals: at least 34 of 40 cover (the lower 1% binomial bound is 34).
    assert covered >= stats.binom.ppf(0.01, 40, 0.95)
    assert "A separates the regions more than B" in contrast.sentence()


def _null_rates(simulations: int) -> tuple[int, int]:
    """Two encoders with the same true separations: the second keeps half the first's noise.

    Text ``t`` of group ``g`` is ``mu_g + e_t`` in the first encoder and
    ``2 R (mu_g + (e_t + f_t) / sqrt(2))`` in the second (``f_t`` its own noise, ``R`` a
    rotation): the same law of vectors up to scale and rotation, correlated text by text.
    """
    sizes = {"au": 120, "ca": 100, "nz": 60, "uk": 150, "us": 200, "za": 50}
    mean_hits = pair_hits = 0
    for sim in range(simulations):
        rng = np.random.default_rng(1000 + sim)
        texts, latent = _study(rng, sizes, shift=0.3)
        means = {g: np.eye(D)[0] * 0.3 * i for i, g in enumerate(sizes)}
        own = {t: rng.standard_normal(D) for t in latent}
        rotation, _ = np.linalg.qr(rng.standard_normal((D, D)))

        def second_of(v: np.ndarray, t: str, means=means, own=own, rotation=rotation):
            mu = means[t.split(":")[0]]
            return 2.0 * (mu + (v - mu + own[t]) / np.sqrt(2)) @ rotation

        encoders = {"A": _encoder(latent, lambda v, t: v), "B": _encoder(latent, second_of)}
        (contrast,) = contrast_encoders(texts, encoders, SETTINGS, n_bootstrap=199, seed=sim)
        mean_hits += bool(contrast.mean["differs"])
        pair_hits += bool(contrast.table["differs"].any())
    return mean_hits, pair_hits


def test_identical_laws_show_no_difference() -> None:
    """200 planted nulls: the mean's verdict and Holm over 15 pairs stay at the level."""
    mean_hits, pair_hits = _null_rates(200)
    # At least 95% say "no difference"; twice the nominal rate (20 of 200) would fail.
    assert mean_hits <= 10
    assert pair_hits <= 10


def test_one_encoder_against_itself_differs_nowhere() -> None:
    rng = np.random.default_rng(3)
    texts, latent = _study(rng, dict.fromkeys(GROUPS, 40))
    same = _encoder(latent, lambda v, t: v)
    scaled = _encoder(latent, lambda v, t: 5 * v)
    (contrast,) = contrast_encoders(texts, {"A": same, "B": scaled}, SETTINGS, n_bootstrap=99)
    assert np.allclose(contrast.table["difference"], 0, atol=1e-9)
    assert not contrast.mean["differs"]
    assert "no difference shown" in contrast.sentence()
