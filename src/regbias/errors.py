"""Errors a user can cause. The entry point prints their message alone and exits non-zero."""

from __future__ import annotations


class RegbiasError(Exception):
    """A mistake a user can fix: the message says what happened and what to do."""


class DataError(RegbiasError):
    """Missing, malformed or inconsistent data files."""


class ConfigError(RegbiasError):
    """An unknown name or an invalid value in the configuration."""


class SampleSizeError(RegbiasError):
    """A group holds fewer texts than a draw asks for under the ``error`` policy."""


class TrackingError(RegbiasError):
    """The MLflow store cannot be written (read-only, full disk, a failed schema migration)."""


class CacheError(RegbiasError):
    """The embedding cache cannot be written (full disk, no permission); names the path."""
