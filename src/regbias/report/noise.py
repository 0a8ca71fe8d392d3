"""The report's lines on noise: floors per group, pairs above them, solves left out."""

from __future__ import annotations

import numpy as np

from regbias.distances.matrix import DistanceMatrix

__all__ = ["above_noise_lines", "noise_section"]


def _pairs(matrix: DistanceMatrix) -> list[tuple[int, int]]:
    k = len(matrix.groups)
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def above_noise_lines(matrices: dict[str, DistanceMatrix], alpha: float = 0.05) -> list[str]:
    """One sentence per distance: which pairs lie above the noise floor.

    A pair is above noise when its relabelling p-value is at most ``alpha`` (where the test
    ran), else when its excess over the mean floor exceeds twice the floors' pooled sd.
    """
    lines = []
    for name, matrix in matrices.items():
        excess = matrix.excess()
        if excess is None:
            continue
        pairs = _pairs(matrix)
        if matrix.p_above_noise is not None:
            above = [(i, j) for i, j in pairs if matrix.p_above_noise[i, j] <= alpha]
            rule = f"relabelling p <= {alpha:g}"
        else:
            sd = _floor_sd(matrix)
            above = [(i, j) for i, j in pairs if excess[i, j] > 2 * max(sd[i], sd[j])]
            rule = "excess > 2 x floor sd"
        named = ", ".join(f"{matrix.groups[i]}-{matrix.groups[j]}" for i, j in above) or "none"
        lines.append(f"`{name}`: {len(above)} of {len(pairs)} pairs above noise ({rule}): {named}.")
    return lines


def _floor_sd(matrix: DistanceMatrix) -> np.ndarray:
    return matrix.floor_sd if matrix.floor_sd is not None else np.zeros(len(matrix.groups))


def noise_section(matrices: dict[str, DistanceMatrix]) -> str:
    """Markdown: each distance's floor per group and the repetitions left out per pair."""
    parts = []
    for name, matrix in matrices.items():
        if matrix.floor is None and matrix.excluded is None:
            continue
        parts.append(f"### {name}")
        if matrix.floor is not None:
            cells = [
                f"{g} {f:.4g} ± {s:.2g}"
                for g, f, s in zip(matrix.groups, matrix.floor, _floor_sd(matrix), strict=True)
            ]
            parts.append("Floor (mean ± sd over repetitions): " + "; ".join(cells) + ".")
        if matrix.excluded is not None and matrix.excluded.any():
            left = [
                f"{matrix.groups[i]}-{matrix.groups[j]} {int(matrix.excluded[i, j])}"
                for i, j in _pairs(matrix)
                if matrix.excluded[i, j]
            ]
            parts.append(
                "Repetitions left out (a solve did not converge): " + ", ".join(left) + "."
            )
        else:
            parts.append("Every solve converged: no repetition was left out.")
    if not parts:
        return ""
    return "## Noise floors\n\n" + "\n\n".join(parts) + "\n"
