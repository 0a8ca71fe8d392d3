"""The sweep's ledger of job outcomes."""

from __future__ import annotations

__all__ = ["DONE"]

#: Job statuses that count as done: the job ran to its end, or a finished run was reused.
DONE = ("FINISHED", "REUSED")
