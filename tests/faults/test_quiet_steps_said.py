"""The "Also" list of issue 20: what happened is said, also when it is slow or unusual.

Long analysis steps (30 groups) show progress, a plain ``task=analyze`` reports the stage it
ran rather than "no stage ran (reused)", and texts a CSV file shares between groups or with
its training rows are counted in ``data/dropped.json`` and warned of.
"""

from __future__ import annotations

import itertools
import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd

from regbias.analysis import permutations
from regbias.analysis.correlation.table import correlations
from regbias.analysis.robustness import bootstrap
from regbias.console import PlainProgress
from regbias.data.csv_corpus import read_csv_corpus
from regbias.study import pipeline
from regbias.study.pipeline import log_study
from tests.app.test_analyze_task import write_table
from tests.cli import run_job


def thirty_group_table() -> pd.DataFrame:
    groups = [f"g{i:02d}" for i in range(30)]
    frame = pd.DataFrame(list(itertools.combinations(groups, 2)), columns=["group_a", "group_b"])
    rng = np.random.default_rng(0)
    frame["dist_x"] = rng.random(len(frame))
    frame["gap_y"] = rng.random(len(frame))
    return frame


def test_permutation_null_of_thirty_groups_shows_progress(monkeypatch):
    shown = []

    def recording(*args, **kwargs):
        bar = PlainProgress(*args, **kwargs)
        shown.append(bar)
        return bar

    monkeypatch.setattr(permutations, "progress_bar", recording)
    correlations(thirty_group_table(), relabellings=999)
    (bar,) = shown
    assert bar.desc == "permutation null" and not bar.disable and bar.n == bar.total == 1000


def test_bootstrap_intervals_show_progress(monkeypatch):
    shown = []
    monkeypatch.setattr(bootstrap, "progress_bar", lambda *a, **k: shown.append(k) or a[0])
    table = thirty_group_table()
    found = correlations(table, relabellings=9)
    bootstrap.bootstrap_intervals(table, found, {"dist_x": np.tile(table["dist_x"], (5, 1))}, 0.9)
    assert shown == [{"total": 1, "desc": "bootstrap intervals"}]


def test_plain_analyze_names_the_stage_it_ran(tmp_path):
    done = run_job(
        tmp_path, "task=analyze", f"analysis.analyze.input={write_table(tmp_path / 'p.csv')}"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [x for x in done.stdout.splitlines() if "time per step" in x]
    assert "analysis" in line and "reused" not in line


def test_texts_shared_between_groups_and_training_rows_are_counted(tmp_path, caplog, monkeypatch):
    rows = ["text,label,group", "same old day,1,train", "other day,0,train", "fresh day,1,train"]
    rows += ["same old day,1,a", "lovely day,0,a", "lovely day,1,b", "grim day,0,b", "x y,1,c"]
    path = tmp_path / "shared.csv"
    path.write_text("\n".join(rows) + "\n")
    corpus = read_csv_corpus(
        path, text_column="text", label_column="label", group_column="group", train_group="train"
    )
    assert corpus.dropped["shared/texts_in_several_groups"] == 1  # "lovely day": a and b
    assert corpus.dropped["shared/training_texts_in_groups"] == 1  # "same old day"
    study = SimpleNamespace(corpus=corpus, groups={}, training=corpus.train)
    draws = SimpleNamespace(pool_size=0, records=[])
    monkeypatch.setattr(pipeline, "log_dataset", lambda *args, **kwargs: None)  # no store here
    with caplog.at_level(logging.WARNING):
        log_study(RecordingRun(), study, draws, str(path))
    assert "texts_in_several_groups 1, training_texts_in_groups 1" in caplog.text


class RecordingRun:
    """Takes every write of a run and keeps nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None
