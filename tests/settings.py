"""Settings for tests that call a stage's functions directly: the packaged YAML's, changed."""

from __future__ import annotations

from typing import Any

from regbias.config_files import packaged
from regbias.distances.lda import LdaSettings
from regbias.distances.sinkhorn import SinkhornSettings


def packaged_sinkhorn(**changes: Any) -> SinkhornSettings:
    """``distance.sinkhorn``'s solver settings as shipped, with ``changes``."""
    return packaged(SinkhornSettings, "distance", "sinkhorn", **changes)


def packaged_lda(**changes: Any) -> LdaSettings:
    """``distance.lda``'s settings as shipped, with ``changes``."""
    return packaged(LdaSettings, "distance", "lda", **changes)
