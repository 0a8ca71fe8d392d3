"""Distinguishing words of two groups: log-odds with an informative Dirichlet prior.

Monroe, Colaresi and Quinn (2008, "Fightin' words", eqs. 16, 19-22): with ``y_w`` a word's
count on one side, ``n`` the side's tokens, ``alpha_w`` the prior's count of the word and
``alpha_0`` their sum,

    delta_w = log((y_aw + alpha_w) / (n_a + alpha_0 - y_aw - alpha_w))
            - log((y_bw + alpha_w) / (n_b + alpha_0 - y_bw - alpha_w))
    sigma_w^2 = 1 / (y_aw + alpha_w) + 1 / (y_bw + alpha_w),   z_w = delta_w / sigma_w.

The prior is the pair's pooled counts (``pair``) or every group's (``corpus``). Words are
scikit-learn ``CountVectorizer`` tokens (lower-cased words of two or more letters or digits),
not the encoder's word pieces: a reader reads words. ``z`` ranks words; it is descriptive,
not a test (the words are chosen by it and no multiplicity is held).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

#: The columns of a pair's word table.
WORD_COLUMNS = ("word", "z", "delta", "count_a", "count_b", "prior")
#: A word: two or more letters or digits (scikit-learn's default token).
_TOKEN = r"(?u)\b\w\w+\b"


def word_counts(*sides: Sequence[str]) -> tuple[list[str], list[np.ndarray]]:
    """Each side's token count of every word the sides use.

    Args:
        sides: texts of each side (any number of sides).

    Returns:
        The words (sorted) and, per side, its counts in the words' order.
    """
    texts = [t for side in sides for t in side]
    if not any(t.strip() for t in texts):
        return [], [np.zeros(0) for _ in sides]
    vectorizer = CountVectorizer(lowercase=True, token_pattern=_TOKEN)
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # no token at all ("empty vocabulary")
        return [], [np.zeros(0) for _ in sides]
    words = list(vectorizer.get_feature_names_out())
    counts, start = [], 0
    for side in sides:
        counts.append(np.asarray(matrix[start : start + len(side)].sum(axis=0)).ravel())
        start += len(side)
    return words, counts


def corpus_counts(texts: Sequence[str]) -> dict[str, int]:
    """Every word's token count in ``texts`` (the ``corpus`` prior, counted once a study)."""
    words, (counts,) = word_counts(texts)
    return dict(zip(words, counts.astype(int).tolist(), strict=True))


def log_odds(
    count_a: np.ndarray, count_b: np.ndarray, prior: np.ndarray, alpha_0: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Monroe et al.'s ``delta`` and ``z`` of every word (positive: side a's word).

    Args:
        count_a: side a's count of each word.
        count_b: side b's count of each word.
        prior: the Dirichlet prior's count of each word (all > 0).
        alpha_0: the prior's total count over its whole vocabulary (None: ``prior``'s sum).
    """
    y_a, y_b, alpha = (np.asarray(x, dtype=float) for x in (count_a, count_b, prior))
    n_a, n_b = y_a.sum(), y_b.sum()
    alpha_0 = alpha.sum() if alpha_0 is None else max(float(alpha_0), alpha.sum())
    delta = np.log((y_a + alpha) / (n_a + alpha_0 - y_a - alpha)) - np.log(
        (y_b + alpha) / (n_b + alpha_0 - y_b - alpha)
    )
    sigma = np.sqrt(1.0 / (y_a + alpha) + 1.0 / (y_b + alpha))
    return delta, delta / sigma


def distinguishing_words(
    side_a: Sequence[str],
    side_b: Sequence[str],
    top: int,
    corpus: dict[str, int] | None = None,
) -> pd.DataFrame:
    """The ``top`` words of each side by log-odds ``z``, side a's first (z > 0) then side b's.

    Args:
        side_a: the texts of side a.
        side_b: the texts of side b.
        top: words kept each way.
        corpus: the prior's counts (:func:`corpus_counts` of every group's texts); None: the
            pair's own, pooled. A word counts at least its pair count (the pair's texts are
            the corpus's), so no prior count is zero.

    Returns:
        :data:`WORD_COLUMNS`, side a's words by falling z, then side b's by rising z.
    """
    words, (y_a, y_b) = word_counts(side_a, side_b)
    if not words:
        return pd.DataFrame(columns=list(WORD_COLUMNS))
    prior, alpha_0 = y_a + y_b, None
    if corpus is not None:
        prior = np.maximum(prior, np.array([corpus.get(w, 0) for w in words], dtype=float))
        alpha_0 = float(sum(corpus.values()))
    delta, z = log_odds(y_a, y_b, prior, alpha_0)
    table = pd.DataFrame(
        {"word": words, "z": z, "delta": delta, "count_a": y_a, "count_b": y_b, "prior": prior}
    ).astype({"count_a": int, "count_b": int, "prior": int})
    ahead = table[table["z"] > 0].sort_values(["z", "word"], ascending=[False, True]).head(top)
    behind = table[table["z"] < 0].sort_values(["z", "word"]).head(top)
    return pd.concat([ahead, behind], ignore_index=True)
