"""Typical texts of a pair: those furthest along the mean-difference of its sentence vectors.

The direction is the test of record's own statistic for ``mean`` (the difference of the
sides' mean vectors, ``u = mu_a - mu_b``); a text's projection is ``(x - (mu_a + mu_b)/2) . u
/ |u|``, so side a's typical texts have the largest projections of side a's texts and side b's
the smallest of side b's. With ``energy`` or ``mmd`` the direction is still the means'.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: The columns of a pair's typical texts.
TYPICAL_COLUMNS = ("side", "text", "projection")


def typical_texts(
    side_a: Sequence[str],
    side_b: Sequence[str],
    vectors_a: np.ndarray,
    vectors_b: np.ndarray,
    k: int,
) -> pd.DataFrame:
    """Each side's ``k`` texts furthest toward its own side along the mean difference.

    Args:
        side_a: side a's texts, in the order of ``vectors_a``.
        side_b: side b's texts, in the order of ``vectors_b``.
        vectors_a: ``(n_a, d)`` sentence vectors of side a.
        vectors_b: ``(n_b, d)`` sentence vectors of side b.
        k: texts kept a side.

    Returns:
        :data:`TYPICAL_COLUMNS` (``side`` ``a`` or ``b``): side a's by falling projection,
        then side b's by rising projection (most negative first).
    """
    a, b = np.asarray(vectors_a, dtype=float), np.asarray(vectors_b, dtype=float)
    mu_a, mu_b = a.mean(axis=0), b.mean(axis=0)
    direction = mu_a - mu_b
    norm = float(np.linalg.norm(direction))
    unit = direction / norm if norm > 0 else direction
    middle = (mu_a + mu_b) / 2
    project_a, project_b = (a - middle) @ unit, (b - middle) @ unit
    top_a = np.argsort(-project_a, kind="stable")[:k]
    top_b = np.argsort(project_b, kind="stable")[:k]
    rows = [("a", side_a[i], float(project_a[i])) for i in top_a]
    rows += [("b", side_b[i], float(project_b[i])) for i in top_b]
    return pd.DataFrame(rows, columns=list(TYPICAL_COLUMNS))
