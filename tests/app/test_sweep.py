"""A real `-m` sweep: one parent run aggregating FINISHED children; resume skips finished jobs."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from tests.cli import run_cli, runs

SMOKE = ["-m", "seed=0,1", "experiment=smoke", "trainer.enable_progress_bar=false"]
N_METRICS = 7  # accuracy, roc_auc, precision/recall of each class, f1


def split(all_runs):
    parents = [r for r in all_runs if r.data.tags.get("regbias.role") == "sweep"]
    children = [r for r in all_runs if "mlflow.parentRunId" in r.data.tags]
    return parents, children


def artifact_text(workdir, run_id, path):
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    local = client.download_artifacts(run_id, path, str(workdir / "dl" / run_id))
    with open(local) as handle:
        return handle.read()


def artifacts(workdir, run_id, folder=None):
    client = MlflowClient(f"sqlite:///{workdir}/mlruns.db")
    return {a.path for a in client.list_artifacts(run_id, folder)}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, shared_data_dir):
    workdir = tmp_path_factory.mktemp("sweep")
    done = run_cli(workdir, *SMOKE, data_dir=shared_data_dir)
    assert done.returncode == 0, done.stderr[-4000:]
    (workdir / "stdout.txt").write_text(done.stdout)
    return workdir, shared_data_dir


def test_one_parent_and_two_finished_children_with_tags(sweep):
    workdir, _ = sweep
    parents, children = split(runs(workdir))
    assert len(parents) == 1 and len(children) == 2
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert {c.info.status for c in children} == {"FINISHED"}
    assert {c.data.tags["seed"] for c in children} == {"0", "1"}
    assert {c.data.tags["job_num"] for c in children} == {"0", "1"}
    for child in children:
        tags = child.data.tags
        assert tags["mlflow.parentRunId"] == parent.info.run_id
        assert len(tags["git.commit"]) in (40, 7) or tags["git.commit"] == "unknown"
        assert tags["version.torch"].startswith("2.13")
        assert tags["encoder.revision"] and "experiment=smoke" in tags["overrides"]
        assert child.data.params["finetune.k_folds"] == "2"
        assert {".hydra/config.yaml", ".hydra/overrides.yaml"} <= artifacts(
            workdir, child.info.run_id, ".hydra"
        )


def test_children_hold_their_stages(sweep):
    workdir, _ = sweep
    _, children = split(runs(workdir))
    child = children[0]
    assert {
        "distances/sinkhorn_short.json",
        "distances/sinkhorn_long.json",
        "distances/lda.json",
    } <= artifacts(workdir, child.info.run_id, "distances")
    short, long = (
        json.loads(artifact_text(workdir, child.info.run_id, f"distances/sinkhorn_{k}.json"))
        for k in ("short", "long")
    )
    for key in ("epsilon", "anneal_init"):  # fixed once for every pair of the job
        assert short["config"][key] == long["config"][key]
    per_model = pd.read_csv(
        io.StringIO(artifact_text(workdir, child.info.run_id, "performance/per_model.csv"))
    )
    assert list(per_model.columns[:7]) == [
        "model",
        "seed",
        "fold",
        "group",
        "repetition",
        "metric",
        "value",
    ]
    # 2 folds x 8 groups (6 regions, mixed, baseline) x 7 metrics, each on every text scored
    assert len(per_model) == 2 * 8 * N_METRICS
    assert set(per_model["repetition"]) == {0}
    texts = pd.read_csv(
        io.StringIO(artifact_text(workdir, child.info.run_id, "performance/texts.csv")),
        dtype={"key": str},
    )
    seed = child.data.tags["seed"]
    assert {"group", "key", "label", f"prob:seed{seed}/fold0"} <= set(texts.columns)
    # Every distinct text of a group once; each a model's text where it trained on none of it.
    assert not texts.duplicated(["group", "key"]).any()
    scored = per_model[per_model["metric"] == "accuracy"].groupby("group")["n_texts"].max()
    assert scored["za"] == (texts["group"] == "za").sum()
    assert set(per_model["group"]) == {"au", "ca", "nz", "uk", "us", "za", "mixed", "baseline"}
    assert "fold1/val/loss" in child.data.metrics
    # Same texts, another variety: each changed text scored as written, rewritten and control.
    rewrites = pd.read_csv(
        io.StringIO(artifact_text(workdir, child.info.run_id, "performance/rewrites.csv")),
        dtype={"key": str},
    )
    assert set(rewrites["version"]) == {"original", "variety", "control"}
    assert set(rewrites["group"] + ">" + rewrites["target"]) >= {"us>british", "uk>american"}
    assert rewrites.groupby("version").size().nunique() == 1  # three versions of each text
    assert "dist/sinkhorn_short/au__uk" in child.data.metrics
    steps = ("data", "encoder", "distance_suite", "distance_logging", "performance", "job_setup")
    assert all(child.data.metrics[f"time/{step}_s"] >= 0 for step in steps)
    # The parent pools the jobs: a job draws no heatmap and writes no analysis or report.
    assert "time/analysis_s" not in child.data.metrics
    assert artifacts(workdir, child.info.run_id, "figures") == {"figures/lda_projection.png"}
    assert not {"report.md", "analysis"} & artifacts(workdir, child.info.run_id)
    (dataset,) = child.inputs.dataset_inputs
    assert dataset.dataset.name == "sentiment140"


def test_parent_aggregates_the_sweep(sweep):
    workdir, _ = sweep
    parents, _ = split(runs(workdir))
    parent_id = parents[0].info.run_id
    names = artifacts(workdir, parent_id, "analysis") | artifacts(workdir, parent_id)
    assert {"analysis/pairwise.csv", "analysis/correlations.csv", "report.md"} <= names
    figures = artifacts(workdir, parent_id, "figures")
    assert {
        "figures/correlations_spearman_rho.png",
        "figures/sinkhorn_short.png",
        "figures/performance_accuracy.png",
    } <= figures
    pairwise = pd.read_csv(io.StringIO(artifact_text(workdir, parent_id, "analysis/pairwise.csv")))
    assert len(pairwise) == 28  # 8 groups
    assert {"dist_sinkhorn_short", "dist_lda", "gap_accuracy", "dcor_accuracy"} <= set(
        pairwise.columns
    )
    # 4 models over the sweep: dcor defined wherever the models' accuracies vary (the tiny
    # encoder's models can score a group identically, on every text, which leaves it NaN).
    assert pairwise["dcor_accuracy"].notna().any()
    found = pd.read_csv(io.StringIO(artifact_text(workdir, parent_id, "analysis/correlations.csv")))
    assert {"spearman_rho", "spearman_p_perm", "kendall_tau", "kendall_p_perm"} <= set(
        found.columns
    )
    assert (found["n_pairs"] == 28).any()
    per_model = pd.read_csv(
        io.StringIO(artifact_text(workdir, parent_id, "performance/per_model.csv"))
    )
    assert per_model["model"].nunique() == 4  # 2 seeds x 2 folds
    perf = {"perf_test_gap", "perf_test_ci_low", "perf_test_ci_high", "perf_test_p"}
    assert perf | {"perf_test_p_adjusted", "perf_test_differs"} <= set(pairwise.columns)
    assert pairwise["perf_test_p"].notna().sum() == 28
    assert {"analysis/perf_tests.csv", "analysis/perf_tests.json"} <= names
    metrics = parents[0].data.metrics
    assert "perf_test/au__uk/gap" in metrics and "perf_test/au__uk/p_adjusted" in metrics
    assert "headline/performance_differing_pairs/regions" in metrics
    report = artifact_text(workdir, parent_id, "report.md")
    assert "Strongest correlations" in report and "tiny" in report
    assert "Which pairs the classifiers treat differently" in report
    assert "what the 4 models said of it" in report
    assert "![sinkhorn_short against its noise floor](figures/sinkhorn_short_floor.png)" in report
    page = artifact_text(workdir, parent_id, "report.html")
    assert page.count('src="data:image/png;base64,') >= 10 and 'src="figures/' not in page
    shifts = pd.read_csv(
        io.StringIO(artifact_text(workdir, parent_id, "counterfactual/encoder.csv"))
    )
    assert {"us>uk", "uk>us", "us>za", "za>us"} <= set(shifts["direction"])
    assert "counterfactual/shares.png" in artifacts(workdir, parent_id, "counterfactual")
    flips = pd.read_csv(
        io.StringIO(artifact_text(workdir, parent_id, "counterfactual/classifier.csv"))
    )
    assert (flips.loc[flips["rewrite"] == "us>british", "models"] == 4).all()  # both jobs' models
    assert "counterfactual/us-to-uk/share_changed" in metrics  # tiny's D is within its noise
    section = report[report.index("## Same texts, another variety") :]
    assert "not shown to" in section and "no difference" not in section


def test_parent_says_first_what_a_reader_needs(sweep):
    workdir, _ = sweep
    parents, _ = split(runs(workdir))
    parent = parents[0]
    note = parent.data.tags["mlflow.note.content"]
    # The findings' order: the random encoder's warning, the bottom line, the questions'
    # table, then the caveats.
    assert note.startswith("**Warning: random encoder.** `tiny` is a randomly initialised")
    assert note.index("**Bottom line.** No test rejected") < note.index(
        "| question | answer | how |"
    )
    assert "\\<" not in note and "\\>" not in note
    assert " jobs side by side](/#/compare-runs?runs=%5B%22" in note  # reachable from the parent
    assert {"headline/primary_rho", "headline/primary_p", "headline/correlations"} <= set(
        parent.data.metrics
    )
    assert {"time/aggregate/analysis_s", "time/aggregate/report_s"} <= set(parent.data.metrics)
    (dataset,) = parent.inputs.dataset_inputs
    assert dataset.dataset.name == "sentiment140"
    # Few tags above the description: the versions are one artifact of the parent.
    assert not [k for k in parent.data.tags if k.startswith("version.")]
    assert "provenance/versions.json" in artifacts(workdir, parent.info.run_id, "provenance")
    # The command line ends with the findings, then where the report and the store are.
    printed = (workdir / "stdout.txt").read_text()
    assert "regbias: results" in printed and "Bottom line. " in printed
    assert "mlflow ui --backend-store-uri sqlite:///" in printed


@pytest.mark.slow
def test_resume_skips_finished_jobs(sweep):
    workdir, data_dir = sweep
    before = len(runs(workdir))
    done = run_cli(workdir, *SMOKE, data_dir=data_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    parents, children = split(runs(workdir))
    # The same sweep again: its parent is reopened (one parent per sweep), no new job run.
    assert len(children) == 2 and len(parents) == 1
    assert len(runs(workdir)) == before
    (parent,) = parents
    assert parent.info.status == "FINISHED" and parent.data.tags.get("regbias.reopened")
    assert parent.data.metrics["sweep/jobs_reused"] == 2
    assert "analysis/pairwise.csv" in artifacts(workdir, parent.info.run_id, "analysis")


@pytest.mark.slow
def test_joblib_launcher_sweep(tmp_path, shared_data_dir):
    args = [*SMOKE, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "resume=false"]
    done = run_cli(tmp_path, *args, data_dir=shared_data_dir)
    assert done.returncode == 0, done.stderr[-4000:]
    parents, children = split(runs(tmp_path))
    assert len(parents) == 1 and len(children) == 2
    assert {c.info.status for c in children} == {"FINISHED"}
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert "analysis/correlations.csv" in artifacts(tmp_path, parents[0].info.run_id, "analysis")
