"""The study's words for its groups, defined once."""

from __future__ import annotations

__all__ = ["BASELINE", "MIXED"]

#: A job's general training sample; as an evaluation group, each fold model's held-out fold.
BASELINE = "baseline"
#: Every regional group pooled into one (Sentiment140).
MIXED = "mixed"
