"""The Sinkhorn divergence's own pair tests: the same texts with their group labels shuffled.

Texts, not points, are relabelled (a text's tokens stay together), with one joint relabelling
of every repetition (:mod:`regbias.distances.relabel`). Secondary and exploratory: the pair
verdicts are the test of record's (:mod:`regbias.analysis.pair_test`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from regbias.console import progress_bar as tqdm
from regbias.distances.relabel import NullSums, repetition_keys, side_masks
from regbias.distances.sinkhorn.divergence import (
    DivergenceResult,
    ResolvedSinkhorn,
    divergences,
    padded_points,
    usable,
)

__all__ = ["sinkhorn_relabellings"]


def sinkhorn_relabellings(
    texts: list[dict[str, list[np.ndarray]]],
    units: list[dict[str, list[tuple[str, ...]]]] | None,
    table: pd.DataFrame,
    settings: ResolvedSinkhorn,
    relabellings: int,
    relabel_seed: int,
    *,
    exclude_unconverged: bool,
    progress: bool = True,
) -> np.ndarray:
    """The joint relabellings of every pair's texts, summed over the counted repetitions.

    In every repetition whose observed divergence enters the pair's mean (the rows of
    ``table`` that :func:`usable` keeps), relabelling ``k`` splits the pooled texts of the two
    groups by their keys (:mod:`regbias.distances.relabel`) and the divergence of the split is
    solved; a relabelled solve that does not converge counts as extreme (NaN).

    Args:
        texts: ``texts[r][group]`` = one ``(n_tokens, d)`` array per drawn text.
        units: ``units[r][group]`` = the corpus texts each drawn text joins; None treats every
            drawn text as a unit of its own.
        table: the matrix's diagnostics (which repetitions of a pair are counted).
        settings: the run's resolved solver settings.
        relabellings: joint relabellings ``N``.
        relabel_seed: the sweep-level seed of the relabellings.
        exclude_unconverged: the matrix's rule for leaving a repetition out.
        progress: show a progress bar.

    Returns:
        ``(N, K, K)`` sums (see :class:`regbias.distances.relabel.NullSums`).
    """
    groups = list(texts[0])
    null = NullSums.zeros(relabellings, len(groups))
    rows = table[usable(table, exclude_unconverged)]
    with tqdm(total=len(rows) * relabellings, desc="relabelling", disable=not progress) as bar:
        for row in rows.itertuples(index=False):
            rep, a, b = row.repetition, row.group_a, row.group_b
            sizes = {g: len(texts[rep][g]) for g in (a, b)}
            named = units[rep] if units else None
            keys = repetition_keys(sizes, named, rep, relabel_seed, relabellings).values()
            pooled = texts[rep][a] + texts[rep][b]
            pairs = []
            for side in side_masks(*keys):
                x = np.concatenate([t for t, s in zip(pooled, side, strict=True) if s])
                y = np.concatenate([t for t, s in zip(pooled, side, strict=True) if not s])
                pairs.append((x, y))
            # One padded size per pair and repetition (few distinct sizes: few compiles).
            size = padded_points(max(max(len(x), len(y)) for x, y in pairs), settings)
            results = divergences(pairs, settings, size)
            values = np.array([_counted(r) for r in results])
            null.add(groups.index(a), groups.index(b), values)
            bar.update(relabellings)
    return null.sums


def _counted(result: DivergenceResult) -> float:
    """A relabelled divergence, NaN (extreme) unless every term converged to a finite cost."""
    terms = (result.xy, result.xx, result.yy)
    ok = all(t.converged for t in terms) and np.isfinite(result.divergence)
    return float(result.divergence) if ok else float("nan")
