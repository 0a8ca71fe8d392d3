"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real study data: ``$REGBIAS_DATA_DIR``, else ``../shared/data`` next to the project."""
    configured = os.environ.get("REGBIAS_DATA_DIR")
    path = Path(configured) if configured else Path(__file__).parents[1] / "../shared/data"
    path = path.resolve()
    assert (path / "regional_sentiment140").is_dir(), f"no study data in {path}"
    return path
