"""Issue 58: a counterfactual setting that cannot work is one line, before any run or stage."""

from __future__ import annotations

import pytest

from regbias.app import job
from regbias.app.job import JobContext
from regbias.app.settings import read_settings
from regbias.errors import DataError
from regbias.study.counterfactual import study_rewrites
from regbias.study.pipeline import read_study
from tests.faults.conftest import composed, regbias_lines, runs_of, write_csv

LDA = "distance.lda.n_components=1"  # three groups


def _single_run(tmp_path, monkeypatch, store_dir, *overrides):
    monkeypatch.setattr(job, "job_context", lambda: JobContext(tmp_path, None, None, []))
    cfg = composed(
        *overrides,
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
    )
    with pytest.raises(SystemExit) as exited:
        job.main(cfg)
    return cfg, exited.value.code


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("analysis.counterfactual.pairs=[ca-us]", "no written variety for group 'ca'"),
        ("analysis.counterfactual.pairs=[uk-au]", "uk and au are both written british"),
        ("analysis.counterfactual.pairs=[us-xx]", "'us-xx' is no pair of this study's groups"),
    ],
)
def test_a_pair_that_cannot_be_rewritten_opens_no_run(
    tmp_path, monkeypatch, capsys, store_dir, override, expected
):
    cfg, code = _single_run(tmp_path, monkeypatch, store_dir, override)
    assert code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert line.startswith("regbias: error:") and expected in line
    assert runs_of(cfg) == []


def test_a_word_list_that_does_not_parse_names_its_line(tmp_path, monkeypatch, capsys, store_dir):
    words = tmp_path / "words.csv"
    words.write_text("american,british\nfaucet;tap\n")
    cfg, code = _single_run(
        tmp_path, monkeypatch, store_dir, f"analysis.counterfactual.word_list={words}"
    )
    assert code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert "words.csv, line 2: 'faucet;tap' is not american,british[,direction]" in line
    assert runs_of(cfg) == []


def test_a_corpus_where_no_text_changes_is_one_line(tmp_path):
    corpus = write_csv(tmp_path / "corpus.csv", {"train": 300, "us": 40, "uk": 40})
    settings = read_settings(
        composed("dataset=csv", f"dataset.path={corpus}", "dataset.train_group=train", LDA)
    )
    with pytest.raises(DataError, match=r"no text has a word to rewrite .*enabled=false"):
        study_rewrites(settings, read_study(settings))
    off = read_settings(
        composed(
            "dataset=csv",
            f"dataset.path={corpus}",
            "dataset.train_group=train",
            "analysis.counterfactual.enabled=false",
            LDA,
        )
    )
    assert study_rewrites(off, read_study(off)).sets == []
