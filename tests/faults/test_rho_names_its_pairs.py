"""Item 5 of issue 36: on the encoder comparison every rho names its pair set.

For minilm_l6 the Findings gave ``rho dist_sinkhorn_long ~ gap_accuracy = 0.232`` (all 28
pairs) while "Encoders side by side" gave the primary under the same name as -0.007 (regions
only, 15 pairs).
"""

from __future__ import annotations

from dataclasses import replace

from regbias.analysis.correlation.result import correlation_frame, correlation_rows
from regbias.report.encoders import encoder_evidence, encoders_markdown
from tests.report.test_encoders import PRIMARY, TWIN, variant


def test_the_primary_and_the_all_groups_row_are_named_apart():
    written = variant("minilm_l6", TWIN, null=0.0, rho=-0.007, p=0.5, primary_pairs=15)
    correlations = written.analysis.correlations
    assert correlations is not None
    frame = correlation_frame(correlations)
    row = correlation_rows(frame.assign(spearman_rho=0.232, spearman_p_maxt=0.01, n_pairs=28))
    written = replace(written, analysis=replace(written.analysis, correlations=row))
    (evidence,) = encoder_evidence({"encoder=minilm_l6": ("a", written)}, PRIMARY)
    assert evidence.primary_name == "dist_sinkhorn_long ~ gap_accuracy (regions only, 15 pairs)"
    assert list(evidence.correlations) == [
        "dist_sinkhorn_long ~ gap_accuracy (all groups, 28 pairs)"
    ]
    page = encoders_markdown([evidence])
    assert "| dist_sinkhorn_long ~ gap_accuracy (regions only, 15 pairs) | -0.007 |" in page
    assert "| dist_sinkhorn_long ~ gap_accuracy | " not in page


def test_the_sweeps_table_names_its_rhos_pair_set(tmp_path):
    from regbias.report import comparison
    from regbias.report.headline import read_headline
    from tests.app.test_user_path import report_folder

    headlines = {"encoder=minilm_l6": read_headline(report_folder(tmp_path / "a", 0.232))}
    table = comparison.comparison_table(headlines)
    rhos = [c for c in table.columns if c.startswith("rho ")]
    assert rhos == ["rho dist_sinkhorn_long ~ gap_accuracy (all groups)"]
    page = comparison.comparison_markdown(table, {"encoder=minilm_l6": "a"})
    # The per-distance rhos are an exploratory table (issue 37), each row naming its pair set.
    assert "| dist_sinkhorn_long | gap_accuracy (all groups) | 0.232 |" in page
