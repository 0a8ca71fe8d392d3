"""One vector per text from an encoder's outputs: the pooling shared by embedding and training."""

from __future__ import annotations

from typing import Any, Literal, get_args

import torch

from regbias.errors import ConfigError

Pooling = Literal["pooler", "cls", "mean"]
POOLINGS: tuple[str, ...] = get_args(Pooling)


def check_pooling(pooling: str, has_pooler: bool | None) -> None:
    """Raise :class:`ConfigError` for a pooling the encoder cannot provide.

    ``has_pooler`` None (unknown) allows ``pooler``.
    """
    if pooling not in POOLINGS:
        raise ConfigError(f"unknown pooling {pooling!r}: choose one of {', '.join(POOLINGS)}")
    if pooling == "pooler" and has_pooler is False:
        raise ConfigError(
            "pooling 'pooler' needs an encoder with a pooler layer, and this one has none: "
            "set the encoder's pooling to 'cls' or 'mean'"
        )


def pool(outputs: Any, attention_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """The pooled vector of each text of a batch.

    Args:
        outputs: a Hugging Face encoder's output (``last_hidden_state`` and, for ``pooler``,
            ``pooler_output``).
        attention_mask: ``(batch, tokens)``, 1 for real tokens and 0 for padding.
        pooling: ``pooler`` (the pooler output), ``cls`` (the first token's last hidden
            state) or ``mean`` (mean of the last hidden states of the real tokens).

    Returns:
        ``(batch, hidden)`` pooled vectors.

    Raises:
        ConfigError: an unknown pooling, or ``pooler`` from a model without a pooler.
    """
    if pooling == "pooler":
        if getattr(outputs, "pooler_output", None) is None:
            check_pooling(pooling, False)
        return outputs.pooler_output
    check_pooling(pooling, None)
    hidden = outputs.last_hidden_state
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
