"""Item 2 of issue 36: duplicated texts inside a group are dropped, and how many is said.

A group of 15 tweets written 10 times each got no warning, ``groups.csv`` said 150 texts, and
the distance's "disjoint" draws and twins sampled row positions, so they shared texts (its
floors fell to 7.19 and 5.81 against 9.1-10.5 for the other groups).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

from regbias.app.settings import read_settings
from regbias.data.csv_corpus import read_csv_corpus
from regbias.data.study import group_table
from regbias.study import pipeline
from regbias.study.parts import record_study
from regbias.study.pipeline import log_study
from tests.faults.conftest import composed, write_csv


def corpus_file(tmp_path):
    path = write_csv(tmp_path / "study.csv", {"train": 240, "a": 40, "b": 40})
    lines = path.read_text().splitlines()
    repeated = [f"the same tweet number {i % 15},{i % 2},echo" for i in range(150)]
    path.write_text("\n".join([*lines, *repeated]) + "\n")
    return path


def read(path):
    return read_csv_corpus(
        path, text_column="text", label_column="label", group_column="group", train_group="train"
    )


def test_a_group_holds_each_text_once_and_says_how_many_went(tmp_path):
    corpus = read(corpus_file(tmp_path))
    echo = corpus.groups["echo"]
    assert len(echo) == 15 and len(set(echo.texts)) == 15
    assert corpus.duplicates == {"echo": 135}
    assert corpus.dropped["duplicate/echo"] == 135
    table = group_table(corpus).set_index("group")
    assert table.loc["echo", "n_texts"] == 15
    assert table.loc["echo", "n_duplicates_dropped"] == 135
    assert table.loc["a", "n_duplicates_dropped"] == 0
    assert "copies dropped: echo 135" in corpus.duplicates_note()


def test_the_run_warns_of_the_copies(tmp_path, monkeypatch, caplog):
    path = corpus_file(tmp_path)
    settings = read_settings(composed("dataset=csv", f"dataset.path={path}"))
    study = record_study(settings)
    assert len(study.groups["echo"]) == 15
    monkeypatch.setattr(pipeline, "log_dataset", lambda *args, **kwargs: None)  # no store here
    logged = {}
    run = SimpleNamespace(
        table=lambda frame, name: logged.setdefault(name, frame),
        json=lambda data, name: logged.setdefault(name, data),
        metrics=lambda values: None,
        tags=lambda values: None,
    )
    draws = SimpleNamespace(records=[], pool_size=0)
    with caplog.at_level(logging.WARNING, logger="regbias.study.pipeline"):
        log_study(run, study, draws, str(path))
    assert "copies dropped: echo 135" in caplog.text
    groups = logged["data/groups.csv"].set_index("group")
    assert groups.loc["echo", "n_duplicates_dropped"] == 135
    assert logged["data/dropped.json"]["duplicate/echo"] == 135
