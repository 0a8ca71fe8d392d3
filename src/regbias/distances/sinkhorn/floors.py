"""Noise floors of the Sinkhorn divergence: how far apart two draws of the same group are.

Distances between point clouds have no natural zero: two disjoint draws of one group are
already apart. The *floor* of a group is the divergence between its main draw and a twin draw
of the same size; a pair's *excess* is its distance minus the mean of its two floors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from regbias.console import progress_bar as tqdm
from regbias.distances.sinkhorn.divergence import (
    ResolvedSinkhorn,
    divergence_from,
    exact_divergences,
    padded_points,
    self_costs,
)


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
