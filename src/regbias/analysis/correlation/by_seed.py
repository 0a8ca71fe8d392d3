"""The primary seed by seed: each job's own test, and the study with each seed left out.

A study pools its jobs (one seed each) before it tests; one job alone tests the same hypothesis
on its own distances and gaps, with a fifth of the data. Stating both shows how stable the
study's verdict is over seeds (docs/method.md, "The primary seed by seed").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from regbias.analysis.correlation.primary import PrimaryTest
from regbias.analysis.pair_table import pairwise_table
from regbias.distances.matrix import DistanceMatrix


@dataclass(frozen=True)
class Job:
    """One job's measurements, as the primary needs them.

    Attributes:
        seed: its ``seed`` (the label in tables).
        distances: its distance matrices by name.
        per_model: its long performance table (None: no performance).
        run_id: its MLflow run (where its seed's headline is logged; "" none).
    """

    seed: str
    distances: dict[str, DistanceMatrix]
    per_model: pd.DataFrame | None
    run_id: str = ""


@dataclass(frozen=True)
class SeedPrimary:
    """The primary on one seed's job alone, and on the study without that seed.

    Attributes:
        seed: the job's seed.
        run_id: its MLflow run ("" none).
        alone: the primary on that job's own table.
        without: the primary on the other jobs pooled (None: one job only).
    """

    seed: str
    run_id: str
    alone: PrimaryTest
    without: PrimaryTest | None


def primary_by_seed(
    jobs: Sequence[Job], test: Callable[[pd.DataFrame], PrimaryTest]
) -> tuple[SeedPrimary, ...]:
    """The primary for each job alone and for the study without it (jobs in order).

    ``test``: the primary's test of a pair table (as the study runs it; no interval or power).
    """
    found = []
    for index, job in enumerate(jobs):
        others = [j for i, j in enumerate(jobs) if i != index]
        without = test(_pair_table(others)) if others else None
        found.append(SeedPrimary(job.seed, job.run_id, test(_pair_table([job])), without))
    return tuple(found)


def _pair_table(jobs: Sequence[Job]) -> pd.DataFrame:
    """The pair table of ``jobs`` pooled: distances over their repetitions, gaps over models."""
    from regbias.performance.evaluation import performance_gaps, summarise

    names = [n for n in jobs[0].distances if all(n in j.distances for j in jobs)]
    distances = {n: DistanceMatrix.pooled([j.distances[n] for j in jobs]) for n in names}
    tables = [j.per_model for j in jobs if j.per_model is not None]
    gaps = performance_gaps(summarise(pd.concat(tables, ignore_index=True))) if tables else None
    return pairwise_table(distances, gaps)


def seed_table(found: Sequence[SeedPrimary]) -> pd.DataFrame:
    """One row per seed (``analysis/primary_by_seed.csv``): rho and p alone and without it."""

    def values(test: PrimaryTest | None) -> tuple[float, float, bool]:
        if test is None:
            return math.nan, math.nan, False
        return test.rho, test.p_value, test.significant

    rows = []
    for item in found:
        row: dict[str, object] = {"seed": item.seed, "run_id": item.run_id}
        for name, test in (("alone", item.alone), ("without", item.without)):
            rho, p, significant = values(test)
            row |= {f"rho_{name}": rho, f"p_{name}": p, f"supported_{name}": significant}
        rows.append(row)
    return pd.DataFrame(rows)
