"""Seeded draws: equal-size samples per group, long-text passages, the training sample.

Every random choice comes from a generator derived from (seed, purpose), so a draw depends
only on the job's seed and what it is for, never on the order in which stages run.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from regbias.data.corpus import TextSet
from regbias.errors import ConfigError, SampleSizeError

SizePolicy = Literal["error", "all"]
POLICIES = get_args(SizePolicy)


def rng_for(seed: int, *purpose: str | int) -> np.random.Generator:
    """A generator that depends only on ``seed`` and the ``purpose`` labels.

    Labels are hashed with CRC32 (stable across processes, unlike ``hash``).
    """
    words = [zlib.crc32(str(p).encode("utf-8")) for p in purpose]
    return np.random.default_rng(np.random.SeedSequence([int(seed), *words]))


@dataclass(frozen=True)
class Draw:
    """Indices drawn from one group.

    Attributes:
        group: the group's name.
        indices: positions in the group's TextSet, without repetition.
        requested: the size asked for.
        available: the group's size.
        whole_group: True when the group was smaller than asked and the ``all`` policy took
            it whole.
    """

    group: str
    indices: np.ndarray
    requested: int
    available: int
    whole_group: bool = False

    @property
    def size(self) -> int:
        """The number of texts drawn."""
        return len(self.indices)


@dataclass(frozen=True)
class TokenBudget:
    """The encoder's window and how to count a text's tokens in it (the app layer gives both).

    Attributes:
        max_tokens: the most tokens the encoder embeds of one text (its ``max_length``),
            special tokens included; the rest of a longer text is cut.
        count: the tokens the encoder's tokenizer makes of a text, special tokens included,
            without truncation.
    """

    max_tokens: int
    count: Callable[[str], int]

    def fits(self, text: str) -> bool:
        """Whether the encoder embeds ``text`` in full."""
        return self.count(text) <= self.max_tokens


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ConfigError(f"unknown sampling.policy '{policy}': use one of {', '.join(POLICIES)}")


def draw_indices(
    group: str, available: int, size: int, rng: np.random.Generator, policy: SizePolicy = "error"
) -> Draw:
    """Draw ``size`` distinct positions out of ``available``.

    Raises:
        SampleSizeError: the group is smaller than ``size`` and the policy is ``error``.
    """
    _check_policy(policy)
    if size <= 0:
        raise ConfigError(f"a draw from group '{group}' must ask for at least 1 text, not {size}")
    if available < size:
        if policy == "error":
            raise SampleSizeError(
                f"group '{group}' has {available} texts but a draw asks for {size}: lower the "
                f"draw size, or set sampling.policy=all to take such a group whole (logged)"
            )
        return Draw(group, rng.permutation(available), size, available, whole_group=True)
    return Draw(group, rng.choice(available, size=size, replace=False), size, available)


def common_size(groups: dict[str, TextSet], size: int, policy: SizePolicy) -> int:
    """The size every group can give when sizes must be equal (LDA).

    Under ``error`` a group smaller than ``size`` raises; under ``all`` the smallest group's size
    is used for every group.
    """
    _check_policy(policy)
    smallest_name = min(groups, key=lambda g: len(groups[g]))
    smallest = len(groups[smallest_name])
    if smallest >= size:
        return size
    if policy == "error":
        raise SampleSizeError(
            f"group '{smallest_name}' has {smallest} texts but equal-size draws ask for {size}: "
            f"lower the size, or set sampling.policy=all to use {smallest} for every group"
        )
    return smallest


def long_text_passages(
    texts: list[str],
    n_passages: int,
    texts_per_passage: int,
    rng: np.random.Generator,
    group: str = "",
    setting: str = "n_passages",
    budget: TokenBudget | None = None,
    per_setting: str = "texts_per_passage",
) -> tuple[list[str], list[np.ndarray]]:
    """Passages that partition a permuted sample of one group's texts, joined by spaces.

    ``group``, ``setting`` and ``per_setting`` (the config keys of ``n_passages`` and
    ``texts_per_passage``) are named by the error.

    The texts are permuted and cut into consecutive passages, so no text occurs twice in one
    draw: passages that shared texts would be near-duplicates, and a relabelling that split
    them over both sides of a pair would make exchangeable groups look apart. Without a
    ``budget`` every passage joins ``texts_per_passage`` texts. With one, a passage takes the
    next text while the joined passage still fits the encoder's window, up to
    ``texts_per_passage``; the text that does not fit opens the next passage (a single text
    longer than the window makes a passage alone, cut by the encoder). Either way the passages
    partition a prefix of the permutation of at most ``n_passages x texts_per_passage`` texts.

    Returns:
        The passages and, for each, the positions of the texts it joins.

    Raises:
        SampleSizeError: fewer than ``n_passages x texts_per_passage`` texts.
    """
    if texts_per_passage < 1 or n_passages < 1:
        raise ConfigError("long text needs at least 1 passage of at least 1 text")
    needed = n_passages * texts_per_passage
    if len(texts) < needed:
        named = f"group {group!r}" if group else "the group"
        raise SampleSizeError(
            f"{n_passages} passages of {texts_per_passage} distinct texts need {needed} texts "
            f"but {named} has only {len(texts)} for this draw: lower {setting} or {per_setting}"
        )
    order = rng.permutation(len(texts))
    if budget is None:
        members = [
            order[i * texts_per_passage : (i + 1) * texts_per_passage] for i in range(n_passages)
        ]
    else:
        members = _fitted_passages(texts, order, n_passages, texts_per_passage, budget)
    return [" ".join(texts[i] for i in m) for m in members], members


def _fitted_passages(
    texts: list[str], order: np.ndarray, n_passages: int, most: int, budget: TokenBudget
) -> list[np.ndarray]:
    """Consecutive runs of ``order``, each as long as fits the budget (1 to ``most`` texts)."""
    members = []
    start = 0
    for _ in range(n_passages):
        joined, end = texts[order[start]], start + 1
        # end < start + most <= n_passages * most <= len(texts): never past the permutation.
        while end - start < most:
            candidate = f"{joined} {texts[order[end]]}"
            if not budget.fits(candidate):
                break
            joined, end = candidate, end + 1
        members.append(order[start:end])
        start = end
    return members
