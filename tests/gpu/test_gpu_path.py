"""The GPU path: Sinkhorn on a JAX GPU and Lightning on a CUDA device give the CPU's values.

Marked ``gpu`` and skipped where no GPU is visible; ``benchmarks/gpu_check.sh`` runs them on
a GPU machine (``pytest -m gpu``).
"""

from __future__ import annotations

from dataclasses import replace

import jax
import numpy as np
import pytest
import torch

from regbias.distances.sinkhorn import sinkhorn_matrix
from regbias.performance.predict import predict_proba
from regbias.performance.trainer import train_model
from tests.performance.test_training import bag_of_words, tweets
from tests.settings import packaged_sinkhorn

pytestmark = pytest.mark.gpu

needs_jax_gpu = pytest.mark.skipif(
    jax.default_backend() != "gpu", reason="JAX sees no GPU (install its CUDA plugin)"
)
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA GPU")


def _draws() -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [
        {
            g: rng.normal(0.1 * k, 1.0, (60 + 7 * k, 16)).astype(np.float32)
            for k, g in enumerate(["au", "ca", "uk", "us"])
        }
        for _ in range(2)
    ]


@needs_jax_gpu
def test_sinkhorn_on_the_gpu_matches_the_cpu() -> None:
    settings = packaged_sinkhorn(epsilon=0.5, pad_multiple=64, solver="sinkhorn")
    on_gpu, gpu_table = sinkhorn_matrix(_draws(), settings, progress=False)  # all pairs vmapped
    with jax.default_device(jax.devices("cpu")[0]):
        on_cpu, cpu_table = sinkhorn_matrix(_draws(), settings, progress=False)
    assert gpu_table["xy_converged"].all() and cpu_table["xy_converged"].all()
    assert np.allclose(on_gpu.mean, on_cpu.mean, rtol=1e-4, atol=1e-5)


@needs_cuda
def test_lightning_trains_on_the_gpu_to_the_cpus_predictions(finetune_settings, trainer_settings):
    data = tweets(80, seed=3)
    features = bag_of_words(data.texts)
    settings = finetune_settings("sentiment140", mode="head", max_epochs=3, batch_size=64)
    probabilities = {}
    for accelerator in ("cpu", "gpu"):
        trainer = replace(trainer_settings, accelerator=accelerator, precision="32-true")
        module = train_model(
            features[:60],
            data.labels[:60],
            features[60:],
            data.labels[60:],
            settings,
            trainer,
            seed=0,
        )
        probabilities[accelerator] = predict_proba(module, features[60:], device="cpu")
    assert np.allclose(probabilities["gpu"], probabilities["cpu"], atol=1e-3)
