"""How much the Sinkhorn pair ranking depends on epsilon, down to the exact-OT limit.

Divergence values scale with epsilon, so the finding is the ranking of the pairs, not the
values. :func:`epsilon_sensitivity` recomputes one repetition's matrix at several epsilons and,
for clouds small enough, the unregularised optimal transport cost (POT's exact network-flow
solver). :func:`ranking_stability` compares the rankings with Kendall's tau.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from regbias.distances.sinkhorn.divergence import SinkhornSettings, sinkhorn_matrix
from regbias.distances.sinkhorn.exact import exact_ot
from regbias.distances.sinkhorn.settings import unresolved

# The ``epsilon`` of the exact-OT rows.
EXACT = "exact"
_COLUMNS = ["epsilon", "group_a", "group_b", "value", "converged", "note"]


def _sinkhorn_rows(
    clouds: dict[str, np.ndarray], settings: SinkhornSettings, epsilon: float
) -> list[tuple[Any, ...]]:
    # anneal_init None: resolve_settings derives the annealing start for this epsilon; the
    # exact limit has its own row, so every epsilon is solved by Sinkhorn.
    at_epsilon = replace(
        unresolved(settings), epsilon=float(epsilon), anneal_init=None, solver="sinkhorn"
    )
    _, table = sinkhorn_matrix([clouds], at_epsilon, progress=False)
    converged = table["xy_converged"] & table["xx_converged"] & table["yy_converged"]
    return [
        (float(epsilon), row.group_a, row.group_b, float(row.divergence), bool(ok), "")
        for row, ok in zip(table.itertuples(), converged, strict=True)
    ]


def _exact_rows(clouds: dict[str, np.ndarray], max_points: int) -> list[tuple[Any, ...]]:
    """Exact OT per pair; the debiasing terms vanish (``W(a, a) = 0``)."""
    groups = list(clouds)
    largest = max(len(c) for c in clouds.values())
    skip = largest > max_points
    note = f"skipped: a cloud has {largest} points > exact_max_points={max_points}" if skip else ""
    rows = []
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            value, converged = (np.nan, False) if skip else exact_ot(clouds[a], clouds[b])
            rows.append((EXACT, a, b, value, converged, note))
    return rows


def epsilon_sensitivity(
    clouds: dict[str, np.ndarray],
    settings: SinkhornSettings,
    epsilons: list[float],
    exact_max_points: int,
) -> pd.DataFrame:
    """One repetition's pairwise Sinkhorn divergences at several epsilons and at exact OT.

    Args:
        clouds: ``clouds[group]`` = ``(n_points, d)`` point cloud of one repetition.
        settings: the job's solver settings; only epsilon (and the annealing start derived
            from it) changes between the matrices.
        epsilons: epsilons in OTT units (cost ``|x - y|^2``).
        exact_max_points: compute the exact-OT limit only when every cloud has at most this
            many points (the network simplex is roughly cubic in the points).

    Returns:
        A long table, one row per (epsilon, pair): ``epsilon`` (a float, or ``"exact"``),
        ``group_a``, ``group_b``, ``value`` (NaN where skipped), ``converged`` (all three terms
        of the divergence, or the exact solver) and ``note`` (why a value is missing).
    """
    rows = []
    for epsilon in sorted(epsilons, reverse=True):
        rows += _sinkhorn_rows(clouds, settings, epsilon)
    rows += _exact_rows(clouds, exact_max_points)
    return pd.DataFrame(rows, columns=_COLUMNS)


def ranking_stability(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall tau between each epsilon's pair ranking and the references'.

    References: the smallest epsilon of the table and the exact limit (when computed); an
    epsilon is not compared with itself. Pairs missing a value on either side are left out.

    Returns:
        One row per (epsilon, reference): ``epsilon``, ``reference`` (``"smallest_epsilon"``
        or ``"exact"``), ``reference_epsilon``, ``kendall_tau``, ``p_value``, ``n_pairs``.
    """
    values = {
        key: frame.set_index(["group_a", "group_b"])["value"].dropna()
        for key, frame in table.groupby("epsilon", sort=False)
    }
    epsilons = sorted(key for key in values if key != EXACT)
    references = {"smallest_epsilon": epsilons[0]} if epsilons else {}
    if EXACT in values and len(values[EXACT]):
        references[EXACT] = EXACT
    rows = []
    for name, reference in references.items():
        for epsilon in (e for e in epsilons if e != reference):
            both = pd.concat([values[epsilon], values[reference]], axis=1, join="inner")
            tau, p_value = kendalltau(both.iloc[:, 0], both.iloc[:, 1])
            rows.append((epsilon, name, reference, float(tau), float(p_value), len(both)))
    columns = ["epsilon", "reference", "reference_epsilon", "kendall_tau", "p_value", "n_pairs"]
    return pd.DataFrame(rows, columns=columns)
