"""Every config group composes with Hydra's compose API and holds the keys the code reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from regbias.analysis.pair_table import PERFORMANCE_PREFIXES
from regbias.app.settings import read_settings
from regbias.errors import ConfigError
from regbias.performance.evaluation import BINARY_METRICS, MULTILABEL_METRICS
from regbias.study.settings import StudySettings

CONF = Path(__file__).resolve().parents[2] / "conf"


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def composed(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def test_default_config_is_sentiment140_minilm_at_laptop_sizes():
    cfg = composed()
    assert cfg.dataset.name == "sentiment140"
    assert cfg.encoder.name == "minilm_l6"
    assert cfg.finetune.mode == "head"  # the base groups are the laptop sizes
    assert cfg.seed == 0 and cfg.task == "run"
    OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)


GROUPS = ["dataset", "encoder", "distance", "finetune", "trainer", "tracking", "analysis"]


@pytest.mark.parametrize("preset", [None, *options("experiment")])
@pytest.mark.parametrize("group", GROUPS)
def test_every_option_under_every_preset_reads_into_valid_settings(group, preset):
    """Each group option composes with each preset and passes the settings' checks."""
    for option in options(group):
        overrides = [f"{group}={option}", *([f"experiment={preset}"] if preset else [])]
        if group == "dataset" and option == "csv":
            overrides.append("dataset.path=/tmp/table.csv")
        if group == "encoder" and option == "local":  # another preset's local copy
            overrides[0:1] = ["encoder=[bert_small,local]", "encoder.location=/tmp"]
        settings = read_settings(composed(*overrides))
        assert isinstance(settings, StudySettings)
        if group == "dataset":
            assert settings.dataset.name == option


@pytest.mark.parametrize("preset", [None, *options("experiment")])
@pytest.mark.parametrize("option", options("dataset"))
def test_every_corpus_tests_a_primary_hypothesis_on_columns_it_produces(option, preset):
    """The default primary is the corpus's: Reuters (multilabel) has no gap_accuracy."""
    overrides = [f"dataset={option}", *([f"experiment={preset}"] if preset else [])]
    if option == "csv":
        overrides.append("dataset.path=/tmp/table.csv")
    settings = read_settings(composed(*overrides))
    assert settings.analysis.correlation.primary is not None
    distance, performance = settings.analysis.correlation.primary
    metrics = MULTILABEL_METRICS if settings.dataset.task == "multilabel" else BINARY_METRICS
    produced = {f"{prefix}{metric}" for prefix in PERFORMANCE_PREFIXES for metric in metrics}
    assert performance in produced, f"{option}: {performance} not among {sorted(produced)}"
    assert performance == settings.dataset.primary_performance
    # The distance half: long text is measured for tweets (passages) and documents alike.
    assert distance == "dist_sinkhorn_long"
    assert settings.distance.enabled and settings.distance.long.enabled
    # An explicit primary still wins over the corpus's.
    chosen = read_settings(composed(*overrides, "analysis.correlation.primary=[dist_lda,dcor_f1]"))
    assert chosen.analysis.correlation.primary == ("dist_lda", "dcor_f1")


def test_a_corpus_without_its_primary_column_takes_its_tasks():
    settings = read_settings(composed("~dataset.primary_performance"))
    assert settings.analysis.correlation.primary == ("dist_sinkhorn_long", "gap_accuracy")


@pytest.mark.parametrize("option", options("dataset"))
def test_each_corpus_declares_its_reference_groups_and_the_analysis_follows(option):
    overrides = [f"dataset={option}", *(["dataset.path=/tmp/table.csv"] if option == "csv" else [])]
    settings = read_settings(composed(*overrides))
    assert settings.dataset.reference_groups  # each corpus names its own
    assert settings.analysis.reference_groups == settings.dataset.reference_groups
    chosen = read_settings(composed(*overrides, "analysis.reference_groups=[test]"))
    assert chosen.analysis.reference_groups == ["test"]  # a bare table's, for task=analyze
    unnamed = read_settings(composed(*overrides, "~dataset.reference_groups"))
    assert unnamed.analysis.reference_groups == ["baseline"]


def test_settings_fail_on_the_key_with_what_to_set():
    with pytest.raises(ConfigError, match=r"distance\.repetitions must be an integer"):
        read_settings(composed("distance.repetitions=two"))
    with pytest.raises(ConfigError, match=r"distance\.sinkhorn\.epsilonn is not a setting"):
        read_settings(composed("+distance.sinkhorn.epsilonn=1"))
    with pytest.raises(ConfigError, match=r"distance\.repetitions must be an integer >= 1"):
        read_settings(composed("distance.repetitions=-1"))
    with pytest.raises(ConfigError, match="seed must be between 0 and"):
        read_settings(composed("seed=-1"))
    with pytest.raises(ConfigError, match=r"dataset\.path=my\.csv"):
        read_settings(composed("dataset=csv", "dataset.path=''"))


@pytest.mark.parametrize("dataset", ["sentiment140", "reuters21578", "csv"])
def test_finetune_follows_dataset(dataset):
    cfg = composed(f"dataset={dataset}")
    optimizer = "AdamW" if dataset == "reuters21578" else "Adagrad"
    assert cfg.finetune.optimizer._target_ == f"torch.optim.{optimizer}"


def test_paper_preset_sizes():
    cfg = composed("experiment=paper")
    assert cfg.finetune.mode == "full" and cfg.finetune.sample_size == 16000
    assert cfg.distance.sinkhorn.epsilon == 0.005 and cfg.distance.tokens == "all"
    assert cfg.distance.sinkhorn.solver == "exact"  # Sinkhorn does not converge at 12,800 points
    assert cfg.distance.short.texts_per_draw == 100
    assert cfg.finetune.evaluation.repetitions == 30


def test_a_random_encoder_logs_to_its_own_experiment():
    experiments = {
        overrides: read_settings(composed(*overrides)).tracking.experiment
        for overrides in [
            (),
            ("encoder=tiny",),
            ("experiment=smoke",),
            ("encoder=minilm_random",),
            ("+encoder.random_weights_seed=3",),
        ]
    }
    assert experiments == {
        (): "regbias-sentiment140",
        ("encoder=tiny",): "regbias-sentiment140-random",
        ("encoder=minilm_random",): "regbias-sentiment140-random",
        ("+encoder.random_weights_seed=3",): "regbias-sentiment140-random",
        ("experiment=smoke",): "regbias-sentiment140-smoke",
    }


def test_smoke_preset_uses_tiny_encoder():
    cfg = composed("experiment=smoke")
    assert cfg.encoder._target_ == "regbias.embeddings.sources.RandomEncoder"
    assert cfg.distance.repetitions == 1


def test_reuters_paper_settings():
    cfg = composed("dataset=reuters21578", "experiment=paper")
    ft = cfg.finetune
    assert (ft.optimizer._target_, ft.lr, ft.batch_size, ft.max_length) == (
        "torch.optim.AdamW",
        2e-5,
        16,
        256,
    )
    assert (ft.warmup_fraction, ft.weight_decay, ft.patience) == (0.1, 0.01, 5)


def test_unknown_option_is_a_clear_hydra_error():
    for group in ("dataset", "encoder", "experiment", "distance"):
        with pytest.raises(ConfigCompositionException, match="nosuch"):
            composed(f"{group}=nosuch")


def test_tracking_defaults_to_sqlite(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = composed()
    assert cfg.tracking.uri == "sqlite:///mlruns.db"
    assert cfg.tracking.experiment == "regbias-sentiment140"
