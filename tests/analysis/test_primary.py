"""The primary hypothesis: regions only, one-sided, exact, alone at alpha; wired into analyse()."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from regbias.analysis.correlation.primary import expected_direction, primary_test, region_pairs
from regbias.analysis.correlation.result import correlation_frame
from regbias.analysis.correlation.table import correlations
from regbias.analysis.study import AnalysisSettings, analyse
from regbias.data.registry import packaged_dataset
from regbias.errors import ConfigError
from tests.analysis.test_robustness import study_on_a_line
from tests.conftest import packaged

REGIONS = ["au", "ca", "nz", "uk", "us", "za"]
#: Sentiment140's declared reference groups (``mixed``, ``baseline``), as its YAML says.
QUICK = {"reference_groups": ["baseline", "mixed"]}


def _table(groups: list[str], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    table = pd.DataFrame(rows, columns=["group_a", "group_b"])
    table["dist_sinkhorn_long"] = rng.uniform(size=len(table))
    table["gap_accuracy"] = table["dist_sinkhorn_long"] + rng.normal(0, 0.3, len(table))
    table["dcor_accuracy"] = -table["dist_sinkhorn_long"] + rng.normal(0, 0.3, len(table))
    return table


def _brute_force_one_sided(table: pd.DataFrame, performance: str, sign: float) -> float:
    """Exact one-sided Mantel p: every relabelling of the performance matrix, scipy's rho."""
    groups = list(dict.fromkeys(table[["group_a", "group_b"]].to_numpy().ravel()))
    index = {g: i for i, g in enumerate(groups)}
    a, b = table.group_a.map(index).to_numpy(), table.group_b.map(index).to_numpy()
    y = np.zeros((len(groups), len(groups)))
    y[a, b] = y[b, a] = table[performance]
    x = table["dist_sinkhorn_long"].to_numpy()
    observed = sign * stats.spearmanr(x, table[performance]).statistic
    perms = [np.array(p) for p in itertools.permutations(range(len(groups)))]
    hits = sum(
        sign * stats.spearmanr(x, y[p[a], p[b]]).statistic >= observed - 1e-12 for p in perms
    )
    return hits / len(perms)


def test_the_primary_test_uses_the_regions_only() -> None:
    table = _table([*REGIONS, "mixed", "baseline"], 0)
    found = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", **QUICK)
    regions = table[~table.group_a.isin(["mixed", "baseline"])]
    regions = regions[~regions.group_b.isin(["mixed", "baseline"])]
    assert found.groups == tuple(REGIONS) and found.left_out == ("baseline", "mixed")
    assert found.n_groups == 6 and found.n_pairs == 15 == len(regions)
    assert found.exact and found.null_size == 720
    assert found.rho == pytest.approx(
        stats.spearmanr(regions.dist_sinkhorn_long, regions.gap_accuracy).statistic
    )
    # The mixed and baseline pairs do not enter: changing them changes nothing.
    changed = table.copy()
    other = ~table.index.isin(regions.index)
    changed.loc[other, "gap_accuracy"] = np.random.default_rng(1).normal(size=other.sum())
    again = primary_test(changed, "dist_sinkhorn_long", "gap_accuracy", **QUICK)
    assert (again.rho, again.p_value) == (found.rho, found.p_value)
    # The groups left out are the ones declared: baseline counted as a region joins the test.
    declared = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", reference_groups=["mixed"])
    assert declared.groups == (*REGIONS, "baseline") and declared.left_out == ("mixed",)


def test_each_corpus_declares_its_reference_groups() -> None:
    assert packaged_dataset("sentiment140").reference_groups == QUICK["reference_groups"]
    reuters = packaged_dataset("reuters21578").reference_groups
    assert set(reuters) == {"multiple", "test"}
    table = _table(["ca", "au", "uk", "us", "multiple", "test"], 2)
    assert len(region_pairs(table, reuters)) == 6
    assert packaged_dataset("csv", path="any.csv").reference_groups == ["baseline"]
    # The analysis takes the configured corpus's (an interpolation, not a copy).
    on_reuters = packaged(AnalysisSettings, "analysis", "dataset=reuters21578")
    assert on_reuters.reference_groups == reuters


@pytest.mark.parametrize("seed", [0, 3])
def test_one_sided_exact_p_equals_brute_force(seed: int) -> None:
    table = _table(REGIONS[:5], seed)
    for performance, sign in (("gap_accuracy", 1.0), ("dcor_accuracy", -1.0)):
        found = primary_test(table, "dist_sinkhorn_long", performance, **QUICK)
        assert found.direction == ("greater" if sign > 0 else "less")
        assert found.p_value == pytest.approx(_brute_force_one_sided(table, performance, sign))
        assert found.p_value * 120 == pytest.approx(round(found.p_value * 120))
    # A chosen direction overrides the column's; two-sided is the correlation table's p.
    wrong = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", direction="less", **QUICK)
    assert wrong.p_value == pytest.approx(_brute_force_one_sided(table, "gap_accuracy", -1.0))
    assert wrong.p_value > 0.5
    both = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", direction="two-sided", **QUICK)
    table_p = correlations(table, ["dist_sinkhorn_long"], ["gap_accuracy"]).spearman_p_perm[0]
    assert both.p_value == pytest.approx(table_p)


