"""Runs left RUNNING by a process that died (SIGKILL, power loss) are closed FAILED on start.

Every run records its owner: pid, host and process start (a recycled pid is no owner). A run
owned by another host is left alone: its liveness cannot be checked from here.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

OWNER_PID = "regbias.owner.pid"
OWNER_HOST = "regbias.owner.host"
OWNER_START = "regbias.owner.start"


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot), None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces and parentheses, so split after it.
    return stat.rsplit(")", 1)[1].split()[19]


def owner_tags(pid: int | None = None) -> dict[str, str]:
    """The owner tags of a run started by this process (or by ``pid``)."""
    pid = os.getpid() if pid is None else pid
    return {
        OWNER_PID: str(pid),
        OWNER_HOST: socket.gethostname(),
        OWNER_START: process_start(pid) or "unknown",
    }


@dataclass(frozen=True)
class Owner:
    """The process that opened a run: its id, host and start time."""

    pid: int
    host: str
    start: str


def is_alive(owner: Owner) -> bool | None:
    """True/False for an owner on this host; None when it lives elsewhere (cannot tell)."""
    if owner.host != socket.gethostname():
        return None
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    start = process_start(owner.pid)
    if start is None or owner.start == "unknown":
        return True  # the pid exists; without start times a recycled pid looks alive
    return start == owner.start


def _owner(tags: Mapping[str, str]) -> Owner | None:
    """A run's owner from its tags; None for a run without them (started before they existed)."""
    if OWNER_PID not in tags or OWNER_HOST not in tags:
        return None
    return Owner(int(tags[OWNER_PID]), tags[OWNER_HOST], tags.get(OWNER_START, "unknown"))


def live_owner(tags: dict[str, str]) -> str | None:
    """``pid 123 on host h`` when a run's owner may still run (or is on another host), else None."""
    owner = _owner(tags)
    if owner is None or is_alive(owner) is False:
        return None
    return f"pid {owner.pid} on host {owner.host}"


def reap_dead_runs(client: MlflowClient, experiment_id: str) -> list[str]:
    """Mark FAILED the RUNNING runs of the experiment whose owner process is dead; their ids."""
    runs = client.search_runs(
        [experiment_id], filter_string="attributes.status = 'RUNNING'", max_results=1000
    )
    closed = []
    for run in runs:
        owner = _owner(run.data.tags)
        if owner is None or is_alive(owner) is not False:
            continue
        try:
            client.set_tag(run.info.run_id, "error.type", "owner process died")
            client.set_terminated(run.info.run_id, status="FAILED")
        except Exception:  # a read-only store: the start fails on its own later
            log.exception("could not close the dead run %s", run.info.run_id)
            continue
        closed.append(run.info.run_id)
    return closed


def report_reaped(run_ids: list[str]) -> None:
    """One line on stderr naming the dead runs just closed (nothing when there are none)."""
    if run_ids:
        print(
            f"regbias: marked {len(run_ids)} run(s) FAILED whose process had died: "
            f"{', '.join(run_ids)}",
            file=sys.stderr,
        )
