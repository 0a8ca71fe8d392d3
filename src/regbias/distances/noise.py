"""How far apart two draws of the same population are: noise floors and relabelling tests.

Distances between point clouds have no natural zero: two disjoint draws of one group are
already apart. The *floor* of a group is the divergence between its main draw and a twin draw
of the same size; a pair's *excess* is its distance minus the mean of its two floors. The
*relabelling test* asks whether a pair's distance exceeds what the same texts give when their
group labels are shuffled (texts, not points, are relabelled: a text's tokens stay together).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from regbias.console import progress_bar as tqdm
from regbias.distances.sinkhorn import (
    SinkhornSettings,
    divergence_from,
    padded_points,
    self_costs,
    usable,
)

__all__ = ["sinkhorn_floors", "relabelling_pvalues"]


def sinkhorn_floors(
    main: list[dict[str, np.ndarray]],
    twins: list[dict[str, np.ndarray]],
    table: pd.DataFrame,
    settings: SinkhornSettings,
    size: int,
    *,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Per group, mean and sd over repetitions of the main-vs-twin divergence.

    Args:
        main: ``main[r][group]``: the clouds the matrix was computed on.
        twins: ``twins[r][group]``: disjoint clouds of the same sizes.
        table: the matrix's diagnostics (its self terms are re-used, not solved again).
        settings: the run's resolved solver settings (the same epsilon as the matrix).
        size: the run's padded size.
        progress: show a progress bar.

    Returns:
        ``(floor, floor_sd)``, each ``(K,)`` in the groups' order; a repetition whose value is
        not finite is left out.
    """
    groups = list(main[0])
    known = self_costs(table)
    values = np.full((len(main), len(groups)), np.nan)
    total = len(main) * len(groups)
    with tqdm(total=total, desc="noise floor", disable=not progress) as bar:
        for r, (draw, twin) in enumerate(zip(main, twins, strict=True)):
            for k, group in enumerate(groups):
                result = divergence_from(
                    draw[group], twin[group], settings, size, known.get((r, group))
                )
                values[r, k] = result.divergence
                bar.update()
    values[~np.isfinite(values)] = np.nan
    counts = (~np.isnan(values)).sum(axis=0)
    floor = np.nansum(values, axis=0) / np.maximum(counts, 1)
    spread = np.nansum((values - floor) ** 2, axis=0) / np.maximum(counts - 1, 1)
    return floor, np.where(counts > 1, np.sqrt(spread), 0.0)


def relabelling_pvalues(
    texts: list[dict[str, list[np.ndarray]]],
    table: pd.DataFrame,
    settings: SinkhornSettings,
    relabellings: int,
    rng: np.random.Generator,
    *,
    progress: bool = True,
) -> tuple[np.ndarray, int]:
    """Permutation p-value per pair that its distance exceeds relabelled ones.

    In every repetition the texts of groups ``a`` and ``b`` are pooled, shuffled and split
    into two sets of the original sizes ``relabellings`` times; each split's divergence is one
    draw of the null. ``p = (1 + #null >= observed) / (1 + #null)``, counted over repetitions.

    Args:
        texts: ``texts[r][group]`` = one ``(n_tokens, d)`` array per drawn text.
        table: the matrix's diagnostics (observed divergence per repetition and pair).
        settings: the run's resolved solver settings.
        relabellings: relabelled splits per pair and repetition.
        rng: the generator of the splits.
        progress: show a progress bar.

    Returns:
        ``(p, total)``: the ``(K, K)`` p-values (NaN diagonal) and relabellings per pair.
    """
    groups = list(texts[0])
    size = _relabel_size(texts, settings)
    extreme = np.zeros((len(groups), len(groups)))
    total = np.zeros_like(extreme)
    rows = table[usable(table, exclude_unconverged=False)]
    with tqdm(total=len(rows) * relabellings, desc="relabelling", disable=not progress) as bar:
        for row in rows.itertuples(index=False):
            pooled = texts[row.repetition][row.group_a] + texts[row.repetition][row.group_b]
            n_a = len(texts[row.repetition][row.group_a])
            null = []
            for _ in range(relabellings):
                order = rng.permutation(len(pooled))
                x = np.concatenate([pooled[i] for i in order[:n_a]])
                y = np.concatenate([pooled[i] for i in order[n_a:]])
                null.append(divergence_from(x, y, settings, size).divergence)
                bar.update()
            i, j = groups.index(row.group_a), groups.index(row.group_b)
            null_values = np.asarray(null)
            extreme[i, j] += np.sum(null_values[np.isfinite(null_values)] >= row.divergence)
            total[i, j] += relabellings
    p = (1 + extreme + extreme.T) / (1 + total + total.T)
    np.fill_diagonal(p, np.nan)
    return p, int(total.max())


def _relabel_size(texts: list[dict[str, list[np.ndarray]]], settings: SinkhornSettings) -> int:
    """A padded size no relabelled cloud exceeds: the longest texts of any two groups pooled."""
    bound = 0
    for rep in texts:
        lengths = {g: sorted((len(t) for t in ts), reverse=True) for g, ts in rep.items()}
        for a, la in lengths.items():
            for b, lb in lengths.items():
                if a < b:
                    longest = sorted(la + lb, reverse=True)
                    bound = max(bound, sum(longest[: max(len(la), len(lb))]))
    return padded_points(bound, settings)
