"""Token clouds and pooled vectors of one job's texts from one forward pass, cached together.

A job needs the token vectors of its short and long texts (Sinkhorn, energy) and the pooled
vectors of its sentences and LDA passages, largely the same texts. :func:`embed_jointly`
forwards every text that misses either output once and stores both outputs of that pass: the
token vectors of the texts that need them, the pooled vectors of every text forwarded (one
row each, so a later pooled request of a token text is a cache hit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import Encoder, Padding


@dataclass(frozen=True)
class JointEmbeddings:
    """One job's embeddings, by text.

    Attributes:
        tokens: token vectors ``(n_tokens, d)`` of each text asked for as tokens.
        pooled: the pooled vector ``(d,)`` of each text asked for as pooled.
    """

    tokens: dict[str, np.ndarray]
    pooled: dict[str, np.ndarray]


def embed_jointly(
    encoder: Encoder,
    cache: EmbeddingCache | None,
    token_texts: Sequence[str],
    pooled_texts: Sequence[str],
    *,
    padding: Padding = "real",
    batch_size: int = 64,
) -> JointEmbeddings:
    """Token vectors of ``token_texts`` and pooled vectors of ``pooled_texts``, one pass each.

    ``cache`` None forwards every distinct text once now.

    Returns:
        The embeddings, the same as ``embed_tokens`` and ``embed_pooled`` give up to float
        rounding (a text may share its batch with other texts than there).
    """
    if pooled_texts:
        encoder.pooled([])  # a pooling the model cannot give fails before any work
    identity = encoder.spec.identity
    tokens_kind, pooled_kind = f"tokens-{padding}", f"pooled-{encoder.spec.pooling}"
    if cache is None:
        need_tokens, need = list(dict.fromkeys(token_texts)), [*token_texts, *pooled_texts]
    else:
        need_tokens = cache.missing(tokens_kind, identity, token_texts)
        need = [*need_tokens, *cache.missing(pooled_kind, identity, pooled_texts)]
    forward = list(dict.fromkeys(need))
    tokens, pooled = encoder.embed(forward, padding=padding, batch_size=batch_size)
    by_text = dict(zip(forward, tokens, strict=True))
    if cache is None:
        vectors = dict(zip(forward, pooled, strict=True)) if pooled is not None else {}
        return JointEmbeddings(
            {t: by_text[t] for t in token_texts}, {t: vectors[t] for t in pooled_texts}
        )
    if need_tokens:
        cache.put(tokens_kind, identity, need_tokens, [by_text[t] for t in need_tokens])
    if pooled is not None:
        new = cache.missing(pooled_kind, identity, forward)
        if new:
            rows = {t: i for i, t in enumerate(forward)}
            cache.put(pooled_kind, identity, new, pooled[[rows[t] for t in new]])
    cached_tokens = embed_tokens(encoder, cache, token_texts, padding, batch_size)
    cached_pooled = embed_pooled(encoder, cache, pooled_texts, batch_size)
    return JointEmbeddings(
        dict(zip(token_texts, cached_tokens, strict=True)),
        dict(zip(pooled_texts, cached_pooled, strict=True)),
    )
