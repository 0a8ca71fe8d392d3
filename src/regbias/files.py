"""File-system helpers shared by every layer."""

from __future__ import annotations

import os
from pathlib import Path


def file_mode() -> int:
    """The mode a new file gets under the process's umask (``0o644`` under ``022``).

    Read from ``/proc`` where it can be, since setting the umask to read it races with threads.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask
