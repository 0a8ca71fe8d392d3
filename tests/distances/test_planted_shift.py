"""A planted shift: groups that differ in vocabulary are farther apart than halves of one group.

The texts go through the real encoder path (all-MiniLM-L6-v2 from its PyPI package), so this
checks the whole of stages II and III, not just the solvers. Agreement with POT is checked too.
"""

from __future__ import annotations

import numpy as np
import ot
import pytest

from regbias.distances.lda import lda_distance_matrix
from regbias.distances.sinkhorn import mean_pooled_cost, sinkhorn_divergence
from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.spec import EncoderSpec
from tests.conftest import packaged
from tests.settings import packaged_lda, packaged_sinkhorn

SPORT = "goal striker match referee league penalty keeper season coach stadium fans derby".split()
FOOD = "recipe oven flour butter simmer garlic sauce pastry spices bake dough kitchen".split()


def sentences(vocabulary: list[str], n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(vocabulary, size=8)) for _ in range(n)]


@pytest.fixture(scope="module")
def encoder():
    spec = packaged(EncoderSpec, "encoder", "encoder=minilm_l6", max_length=32)
    return load_encoder(spec, device="cpu")


@pytest.fixture(scope="module")
def groups():
    sport = sentences(SPORT, 60, seed=0)
    return {"sport_a": sport[:30], "sport_b": sport[30:], "food": sentences(FOOD, 30, seed=1)}


def test_sinkhorn_sees_the_planted_shift(encoder, groups):
    clouds = {g: np.concatenate(encoder.token_embeddings(t)) for g, t in groups.items()}
    epsilon = 0.05 * mean_pooled_cost(list(clouds.values()))
    settings = packaged_sinkhorn(epsilon=epsilon, pad_multiple=128)
    within = sinkhorn_divergence(clouds["sport_a"], clouds["sport_b"], settings).divergence
    across = sinkhorn_divergence(clouds["sport_a"], clouds["food"], settings).divergence
    assert 0 <= within < 0.5 * across


def test_lda_sees_the_planted_shift(encoder, groups):
    pooled = {g: encoder.pooled(t) for g, t in groups.items()}
    settings = packaged_lda(n_components=2, solver="eigen", shrinkage="auto")
    matrix = lda_distance_matrix([pooled], settings)
    assert matrix.value("sport_a", "sport_b") < 0.5 * matrix.value("sport_a", "food")
    assert matrix.value("sport_a", "sport_b") < 0.5 * matrix.value("sport_b", "food")


def test_divergence_agrees_with_pot_in_float64():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 8)) / np.sqrt(8)
    y = rng.normal(size=(50, 8)) / np.sqrt(8) + 0.3
    eps = 0.05

    def pot(a: np.ndarray, b: np.ndarray) -> float:
        # KL(P | a x b) regularisation, as OTT's reg_ot_cost.
        kwargs = {"metric": "sqeuclidean", "reg": eps, "reg_type": "KL", "tol": 1e-8}
        return float(ot.solve_sample(a, b, max_iter=20_000, **kwargs).value)

    expected = pot(x, y) - 0.5 * (pot(x, x) + pot(y, y))
    settings = packaged_sinkhorn(epsilon=eps, threshold=1e-6, pad_multiple=64)
    result = sinkhorn_divergence(x.astype(np.float32), y.astype(np.float32), settings)
    assert result.divergence == pytest.approx(expected, rel=1e-2)
    assert result.xy.converged and result.xx.converged and result.yy.converged
