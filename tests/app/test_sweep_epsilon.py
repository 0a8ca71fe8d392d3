"""One epsilon per sweep: every job derives the same epsilon from the calibration draw."""

from __future__ import annotations

from regbias.app.pipeline import prepare, sweep_epsilon
from regbias.embeddings.cache import EmbeddingCache
from regbias.embeddings.encoder import load_encoder
from regbias.settings import read_settings
from tests.conftest import compose_config

SMALL = ["experiment=smoke", "dataset.groups=[au,nz,za,baseline]", "finetune.enabled=false"]


def epsilon_of(seed: int, tmp_path, *overrides: str):
    settings = read_settings(compose_config(*SMALL, f"seed={seed}", *overrides))
    study, draws = prepare(settings)
    encoder = load_encoder(settings.encoder, device="cpu")
    return sweep_epsilon(settings, study, draws, encoder, EmbeddingCache(tmp_path / "cache"))


def test_jobs_of_one_sweep_share_epsilon_and_annealing_start(tmp_path, shared_data_dir):
    first, second = epsilon_of(0, tmp_path), epsilon_of(7, tmp_path)
    assert first is not None and first == second  # (epsilon, anneal_init), bit for bit
    other = epsilon_of(0, tmp_path, "distance.calibration_seed=1")
    assert other != first  # the calibration draw, not the job, decides


def test_configured_epsilon_or_first_version_derive_nothing_per_sweep(tmp_path, shared_data_dir):
    fixed = ("distance.sinkhorn.epsilon=0.5", "distance.sinkhorn.anneal_init=4")
    assert epsilon_of(0, tmp_path, *fixed) is None
    assert epsilon_of(0, tmp_path, "distance.calibration_seed=null") is None