def test_direction_follows_the_column_and_untestable_cases_say_why() -> None:
    assert expected_direction("gap_roc_auc") == "greater"
    assert expected_direction("dcor_accuracy") == "less"
    assert expected_direction("excess_x") == "two-sided"
    table = _table(["au", "ca", "nz", "mixed", "baseline"], 0)
    few = primary_test(table, "dist_sinkhorn_long", "gap_accuracy", **QUICK)
    assert "3 regions" in few.note and np.isnan(few.p_value) and not few.significant
    absent = primary_test(table, "dist_lda", "gap_accuracy", **QUICK)
    assert "not measured" in absent.note and "dist_lda" in absent.note
    with pytest.raises(ConfigError, match=r"analysis\.correlation\.primary_direction"):
        packaged(AnalysisSettings, "analysis", correlation={"primary_direction": "up"})
    with pytest.raises(ConfigError, match=r"analysis\.power\.primary\.couplings"):
        packaged(AnalysisSettings, "analysis", power={"primary": {"couplings": [1.5]}})
    with pytest.raises(ConfigError, match=r"analysis\.power\.primary\.dimensions"):
        packaged(AnalysisSettings, "analysis", power={"primary": {"dimensions": 0}})


def test_analyse_carries_the_primary_test_apart_from_the_adjusted_family() -> None:
    groups = [*REGIONS, "mixed", "baseline"]
    settings = packaged(
        AnalysisSettings,
        "analysis",
        correlation={"relabellings": 99},
        robustness={"resamples": 0},
        power={"primary": {"simulations": 50}},
    )
    analysis = analyse(study_on_a_line(groups, 8), settings)
    primary = analysis.primary
    assert primary is not None and primary.n_pairs == 15 and primary.direction == "greater"
    assert primary.left_out == ("baseline", "mixed")
    assert primary.power is not None and primary.power.n_groups == 6
    assert list(primary.power.table.coupling) == pytest.approx(settings.power.primary.couplings)
    assert primary.power.dimensions == settings.power.primary.dimensions
    # The table's row of the same pair is on all 28 pairs and is a secondary test.
    row = (
        correlation_frame(analysis.correlations)
        .set_index(["distance", "performance"])
        .loc[("dist_sinkhorn_long", "gap_accuracy")]
    )
    assert row.n_pairs == 28 and row.maxt_method == "maxt"
    assert row.spearman_p_maxt >= row.spearman_p_perm
    frame = primary.to_frame()
    assert frame.loc[0, "n_pairs"] == 15 and frame.loc[0, "direction"] == "greater"
    assert frame.loc[0, "reachable_rho"] == primary.power.reachable_rho
    none = analyse(
        study_on_a_line(groups, 8),
        packaged(
            AnalysisSettings, "analysis", correlation={"primary": None}, robustness={"resamples": 0}
        ),
    )
    assert none.primary is None


def test_the_primary_carries_its_own_interval_over_the_regions_pairs() -> None:
    """The primary's interval resamples the same 15 region pairs its rho is computed on."""
    from regbias.analysis.robustness.bootstrap import rho_replicates
    from regbias.report.findings import primary_sentence

    groups = [*REGIONS, "mixed", "baseline"]
    results = study_on_a_line(groups, 8)
    # The reference groups break the line: far by distance, level in accuracy.
    distance = results.distances["sinkhorn_long"]
    for index in (6, 7):
        distance.repetitions[:, index, :6] += 3.0
        distance.repetitions[:, :6, index] += 3.0
    pooled = type(distance).from_repetitions("sinkhorn_long", groups, distance.repetitions)
    results.distances["sinkhorn_long"] = pooled
    settings = packaged(
        AnalysisSettings,
        "analysis",
        correlation={"relabellings": 99},
        robustness={"resamples": 300},
        power={"primary": {"simulations": 0}},
    )
    analysis = analyse(results, settings)
    primary = analysis.primary
    assert primary is not None and primary.confidence == settings.robustness.confidence
    assert primary.ci_low <= primary.rho <= primary.ci_high
    assert primary.rho > 0.6
    row = (
        correlation_frame(analysis.correlations)
        .set_index(["distance", "performance"])
        .loc[("dist_sinkhorn_long", "gap_accuracy")]
    )
    assert row.n_pairs == 28 and row.spearman_ci_high < primary.ci_low  # another statistic
    again = rho_replicates(
        analysis.pairwise,
        ("dist_sinkhorn_long", "gap_accuracy"),
        REGIONS,
        results.distances,
        results.per_model,
        n_bootstrap=300,
        seed=settings.seed,
    )
    interval = again.interval(settings.robustness.confidence)
    assert (*interval, again.note) == (primary.ci_low, primary.ci_high, primary.ci_note)
    sentence = primary_sentence(primary)
    assert f"interval for the measured rho {primary.ci_low:.2f} to {primary.ci_high:.2f}" in (
        sentence
    )
    assert "not the noise-free rho" in sentence and "whether there is an association" in sentence
    frame = primary.to_frame()
    assert frame.loc[0, "spearman_ci_low"] == primary.ci_low
    bare = packaged(AnalysisSettings, "analysis", robustness={"resamples": 0})
    untested = analyse(results, bare).primary
    assert untested is not None and np.isnan(untested.ci_low)
    assert "bootstrap interval" not in primary_sentence(untested)
