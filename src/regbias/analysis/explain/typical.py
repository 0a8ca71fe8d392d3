"""Typical texts of a pair: those furthest along the mean-difference of its sentence vectors.

A text's projection is ``(x - (mu_a + mu_b)/2) . u / |u|`` with ``u = mu_a - mu_b``, whatever
the test's statistic (docs/method.md, "What carries a difference").
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
