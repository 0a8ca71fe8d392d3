"""Item 7 of issue 36: too few plants for an 80% power claim say "no power statement possible".

With ``analysis.power.plants=1`` the Clopper-Pearson bound can never reach 80% (it needs at
least 17 plants, all detected), yet the output read "detects no planted share up to 100% with
80% power", as if measured.
"""

from __future__ import annotations

import pandas as pd

from regbias.analysis.power.embedding import PowerResult, fewest_plants


def result(plants: int) -> PowerResult:
    rows = [
        {"n_a": 50, "n_b": 50, "family_pairs": 1, "share": share, "plant": k, "p": 0.001}
        for share in (0.0, 0.4, 1.0)
        for k in range(plants)
    ]
    return PowerResult(pd.DataFrame(rows), 0.05, "mean", 999, "us", "uk")


def test_one_plant_a_share_gives_no_power_statement():
    sentence = result(1).sentence(50, 50)
    assert sentence.startswith("no power statement possible: with 1 plant(s) a share")
    assert "needs at least 17" in sentence and "analysis.power.plants" in sentence
    assert "detects no planted share" not in sentence


def test_seventeen_plants_all_detected_reach_the_bound():
    assert fewest_plants() == 17
    assert (
        result(17).sentence(50, 50)
        == "would detect a mixture of >= 40% of uk-like texts with 80% power"
    )
    assert result(16).sentence(50, 50).startswith("no power statement possible")
