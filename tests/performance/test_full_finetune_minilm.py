"""Full fine-tuning (``finetune.mode=full``) of the shipped MiniLM on real tweets (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from omegaconf import OmegaConf

from regbias.config_files import CONFIG_DIR
from regbias.data.groups import BASELINE
from regbias.data.registry import packaged_dataset
from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.spec import EncoderSpec
from regbias.performance.folds import run_folds
from regbias.performance.trainer import EncoderParts
from regbias.settings_reader import build
from tests.performance.test_training import RecordingLogger

pytestmark = pytest.mark.slow


def test_minilm_full_mode_keeps_its_best_epoch_and_scores_every_group(
    finetune_settings, trainer_settings
) -> None:
    dataset = packaged_dataset("sentiment140")
    corpus = dataset.read(dataset.data_dir(None))
    sample = corpus.train.subset(np.arange(240))
    groups = {g: corpus.groups[g].subset(np.arange(30)) for g in ("uk", "za")}
    shipped = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "encoder" / "minilm_l6.yaml"))
    encoder = load_encoder(build(EncoderSpec, shipped, "encoder"), device="cpu")
    parts = EncoderParts.from_encoder(encoder)
    settings = finetune_settings(
        "sentiment140", mode="full", max_epochs=2, batch_size=32, k_folds=2, max_length=48
    )
    logger = RecordingLogger()
    models = run_folds(
        sample,
        groups,
        settings,
        trainer_settings,
        task="binary",
        seed=0,
        encoder=parts,
        logger=logger,
    )
    assert [m.fold for m in models] == [0, 1]
    for model in models:
        losses = logger.metrics[f"fold{model.fold}/val/loss"]
        assert len(losses) == 2  # one validation loss an epoch
        assert model.best_score == pytest.approx(min(losses), rel=1e-5)  # the best epoch kept
        for group, texts in groups.items():
            scores = model.predictions[group]
            assert scores.shape == (len(texts),) and np.all((scores >= 0) & (scores <= 1))
        assert model.predictions[BASELINE].shape == (len(model.test_index),)  # the held-out fold
    # The encoder trained: the two folds' models score the same tweets differently.
    assert not np.allclose(models[0].predictions["uk"], models[1].predictions["uk"])
