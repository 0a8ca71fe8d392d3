"""The model hub, checked in a second: unreachable is one clear line, not a minute of retries.

``huggingface_hub`` retries an unreachable hub for about a minute and warns at every try. Before
a hub encoder loads, :func:`hub_offline` opens one TCP connection to the hub (``$HF_ENDPOINT``)
with a short timeout; when nothing answers the encoder loads from the local hub cache only.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

HUB_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


def path_hint(preset: str) -> str:
    """The overrides that load encoder ``preset`` from a local folder, as a user types them.

    ``conf/encoder/local.yaml`` turns the preset into a model folder's encoder and keeps its
    other settings (name, revision, max_length, pooling); the quotes keep the shell from
    reading the brackets.
    """
    return f"'encoder=[{preset},local]' encoder.location=DIR"


def hub_reachable(timeout_s: float = HUB_TIMEOUT_S) -> bool:
    """Whether the hub's host accepts a connection within ``timeout_s`` seconds."""
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        socket.create_connection((endpoint.hostname or "", port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` is set, or the hub does not answer: use the local hub cache only."""
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in _TRUE or not hub_reachable()


def one_line(error: BaseException) -> str:
    """The first line of an error's message (library messages run over several lines)."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
