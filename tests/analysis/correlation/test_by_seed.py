"""The primary seed by seed: each job alone is the job's own primary; without it, the others'."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from regbias.analysis.correlation.by_seed import Job, primary_by_seed, seed_table
from regbias.analysis.correlation.primary import PrimaryTest, primary_test
from regbias.analysis.pair_table import pairwise_table
from regbias.distances.matrix import DistanceMatrix
from regbias.performance.evaluation import performance_gaps, summarise
from tests.analysis.test_robustness import study_on_a_line

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]
PRIMARY = ("dist_sinkhorn_long", "gap_accuracy")


def _test(table: pd.DataFrame) -> PrimaryTest:
    return primary_test(table, *PRIMARY, reference_groups=[], direction="greater")


def _jobs() -> list[Job]:
    jobs = []
    for seed in range(3):
        study = study_on_a_line(GROUPS, 11, noise=0.05 + 0.1 * seed, n_models=2)
        per_model = study.per_model.assign(seed=seed, model=lambda f, s=seed: f["model"] + f"-{s}")
        jobs.append(Job(str(seed), study.distances, per_model, f"run{seed}"))
    return jobs


def _primary(jobs: list[Job]) -> float:
    distances = {
        "sinkhorn_long": DistanceMatrix.pooled([j.distances["sinkhorn_long"] for j in jobs])
    }
    per_model = pd.concat([j.per_model for j in jobs], ignore_index=True)
    table = pairwise_table(distances, performance_gaps(summarise(per_model)))
    return primary_test(table, *PRIMARY, reference_groups=[], direction="greater").rho


def test_each_seed_alone_and_without_it_is_the_primary_of_those_jobs() -> None:
    jobs = _jobs()
    found = primary_by_seed(jobs, _test)
    assert [f.seed for f in found] == ["0", "1", "2"]
    for index, item in enumerate(found):
        assert item.alone.rho == pytest.approx(_primary([jobs[index]]))
        others = [j for i, j in enumerate(jobs) if i != index]
        assert item.without is not None
        assert item.without.rho == pytest.approx(_primary(others))
    table = seed_table(found)
    assert list(table["run_id"]) == ["run0", "run1", "run2"]
    assert table.loc[0, "rho_alone"] == found[0].alone.rho
    assert table.loc[2, "p_without"] == found[2].without.p_value


def test_one_job_has_no_study_without_it() -> None:
    (only,) = primary_by_seed(_jobs()[:1], _test)
    assert only.without is None
    assert math.isnan(seed_table([only]).loc[0, "rho_without"])
