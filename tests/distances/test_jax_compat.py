"""The ott-jax/jax shim: applied only on request, and still needed by the pinned jax."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from jax.interpreters import batching

from regbias.distances.sinkhorn import jax_compat, solve_ot
from tests.settings import packaged_sinkhorn


def test_pinned_jax_still_needs_the_shim():
    # A fresh interpreter (the shim may be applied in this one). When this fails, jax exports
    # is_vmappable again: delete distances/jax_compat.py and its call.
    code = "from jax.interpreters import batching; print(hasattr(batching, 'is_vmappable'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", "jax exports is_vmappable again: remove the shim"


def test_online_mode_solves_after_the_shim():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 3)), rng.normal(1.0, 1.0, size=(40, 3))
    settings = packaged_sinkhorn(epsilon=0.5, anneal=False, pad_multiple=8)
    dense = solve_ot(x, y, settings)
    online = solve_ot(
        x, y, packaged_sinkhorn(epsilon=0.5, anneal=False, pad_multiple=8, batch_size=16)
    )
    assert hasattr(batching, "is_vmappable") and not jax_compat.online_mode_needs_shim()
    assert online.converged and abs(online.cost - dense.cost) < 1e-3 * abs(dense.cost)
