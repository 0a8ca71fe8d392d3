"""Planted mixtures: the false-positive rate at no mixture, power that grows with the share."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from regbias.distances.lda import LdaSettings
from regbias.distances.power import (
    PlantDesign,
    PowerResult,
    PowerSettings,
    passage_bank,
    plant_power,
)
from regbias.errors import ConfigError, SampleSizeError

DIM = 6


def vector(text: str, shift: float) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    return rng.normal(size=DIM) + shift


def lookup(tokens: bool):
    """Token clouds (2 points a word) or pooled vectors; donor words ('d...') are shifted."""

    def embed(texts: list[str]) -> dict[str, np.ndarray]:
        out = {}
        for text in texts:
            words = text.split()
            points = np.stack([vector(w + s, 0.8 * w.startswith("d")) for w in words for s in "xy"])
            out[text] = points if tokens else points.mean(axis=0)
        return out

    return embed


def run(shares: list[float], plants: int) -> PowerResult:
    source = passage_bank([f"s{i}" for i in range(400)], 5, 0)
    donor = passage_bank([f"d{i}" for i in range(200)], 5, 0)
    design = PlantDesign(
        passages=12, repetitions=3, short_texts=10, long_passages=6, lda_passages=10, n_pairs=3
    )
    rng = np.random.default_rng(0)
    others = [{g: rng.normal(size=(10, DIM)) + k for k, g in enumerate("xyz")} for _ in range(2)]
    rows = plant_power(
        source,
        donor,
        design,
        tokens=lookup(True),
        pooled=lookup(False),
        lda_others=others,
        lda=LdaSettings(3, "eigen", "auto", relabellings=99),
        relabellings={"energy_short": 99, "energy_long": 99, "lda": 99},
        relabel_seed=0,
        settings=PowerSettings(shares=shares, plants=plants),
        progress=False,
    )
    return PowerResult(rows, design, "s", "d")


def test_power_grows_with_the_share_and_is_reported_per_distance():
    result = run([0.25, 1.0], plants=12)
    rates = result.rates()
    assert set(rates["distance"]) == {"energy_short", "energy_long", "lda"}
    assert sorted(set(rates["share"])) == [0.0, 0.25, 1.0]
    for _, part in rates.groupby("distance"):
        by_share = part.set_index("share")["power_unadjusted"]
        assert by_share[1.0] >= 0.9 and by_share[0.0] <= 0.25
        assert by_share[1.0] >= by_share[0.25] >= by_share[0.0] - 0.1
    detectable = result.detectable()
    assert all(share in (0.25, 1.0) for share in detectable.values())
    assert "mixture with 80% power" in result.sentences()["energy_long"]


def test_no_mixture_keeps_the_false_positive_rate():
    from scipy import stats

    result = run([1.0], plants=70)
    null = result.plants[result.plants["share"] == 0]
    assert len(null) == 3 * 70
    p = null["p"].to_numpy()
    low, high = stats.binom.ppf([0.0005, 0.9995], len(p), 0.05) / len(p)
    assert low <= np.mean(p <= 0.05) <= high


def test_banks_must_hold_two_pseudo_groups():
    source = passage_bank([f"s{i}" for i in range(20)], 5, 0)
    design = PlantDesign(3, 1, 2, 1, None, 1)
    with pytest.raises(SampleSizeError, match=r"analysis\.power\.source"):
        plant_power(
            source,
            source,
            design,
            tokens=lookup(True),
            pooled=None,
            lda_others=None,
            lda=None,
            relabellings={"energy_short": 9},
            relabel_seed=0,
            settings=PowerSettings(plants=1),
            progress=False,
        )


def test_settings_refuse_shares_outside_zero_one():
    with pytest.raises(ConfigError, match="shares"):
        PowerSettings(shares=[0.0, 1.5])
