"""Items 9, 13, 14 and 15 of issue 27: a mistake in the settings or labels is one early line."""

from __future__ import annotations

import logging

import pytest

from regbias.app import job
from regbias.app.job import JobContext
from regbias.app.preflight import preflight
from regbias.app.settings import read_settings
from regbias.data.csv_corpus import read_csv_corpus
from regbias.errors import ConfigError, DataError
from regbias.study.checks import check_primary, run_columns
from regbias.study.pipeline import prepare
from tests.faults.conftest import composed, regbias_lines, runs_of

OPTIMIZER = "finetune.optimizer"
CALLBACKS = "+finetune.callbacks"


# Item 9: optimizer and callback arguments are checked against the class when settings are read.


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            [f"{OPTIMIZER}._target_=torch.optim.Optimizer"],
            r"finetune\.optimizer\._target_=torch\.optim\.Optimizer is the base class "
            r".* itself: name a concrete one",
        ),
        (
            [f"+{OPTIMIZER}.momentum=0.9"],
            r"finetune\.optimizer\.momentum is not an argument of torch\.optim\.Adagrad .*lr_decay",
        ),
        (
            [f"{CALLBACKS}.stop._target_=lightning.pytorch.callbacks.EarlyStopping"],
            r"finetune\.callbacks\.stop needs monitor: add \+finetune\.callbacks\.stop\.monitor=",
        ),
        (
            [
                f"{CALLBACKS}.best._target_=lightning.pytorch.callbacks.ModelCheckpoint",
                f"{CALLBACKS}.best.every_n_epoch=1",
            ],
            r"finetune\.callbacks\.best\.every_n_epoch is not an argument of lightning\.pytorch"
            r"\.callbacks\.ModelCheckpoint .*every_n_epochs",
        ),
    ],
    ids=["abstract-optimizer", "adagrad-momentum", "early-stopping-no-monitor", "unknown-arg"],
)
def test_optimizer_and_callback_arguments_are_checked_when_read(overrides, expected):
    with pytest.raises(ConfigError, match=expected):
        read_settings(composed(*overrides))


def test_arguments_the_class_takes_are_accepted():
    settings = read_settings(
        composed(
            f"{OPTIMIZER}._target_=torch.optim.SGD",
            f"+{OPTIMIZER}.momentum=0.9",
            f"{CALLBACKS}.stop._target_=lightning.pytorch.callbacks.EarlyStopping",
            f"{CALLBACKS}.stop.monitor=val/loss",
        )
    )
    assert dict(settings.finetune.optimizer.arguments) == {"momentum": 0.9}
    assert [name for name, _ in settings.finetune.callbacks.entries] == ["stop"]


# Item 14: encoder.location naming a module that is not a model package.


@pytest.mark.parametrize("module", ["numpy", "torch", "json", "os"])
def test_a_module_that_is_no_model_package_is_one_line(module):
    with pytest.raises(ConfigError) as info:
        read_settings(composed("encoder=minilm_l6", f"encoder.location={module}"))
    message = str(info.value)
    assert f"encoder.location={module} is not a model package (it has no get_model_path())" in (
        message
    )
    assert "pip install" not in message and "\n" not in message
    assert "'encoder=[minilm_l6,local]' encoder.location=DIR" in message


def test_a_missing_model_package_still_says_install_it():
    with pytest.raises(ConfigError, match=r"package 'no_such_model_pkg' is not installed"):
        read_settings(composed("encoder=minilm_l6", "encoder.location=no_such_model_pkg"))


# Item 15: which label is positive is never a surprise.


def labelled_csv(tmp_path, negative: str, positive: str):
    rows = ["text,label,group", f"one,{negative},a", f"two,{positive},a", f"three,{positive},b"]
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def read_labels(path, positive_label=None):
    columns = {"text_column": "text", "label_column": "label", "group_column": "group"}
    return read_csv_corpus(path, **columns, positive_label=positive_label)


@pytest.mark.parametrize(
    ("negative", "positive"), [("negative", "Positive"), ("NEG", "pos"), ("False", "true")]
)
def test_word_labels_map_case_insensitively_and_say_which_is_positive(
    tmp_path, caplog, negative, positive
):
    with caplog.at_level(logging.INFO, logger="regbias.data.csv_corpus"):
        corpus = read_labels(labelled_csv(tmp_path, negative, positive))
    assert corpus.label_names == [negative, positive]
    assert corpus.groups["a"].labels.tolist() == [0, 1]
    said = f"label {positive!r} is the positive class (1), {negative!r} the negative (0)"
    assert any(said in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    ("first", "second"), [("happy", "sad"), ("Positive", "positive"), ("0", "yes")]
)
def test_labels_whose_positive_is_unclear_are_refused(tmp_path, first, second):
    path = labelled_csv(tmp_path, first, second)
    with pytest.raises(DataError, match=r"which one is positive is not clear") as info:
        read_labels(path)
    assert f"dataset.positive_label={first}" in str(info.value)
    assert read_labels(path, positive_label=first).groups["a"].labels.tolist() == [1, 0]


# Item 13: a typo in analysis.correlation.primary is refused before any stage, the known names
# listed.


def test_a_typo_in_the_primary_fails_before_the_data_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("REGBIAS_DATA_DIR", str(tmp_path / "absent"))  # reading it would fail
    settings = read_settings(
        composed("analysis.correlation.primary=[dist_sinkhorn_lng,gap_acuracy]")
    )
    with pytest.raises(ConfigError) as info:
        prepare(settings)
    message = str(info.value)
    assert "analysis.correlation.primary names the distance column 'dist_sinkhorn_lng'" in message
    assert (
        "its distance columns are dist_sinkhorn_short, dist_sinkhorn_long, dist_energy_short,"
        in message
    )
    with pytest.raises(ConfigError, match=r"performance column 'gap_acuracy'.* gap_accuracy, "):
        preflight(read_settings(composed("analysis.correlation.primary=[dist_lda,gap_acuracy]")))


@pytest.mark.parametrize(
    "overrides",
    [
        [],
        ["analysis.correlation.primary=[excess_dist_energy_short,dcor_roc_auc]"],
        ["finetune.enabled=false"],  # no performance column: the primary says "not measured"
        ["analysis.correlation.primary=null"],
    ],
)
def test_a_primary_the_run_produces_is_accepted(overrides):
    check_primary(read_settings(composed(*overrides)))


def test_the_primary_follows_what_is_switched_off():
    off = read_settings(composed("distance.long.enabled=false"))
    distances, performance = run_columns(off)
    assert "dist_sinkhorn_long" not in distances and "dist_sinkhorn_short" in distances
    assert "gap_accuracy" in performance
    with pytest.raises(ConfigError, match=r"'dist_sinkhorn_long', which this run does not"):
        check_primary(off)


def test_a_single_run_with_a_typo_in_the_primary_opens_no_run(
    tmp_path, monkeypatch, capsys, store_dir
):
    monkeypatch.setattr(job, "job_context", lambda: JobContext(tmp_path, None, None, []))
    cfg = composed(
        "analysis.correlation.primary=[dist_sinkhorn_long,gap_acuracy]",
        f"tracking.uri=sqlite:///{store_dir}/mlruns.db",
        f"tracking.artifact_root={tmp_path}/art",
        f"tracking.experiment={tmp_path.name}",
    )
    with pytest.raises(SystemExit) as exited:
        job.main(cfg)
    assert exited.value.code == 2
    (line,) = regbias_lines(capsys.readouterr().err)
    assert line.startswith(
        "regbias: error: analysis.correlation.primary names the performance column"
    )
    assert runs_of(cfg) == []
