"""`task=analyze`: re-analyse any pairwise table; its bad inputs end in one clear line."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

from tests.app.test_cli_errors import assert_clean_failure
from tests.cli import run_job, runs

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]


def write_table(path, groups=GROUPS, **extra_columns):
    rng = np.random.default_rng(0)
    pairs = list(itertools.combinations(groups, 2))
    distance = rng.uniform(size=len(pairs))
    frame = pd.DataFrame(pairs, columns=["group_a", "group_b"])
    frame["dist_sinkhorn_long"] = distance
    frame["gap_accuracy"] = distance + rng.normal(scale=0.05, size=len(pairs))
    frame["dcor_accuracy"] = rng.uniform(size=len(pairs))
    for name, values in extra_columns.items():
        frame[name] = values
    frame.to_csv(path, index=False)
    return path


def test_analyze_writes_correlations_and_figures(tmp_path):
    table = write_table(tmp_path / "pairs.csv")
    done = run_job(
        tmp_path,
        "task=analyze",
        f"analysis.analyze.input={table}",
        "analysis.analyze.exclude_pairs=[nz-za]",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = runs(tmp_path)
    assert run.info.status == "FINISHED"
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns.db")
    local = client.download_artifacts(run.info.run_id, "analysis/correlations.csv", str(tmp_path))
    found = pd.read_csv(local)
    assert len(found) == 2  # one distance x two performance columns
    row = found.set_index("performance").loc["gap_accuracy"]
    assert row["n_pairs"] == 14 and row["spearman_rho"] > 0.8 and row["spearman_p_perm"] < 0.05
    assert row["spearman_p_holm"] >= row["spearman_p_perm"]
    figures = {a.path for a in client.list_artifacts(run.info.run_id, "figures")}
    assert "figures/correlations_spearman_rho.png" in figures
    # A bare table gets the group-removal checks (6 groups: 6 LOGO analyses), no bootstrap.
    local = client.download_artifacts(run.info.run_id, "analysis/robustness.csv", str(tmp_path))
    checks = pd.read_csv(local).set_index("performance")
    assert checks.loc["gap_accuracy", "loo_rho_min"] > 0.5
    assert np.isnan(checks.loc["gap_accuracy", "spearman_ci_low"])


def test_analyze_missing_column(tmp_path):
    table = write_table(tmp_path / "pairs.csv")
    done = run_job(
        tmp_path,
        "task=analyze",
        f"analysis.analyze.input={table}",
        "analysis.analyze.performance=[gap_auc]",
    )
    assert_clean_failure(tmp_path, done, "gap_auc")


def test_analyze_non_numeric_values(tmp_path):
    table = write_table(tmp_path / "pairs.csv", gap_f1=["high"] * 15)
    done = run_job(tmp_path, "task=analyze", f"analysis.analyze.input={table}")
    assert_clean_failure(tmp_path, done, "gap_f1", "high")


def test_analyze_needs_four_groups(tmp_path):
    table = write_table(tmp_path / "pairs.csv", groups=["au", "ca", "nz"])
    done = run_job(tmp_path, "task=analyze", f"analysis.analyze.input={table}")
    assert_clean_failure(tmp_path, done, "fewer than 4 groups")


def test_analyze_without_input(tmp_path):
    done = run_job(tmp_path, "task=analyze")
    assert_clean_failure(tmp_path, done, "analysis.analyze.input")
