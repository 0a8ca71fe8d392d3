"""Item 7 of issue 27: groups that cleaning empties are named, with why, not dropped silently.

A CSV group of URLs only or emoji only had no text left after ``dataset.clean=true``: it
vanished ("analysing 3 groups"), the only trace ``empty_after_cleaning`` in ``dropped.json``,
and with too few groups left the error said "study more groups" without saying why.
"""

from __future__ import annotations

import json
import logging
import random
from types import SimpleNamespace

import pytest

from regbias.app.settings import read_settings
from regbias.data.csv_corpus import read_csv_corpus
from regbias.errors import ConfigError, DataError
from regbias.study import pipeline
from regbias.study.pipeline import log_study
from regbias.study.pipeline import prepare as prepare_settings
from tests.faults.conftest import WORDS, composed

EMPTIED = r"'urls' \(40 texts\), 'emoji' \(40 texts\) left the study: .*empty after cleaning"


def texts_of(group: str, count: int, rng: random.Random) -> list[str]:
    if group == "urls":
        return [f"http://t.co/x{i} https://example.com/{i}" for i in range(count)]
    if group == "emoji":
        return ["\N{GRINNING FACE} \N{PARTY POPPER} !!! \N{SEE-NO-EVIL MONKEY}"] * count
    return [" ".join(rng.choice(WORDS) for _ in range(6)) + f" {group}{i}" for i in range(count)]


def corpus_file(tmp_path, groups):
    rng = random.Random(0)
    rows = ["text,label,group"]
    for group, count in [("train", 240), *((g, 40) for g in groups)]:
        rows += [f"{t},{i % 2},{group}" for i, t in enumerate(texts_of(group, count, rng))]
    path = tmp_path / "study.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def prepare(path, *overrides):
    cfg = composed("dataset=csv", f"dataset.path={path}", "dataset.clean=true", *overrides)
    return prepare_settings(read_settings(cfg))


def test_the_reader_names_the_groups_cleaning_emptied(tmp_path):
    path = corpus_file(tmp_path, ["a", "urls", "b", "emoji"])
    corpus = read_csv_corpus(
        path,
        text_column="text",
        label_column="label",
        group_column="group",
        train_group="train",
        clean=True,
    )
    assert corpus.group_names == ["a", "b"]
    assert corpus.emptied == {"urls": 40, "emoji": 40}
    assert corpus.dropped["empty_after_cleaning"] == 80
    assert "dataset.clean=true" in corpus.emptied_note()


def test_too_few_groups_after_cleaning_says_which_were_emptied_and_why(tmp_path):
    path = corpus_file(tmp_path, ["a", "urls", "emoji"])
    with pytest.raises(ConfigError, match=rf"study more groups.*{EMPTIED}"):
        prepare(path)


def test_naming_an_emptied_group_says_it_was_emptied(tmp_path):
    path = corpus_file(tmp_path, ["a", "urls", "b", "c", "emoji"])
    with pytest.raises(ConfigError, match=rf"unknown group\(s\) urls .*{EMPTIED}"):
        prepare(path, "dataset.groups=[a,urls,b]")


def test_a_file_whose_every_group_is_emptied_says_so(tmp_path):
    path = corpus_file(tmp_path, ["urls", "emoji"])
    with pytest.raises(DataError, match=r"no evaluation group.*'urls', 'emoji' is empty after"):
        read_csv_corpus(
            path,
            text_column="text",
            label_column="label",
            group_column="group",
            train_group="train",
            clean=True,
        )


def test_a_job_with_emptied_groups_warns_and_counts_them_per_group(tmp_path, caplog, monkeypatch):
    path = corpus_file(tmp_path, ["a", "urls", "b", "c", "emoji"])
    study, draws = prepare(path)
    assert list(study.groups) == ["a", "b", "c", "baseline"]
    written = {}
    run = SimpleNamespace(
        table=lambda *a, **k: None,
        metrics=lambda *a, **k: None,
        tags=lambda *a, **k: None,
        json=lambda data, name: written.__setitem__(name, json.loads(json.dumps(data))),
    )
    monkeypatch.setattr(pipeline, "log_dataset", lambda *args, **kwargs: None)  # no store here
    with caplog.at_level(logging.WARNING):
        log_study(run, study, draws, str(path))
    assert written["data/dropped.json"]["empty_after_cleaning/urls"] == 40
    assert written["data/dropped.json"]["empty_after_cleaning/emoji"] == 40
    (warning,) = [r.getMessage() for r in caplog.records if "left the study" in r.getMessage()]
    assert "'urls' (40 texts), 'emoji' (40 texts)" in warning and "URLs" in warning
