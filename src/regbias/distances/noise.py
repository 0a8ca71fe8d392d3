"""How far apart two draws of the same population are: noise floors and relabelling tests.

Distances between point clouds have no natural zero: two disjoint draws of one group are
already apart. The *floor* of a group is the divergence between its main draw and a twin draw
of the same size; a pair's *excess* is its distance minus the mean of its two floors. The
*relabelling test* asks whether a pair's distance exceeds what the same texts give when their
group labels are shuffled (texts, not points, are relabelled: a text's tokens stay together),
with one joint relabelling of every repetition (:mod:`regbias.distances.relabel`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from regbias.console import progress_bar as tqdm
from regbias.distances.relabel import NullSums, repetition_keys, side_masks
from regbias.distances.sinkhorn import (
    DivergenceResult,
    ResolvedSinkhorn,
    divergence_from,
    divergences,
    exact_divergences,
    padded_points,
    self_costs,
    usable,
)

__all__ = ["sinkhorn_floors", "sinkhorn_relabellings"]


def sinkhorn_floors(
    main: list[dict[str, np.ndarray]],
    twins: list[dict[str, np.ndarray]],
    table: pd.DataFrame,
    settings: ResolvedSinkhorn,
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
        size: the run's padded size, raised here where a twin holds more points (twins are
            drawn apart from the main clouds: a twin's texts may be longer).
        progress: show a progress bar.

    Returns:
        ``(floor, floor_sd)``, each ``(K,)`` in the groups' order; a repetition whose value is
        not finite is left out.
    """
    groups = list(main[0])
    size = max(size, padded_points(max(len(t[g]) for t in twins for g in groups), settings))
    known = self_costs(table)
    values = np.full((len(main), len(groups)), np.nan)
    total = len(main) * len(groups)
    with tqdm(total=total, desc="noise floor", disable=not progress) as bar:
        if settings.solver == "exact":  # every floor of the job at once, on all cores
            pairs = [(d[g], t[g]) for d, t in zip(main, twins, strict=True) for g in groups]
            results = exact_divergences(pairs, bar.update)
            values[:] = np.reshape([result.divergence for result in results], values.shape)
        else:
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
