"""Item 3 of issue 27: a seed listed twice is refused, and one run is never pooled twice.

``-m seed=0,0,1`` ran seed 0 once, reused its run for the second job, and the parent pooled
both records: 140 of 420 rows of ``per_model.csv`` twice, "summed over 3 jobs" for a sweep
named "2 seeds". A sweep now lists each value once, and records are unique by run.
"""

from __future__ import annotations

import logging

import pytest
from hydra._internal.callbacks import Callbacks
from omegaconf import OmegaConf

from regbias.app import summary
from regbias.app.preflight import refuse_repeated_values
from regbias.errors import ConfigError
from regbias.study import aggregate
from regbias.tracking.ledger import JobRecord
from tests.faults.conftest import regbias_lines, runs_of


@pytest.mark.parametrize(
    ("overrides", "repeated"),
    [
        (["seed=0,0,1"], "seed=0,0,1 lists 0 more than once"),
        (["seed=0,1", "encoder=tiny,tiny"], "encoder=tiny,tiny lists tiny more than once"),
        (["seed=range(0,2)", "seed=1"], r"seed is given twice \(seed=range\(0,2\) and seed=1\)"),
        (["+x=1", "+x=2"], r"\+x is given twice"),
        (["seed=choice(2,3,2,3)"], "lists 2, 3 more than once"),
    ],
)
def test_a_value_listed_twice_is_refused(overrides, repeated):
    with pytest.raises(ConfigError, match=repeated):
        refuse_repeated_values(overrides)


@pytest.mark.parametrize("overrides", [["seed=range(5)"], ["seed=0,1", "encoder=tiny"], []])
def test_values_listed_once_pass(overrides):
    refuse_repeated_values(overrides)


def test_a_sweep_over_seed_0_0_1_stops_before_its_parent_in_one_line(sweep_config, capsys):
    cfg = sweep_config
    OmegaConf.set_readonly(cfg.hydra, False)
    cfg.hydra.overrides.task = ["seed=0,0,1"]
    with pytest.raises(SystemExit) as exit_:
        Callbacks(cfg).on_multirun_start(config=cfg)
    assert exit_.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert line.startswith("regbias: error: seed=0,0,1 lists 0 more than once")
    assert runs_of(cfg) == []


def test_two_records_of_one_run_are_pooled_once(monkeypatch, caplog):
    pooled = []

    def analysed(parent, records, *a, **k):
        pooled.append(records)
        return None, {}  # nothing written, no seconds

    monkeypatch.setattr(aggregate, "_aggregate_variant", analysed)
    records = [
        {"job_num": 0, "status": "FINISHED", "run_id": "r0", "variant": "v"},
        {"job_num": 1, "status": "REUSED", "run_id": "r0", "variant": "v"},
        {"job_num": 2, "status": "FINISHED", "run_id": "r1", "variant": "v"},
    ]
    with caplog.at_level(logging.WARNING):
        aggregate.aggregate_sweep(None, None, [JobRecord.of(r) for r in records])  # type: ignore[arg-type]
    assert [[r.job_num for r in found] for found in pooled] == [[0, 2]]
    assert "jobs 0 and 1 are one run (r0, the same config): its results count once" in caplog.text


def test_the_summary_counts_a_shared_run_once():
    class Client:
        def get_run(self, run_id):
            return run_id

    parent = type("Parent", (), {"client": Client()})()
    records = [
        JobRecord(status="FINISHED", run_id="r0"),
        JobRecord(status="REUSED", run_id="r0"),
        JobRecord(status="FINISHED", run_id="r1"),
    ]
    assert summary._children(parent, records) == ["r0", "r1"]
