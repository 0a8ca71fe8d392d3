"""A compatibility shim between ott-jax 0.6 and jax 0.10, applied explicitly where needed.

ott-jax 0.6.0's online (``batch_size``) point-cloud mode calls
``jax.interpreters.batching.is_vmappable``, which jax 0.10 no longer re-exports (it still lives
in ``jax._src``). :func:`ensure_online_mode` puts it back, once, and only when it is missing;
importing this module changes nothing. ``tests/distances/test_jax_compat.py`` fails as soon as a
jax release no longer needs the shim, so it gets removed rather than forgotten.
"""

from __future__ import annotations

from jax.interpreters import batching


def online_mode_needs_shim() -> bool:
    """Whether this jax lacks the public ``batching.is_vmappable`` that ott-jax calls."""
    return not hasattr(batching, "is_vmappable")


def ensure_online_mode() -> None:
    """Give OTT's online mode the helper it calls (a no-op where jax still exports it)."""
    if not online_mode_needs_shim():
        return
    from jax._src.interpreters import batching as batching_impl

    # Adds the attribute this jax no longer has, so the stubs rightly do not know it.
    batching.is_vmappable = batching_impl.is_vmappable  # type: ignore[attr-defined]
