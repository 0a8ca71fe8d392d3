"""One way of solving per sweep: every job resolves the same Sinkhorn settings.

Epsilon, the annealing start, the solver and the updates come from the calibration draw, so
no job of a sweep solves differently and all their matrices pool.
"""

from __future__ import annotations

from regbias.app.settings import read_settings
from regbias.embeddings.cache import EmbeddingCache
from regbias.embeddings.encoder import load_encoder
from regbias.study.pipeline import prepare, sweep_distances
from tests.conftest import compose_config

SMALL = ["experiment=smoke", "dataset.groups=[au,nz,za,baseline]", "finetune.enabled=false"]


def calibrated(seed: int, tmp_path, *overrides: str):
    settings = read_settings(compose_config(*SMALL, f"seed={seed}", *overrides))
    study, draws = prepare(settings)
    encoder = load_encoder(settings.encoder, device="cpu")
    cache = EmbeddingCache(tmp_path / "cache")
    distance = sweep_distances(settings, study, draws, encoder, cache)
    return distance.methods["sinkhorn"].calibrated


def test_jobs_of_one_sweep_share_every_resolved_setting(tmp_path, shared_data_dir):
    first, second = calibrated(0, tmp_path), calibrated(7, tmp_path)
    assert first is not None and first == second  # epsilon, annealing start, solver, updates
    assert first.solver == "sinkhorn" and first.updates == "auto"  # the laptop's: kernel
    other = calibrated(0, tmp_path, "distance.calibration_seed=1")
    assert other.epsilon != first.epsilon  # the calibration draw, not the job, decides


def test_a_configured_epsilon_still_gets_one_solver_per_sweep(tmp_path, shared_data_dir):
    fixed = ("distance.sinkhorn.epsilon=0.005", "distance.sinkhorn.anneal_init=4")
    first, second = calibrated(0, tmp_path, *fixed), calibrated(5, tmp_path, *fixed)
    assert first == second and (first.epsilon, first.anneal_init) == (0.005, 4.0)
    assert first.solver == "exact"  # the paper's epsilon on clouds of a few hundred points
    assert first.updates == "log"


def test_settings_fixed_in_full_or_the_first_version_resolve_nothing_per_sweep(
    tmp_path, shared_data_dir
):
    fixed = (
        "distance.sinkhorn.epsilon=0.5",
        "distance.sinkhorn.anneal_init=4",
        "distance.sinkhorn.solver=sinkhorn",
        "distance.sinkhorn.updates=log",
    )
    assert calibrated(0, tmp_path, *fixed) is None
    assert calibrated(0, tmp_path, "distance.calibration_seed=null") is None
