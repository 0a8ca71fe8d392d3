"""Distinguishing words of two groups: log-odds with an informative Dirichlet prior.

Monroe, Colaresi and Quinn (2008, "Fightin' words", eqs. 16, 19-22) on scikit-learn
``CountVectorizer`` tokens, the prior the pair's pooled counts or every group's
(docs/method.md, "What carries a difference"). ``z`` ranks words: descriptive, not a test.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

#: The columns of a pair's word table.
WORD_COLUMNS = ("word", "z", "delta", "count_a", "count_b", "prior")
#: A word: two or more letters or digits (scikit-learn's default token).
_TOKEN = r"(?u)\b\w\w+\b"
_TOKEN_PATTERN = re.compile(_TOKEN)


def has_words(texts: Sequence[str]) -> bool:
    """Whether any of ``texts`` holds a word (emoji, punctuation and single letters are none)."""
    return any(_TOKEN_PATTERN.search(t) for t in texts)


@dataclass(frozen=True)
class CountedTexts:
    """Every distinct text's word counts, counted once: a side's counts are a sum of rows.

    A side's words and counts are those of its texts counted alone (:func:`word_counts`),
    without counting a group's texts again for every pair it is in.

    Attributes:
        words: the words of every text, sorted.
        matrix: ``(texts, words)`` counts, a row per distinct text.
        rows: each text's row.
    """

    words: np.ndarray
    matrix: sparse.csr_matrix
    rows: dict[str, int]

    @classmethod
    def of(cls, texts: Sequence[str]) -> CountedTexts:
        """``texts`` counted (each distinct text once)."""
        distinct = list(dict.fromkeys(texts))
        vectorizer = CountVectorizer(lowercase=True, token_pattern=_TOKEN)
        try:
            matrix = sparse.csr_matrix(vectorizer.fit_transform(distinct))
            words = vectorizer.get_feature_names_out()
        except ValueError:  # no token at all ("empty vocabulary")
            matrix, words = sparse.csr_matrix((len(distinct), 0), dtype=np.int64), np.array([])
        return cls(np.asarray(words, dtype=object), matrix, {t: i for i, t in enumerate(distinct)})

    def counts(self, *sides: Sequence[str]) -> tuple[list[str], list[np.ndarray]]:
        """As :func:`word_counts` of ``sides`` (every text counted here)."""
        sums = [
            np.asarray(self.matrix[[self.rows[t] for t in side]].sum(axis=0)).ravel()
            for side in sides
        ]
        used = np.flatnonzero(np.sum(sums, axis=0)) if sums else np.zeros(0, dtype=np.int64)
        if not len(used):
            return [], [np.zeros(0) for _ in sides]
        return self.words[used].tolist(), [total[used] for total in sums]

    def totals(self) -> dict[str, int]:
        """Every word's token count over all the texts (:func:`corpus_counts` of them)."""
        totals = np.asarray(self.matrix.sum(axis=0)).ravel().astype(int).tolist()
        return dict(zip(self.words.tolist(), totals, strict=True))


def word_counts(*sides: Sequence[str]) -> tuple[list[str], list[np.ndarray]]:
    """The words (sorted) the ``sides`` (texts each) use, and each side's counts of them."""
    return CountedTexts.of([t for side in sides for t in side]).counts(*sides)


def corpus_counts(texts: Sequence[str]) -> dict[str, int]:
    """Every word's token count in ``texts`` (the ``corpus`` prior, counted once a study)."""
    words, (counts,) = word_counts(texts)
    return dict(zip(words, counts.astype(int).tolist(), strict=True))


def log_odds(
    count_a: np.ndarray, count_b: np.ndarray, prior: np.ndarray, alpha_0: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Monroe et al.'s ``delta`` and ``z`` of every word (positive: side a's word).

    ``prior``: the Dirichlet prior's count of each word (all > 0); ``alpha_0``: its total over
    its whole vocabulary (None: ``prior``'s sum).
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
    counted: CountedTexts | None = None,
) -> pd.DataFrame:
    """The ``top`` words of each side by log-odds ``z``: :data:`WORD_COLUMNS`, side a's first.

    ``corpus``: the prior's counts (:func:`corpus_counts` of every group's texts; None: the
    pair's own, pooled). A word counts at least its pair count, so no prior count is zero.
    Where one side has no word at all (emoji or punctuation only), nothing can be ranked
    against it (under the pair's prior every z is 0): the other side's ``top`` most used words,
    by count, with NaN ``z`` and ``delta``. ``counted``: the sides' texts counted already
    (None: counted here).
    """
    count = counted.counts if counted is not None else word_counts
    words, (y_a, y_b) = count(side_a, side_b)
    if not words:
        return pd.DataFrame(columns=list(WORD_COLUMNS))
    if not y_a.sum() or not y_b.sum():
        used = pd.DataFrame(
            {"word": words, "z": np.nan, "delta": np.nan, "count_a": y_a, "count_b": y_b}
        ).astype({"count_a": int, "count_b": int})
        used["prior"] = used["count_a"] + used["count_b"]
        if corpus is not None:
            used["prior"] = np.maximum(used["prior"], [corpus.get(w, 0) for w in words])
        own = "count_a" if y_a.sum() else "count_b"
        used = used.sort_values([own, "word"], ascending=[False, True]).head(top)
        return used.astype({"prior": int}).reset_index(drop=True)
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
