"""Solver faults of issue 20 (items 6 and 14): an infinite epsilon, a stop during big solves."""

from __future__ import annotations

import numpy as np
import pytest

from regbias.app.settings import read_settings
from regbias.distances.sinkhorn import resolve_settings
from regbias.distances.sinkhorn import solve as ott_solve
from regbias.errors import ConfigError
from regbias.interrupt import StopRequested, request_stop
from tests.faults.conftest import composed
from tests.settings import packaged_sinkhorn


@pytest.mark.parametrize("key", ["epsilon", "epsilon_relative"])
def test_an_infinite_epsilon_is_refused_before_any_run(key):
    """Every solve at epsilon=inf was NaN while the run ended 0 with empty findings."""
    with pytest.raises(ConfigError, match=key):
        read_settings(composed(f"distance.sinkhorn.{key}=inf"))


def test_a_stop_is_seen_between_the_solves_of_a_large_batched_call(monkeypatch):
    """A SIGTERM during one batched call of 500 long clouds waited minutes for the call."""
    monkeypatch.setattr(ott_solve.jax, "default_backend", lambda: "cpu")
    monkeypatch.setattr(ott_solve, "CPU_CALL_ENTRIES", 64 * 64)  # one 64-point problem a call
    calls = []
    original = ott_solve.run_padded

    def solve_then_signal(problems, *args, **kwargs):
        calls.append(len(problems))
        out = original(problems, *args, **kwargs)
        request_stop()  # the signal arrives while the first problem is solved
        return out

    monkeypatch.setattr(ott_solve, "run_padded", solve_then_signal)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 4)).astype(np.float32)
    problems = [(*ott_solve.pad(x, None, 64), *ott_solve.pad(x + k, None, 64)) for k in range(6)]
    settings = resolve_settings(packaged_sinkhorn(epsilon=0.5, solver="sinkhorn"), [x])
    with pytest.raises(StopRequested):
        ott_solve.solve_many(problems, settings, 64, symmetric=False)
    assert calls == [1]  # stopped after the first problem, not after all six
