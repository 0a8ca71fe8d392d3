"""The one pooling function shared by embedding (stages II/III) and fine-tuning (stage I)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from regbias.embeddings.pooling import check_pooling, pool
from regbias.errors import ConfigError

HIDDEN = torch.arange(2 * 3 * 2, dtype=torch.float32).reshape(2, 3, 2)
MASK = torch.tensor([[1, 1, 1], [1, 0, 0]])


def outputs(pooler: torch.Tensor | None = None) -> SimpleNamespace:
    return SimpleNamespace(last_hidden_state=HIDDEN, pooler_output=pooler)


def test_cls_is_the_first_token() -> None:
    assert torch.equal(pool(outputs(), MASK, "cls"), HIDDEN[:, 0])


def test_mean_leaves_padding_out() -> None:
    mean = pool(outputs(), MASK, "mean")
    assert torch.allclose(mean[0], HIDDEN[0].mean(dim=0))
    assert torch.equal(mean[1], HIDDEN[1, 0])  # one real token: its own vector


def test_mean_of_an_all_padding_row_is_zero_not_nan() -> None:
    mean = pool(outputs(), torch.zeros_like(MASK), "mean")
    assert torch.equal(mean, torch.zeros(2, 2))


def test_pooler_returns_the_pooler_output_or_says_what_to_do() -> None:
    pooled = torch.ones(2, 2)
    assert pool(outputs(pooled), MASK, "pooler") is pooled
    with pytest.raises(ConfigError, match="'cls' or 'mean'"):
        pool(outputs(None), MASK, "pooler")


def test_unknown_pooling_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown pooling 'max'"):
        pool(outputs(), MASK, "max")
    with pytest.raises(ConfigError, match="pooler layer"):
        check_pooling("pooler", has_pooler=False)
    check_pooling("pooler", has_pooler=None)  # unknown is allowed: checked at pooling time
