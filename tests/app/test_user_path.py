"""The pieces of the end-of-run path: headline, comparison, names, UI helpers (no runs)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from regbias.app.parent import sweep_name
from regbias.distances.matrix import DistanceMatrix
from regbias.report import comparison
from regbias.report.findings_model import FINDINGS_JSON, Answer, Findings
from regbias.report.headline import read_headline
from regbias.study.timing import format_seconds
from regbias.tracking.ledger import JobRecord
from regbias.tracking.ui import shared_and_swept, ui_command, without_derived
from tests.conftest import compose_config


def report_folder(root, rho, scale=1.0):
    groups = ["au", "ca", "nz", "uk"]
    mean = np.array([[0, 1, 4, 2], [1, 0, 3, 5], [4, 3, 0, 6], [2, 5, 6, 0]], float) * scale
    matrix = DistanceMatrix(
        "sinkhorn_long",
        groups,
        mean,
        np.zeros_like(mean),
        2,
        repetitions=np.stack([mean, mean]),
    )
    (root / "distances").mkdir(parents=True)
    (root / "distances" / "sinkhorn_long.json").write_text(json.dumps(matrix.to_dict()))
    (root / "analysis").mkdir()
    pd.DataFrame(
        {
            "distance": ["dist_sinkhorn_long", "dist_sinkhorn_long"],
            "performance": ["gap_accuracy", "dcor_accuracy"],
            "n_pairs": [6, 6],
            "spearman_rho": [rho, 0.1],
            "spearman_p_perm": [0.02, 0.8],
            "kendall_tau": [0.5, 0.0],
            "kendall_p_perm": [0.03, 1.0],
        }
    ).to_csv(root / "analysis" / "correlations.csv", index=False)
    # The test of record: nz-uk differs with the largest z; au-ca is larger but within noise.
    pd.DataFrame(
        {
            "group_a": ["au", "nz", "ca"],
            "group_b": ["ca", "uk", "uk"],
            "family": "regions",
            "z": [30.0, 9.0, 4.0],
            "differs": [False, True, True],
        }
    ).to_csv(root / "analysis" / "pair_tests.csv", index=False)
    return root


def test_headline_from_tables(tmp_path):
    headline = read_headline(report_folder(tmp_path, -0.83))
    assert headline.findings is None  # no findings.json: the strongest correlations instead
    assert headline.lines()[0].startswith(
        "gap_accuracy vs dist_sinkhorn_long: Spearman rho = -0.83"
    )
    assert list(headline.pairs) == ["farthest differing"]  # no closest pair: not a finding
    assert headline.pairs["farthest differing"] == ("nz", "uk", 9.0, "test of record z")
    assert headline.metrics["corr/dist_sinkhorn_long/gap_accuracy/rho"] == -0.83
    assert headline.metrics["corr/dist_sinkhorn_long/gap_accuracy/p_perm"] == 0.02
    assert headline.metrics["dist_mean/sinkhorn_long"] == pytest.approx(3.5)


def test_the_farthest_differing_pair_is_the_largest_effect_not_the_largest_z(tmp_path):
    # z grows with the pair's sizes: ca-uk (two large groups) has the larger z, nz-uk the
    # larger size-free effect, and the effect names the farthest pair.
    root = report_folder(tmp_path, -0.83)
    table = pd.read_csv(root / "analysis" / "pair_tests.csv")
    table["effect"] = [0.5, 0.04, 0.01]
    table.to_csv(root / "analysis" / "pair_tests.csv", index=False)
    pairs = read_headline(root).pairs
    assert pairs["farthest differing"] == ("nz", "uk", 0.04, "test of record effect")


def test_headline_reads_the_findings_not_the_markdown(tmp_path):
    folder = report_folder(tmp_path, 0.5)
    findings = Findings(
        ("**Bottom line.** Nothing here is beyond noise.",),
        (Answer("Which region pairs differ?", "None of the `15` pairs", "a test", "Method"),),
        ("**Warning.** a \\<b\\> caveat",),
    )
    (folder / FINDINGS_JSON).write_text(json.dumps(findings.to_dict()))
    (folder / "report.md").write_text("# r\n\n## Findings\n\n- **Not this.** Markdown.\n")
    headline = read_headline(folder)
    assert headline.findings == findings
    assert headline.lines() == [
        "Bottom line. Nothing here is beyond noise.",
        "Which region pairs differ? None of the 15 pairs",
        "Warning. a <b> caveat",
    ]
    assert "Not this" not in headline.markdown() and "\\<" not in headline.markdown()
    assert "a &lt;b&gt; caveat" in headline.markdown()


def test_variants_are_labelled_by_what_sets_them_apart():
    records = [
        {"variant": "a", "overrides": "encoder=minilm_l6 seed=0 experiment=smoke"},
        {"variant": "a", "overrides": "encoder=minilm_l6 seed=1 experiment=smoke"},
        {"variant": "b", "overrides": "encoder=tiny seed=0 experiment=smoke"},
    ]
    assert comparison.variant_labels(_jobs(records)) == {
        "a": "encoder=minilm_l6",
        "b": "encoder=tiny",
    }


def test_variants_the_overrides_do_not_tell_apart_are_warned_of():
    """An edit under src/ mid-sweep: seeds 1-2 are another variant of the same encoder."""
    records = [
        {"variant": "3f714f4e00", "overrides": "encoder=minilm_l6 seed=0"},
        {"variant": "9a0b1c2d00", "overrides": "encoder=minilm_l6 seed=1"},
        {"variant": "9a0b1c2d00", "overrides": "encoder=minilm_l6 seed=2"},
        {"variant": "e7e7e7e700", "overrides": "encoder=mpnet_base seed=0"},
    ]
    (note,) = comparison.same_override_notes(_jobs(records))
    assert "encoder=minilm_l6 (3f714f4e) and encoder=minilm_l6 (9a0b1c2d)" in note
    assert "mpnet" not in note
    assert comparison.same_override_notes(_jobs(records[1:])) == []


def test_comparison_table_and_metrics(tmp_path):
    headlines = {
        "encoder=minilm_l6": read_headline(report_folder(tmp_path / "a", -0.8)),
        "encoder=tiny": read_headline(report_folder(tmp_path / "b", 0.2, scale=10)),
    }
    table = comparison.comparison_table(headlines)
    assert table.loc["encoder=tiny", "rho dist_sinkhorn_long ~ gap_accuracy (all groups)"] == 0.2
    assert table.loc["encoder=tiny", "mean sinkhorn_long"] == pytest.approx(35.0)
    metrics = comparison.comparison_metrics(headlines)
    assert metrics["variant/encoder_tiny/corr/dist_sinkhorn_long/gap_accuracy/rho"] == 0.2
    page = comparison.comparison_markdown(table, {"encoder=tiny": "variant-b"})
    assert "[variant-b/report.md](variant-b/report.md)" in page
    assert comparison.comparison_figure(table) is not None


def test_sweep_name_says_what_it_is():
    cfg = compose_config()
    jobs = [f"seed={s}" for s in range(5)]
    assert sweep_name(cfg, jobs) == "sentiment140 · minilm_l6 · default · 5 seeds"
    assert sweep_name(cfg, ["seed=range(3) encoder=minilm_l6,tiny experiment=smoke"]) == (
        "sentiment140 · minilm_l6, tiny · smoke · 3 seeds"
    )


def test_shared_and_swept_params():
    shared, swept = shared_and_swept([{"a": "1", "seed": "0"}, {"a": "1", "seed": "1"}])
    assert shared == {"a": "1"} and swept == {"seed": "0,1"}


def test_null_derived_keys_wait_for_their_value():
    resolved = {"distance": {"sinkhorn": {"epsilon": None, "batch_size": 4}}}
    assert without_derived(resolved) == {"distance": {"sinkhorn": {"batch_size": 4}}}
    fixed = {"distance": {"sinkhorn": {"epsilon": 0.005}}}
    assert without_derived(fixed) == fixed


def test_ui_command_names_an_absolute_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert (
        ui_command("sqlite:///mlruns.db")
        == f"mlflow ui --backend-store-uri sqlite:///{tmp_path}/mlruns.db"
    )


def test_format_seconds():
    assert [format_seconds(s) for s in (4.25, 185, 3720)] == ["4.2 s", "3 min 05 s", "1 h 02 min"]


def test_variants_alike_but_for_the_code_keep_apart():
    records = [
        {"variant": "aaaaaaaaaa", "overrides": "encoder=tiny seed=0"},
        {"variant": "bbbbbbbbbb", "overrides": "encoder=tiny seed=1"},
        {"variant": "cccccccccc", "overrides": "encoder=minilm_l6 seed=0"},
    ]
    labels = comparison.variant_labels(_jobs(records))
    assert labels == {
        "aaaaaaaaaa": "encoder=tiny (aaaaaaaa)",
        "bbbbbbbbbb": "encoder=tiny (bbbbbbbb)",
        "cccccccccc": "encoder=minilm_l6",
    }


def test_no_pair_is_named_when_no_tested_distance_finds_a_difference(tmp_path):
    folder = report_folder(tmp_path, 0.5)
    # The distances have no pair verdict: their extremes are estimates, not findings.
    tests = folder / "analysis" / "pair_tests.csv"
    table = pd.read_csv(tests)
    table["differs"] = False  # and the test of record finds no pair: none is named
    table.to_csv(tests, index=False)
    assert read_headline(folder).pairs == {}


def test_variants_that_differ_in_nothing_but_their_data_are_warned_of():
    """nz.csv edited between job 0 and job 1 of ``seed=range(2) experiment=smoke``."""
    records = [
        {"variant": "3f714f4e00", "overrides": "seed=0 experiment=smoke"},
        {"variant": "9a0b1c2d00", "overrides": "seed=1 experiment=smoke"},
    ]
    (note,) = comparison.same_override_notes(_jobs(records))
    assert "have the same overrides: they ran on other code or data" in note


def _jobs(records: list[dict[str, str]]) -> list[JobRecord]:
    """Job records as the ledger reads them."""
    return [JobRecord.of(r) for r in records]
