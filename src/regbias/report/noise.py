"""The report's lines on noise: which pairs differ, floors per group, solves left out."""

from __future__ import annotations

import numpy as np

from regbias.distances import distance_label
from regbias.distances.matrix import DistanceMatrix
from regbias.report.escape import markdown_text


def _unusable(matrices: dict[str, DistanceMatrix]) -> dict[str, list[tuple[int, int]]]:
    """The distances without a single finite pair value, with their pairs."""
    found = {}
    for name, matrix in matrices.items():
        pairs = matrix.pair_indices()
        if pairs and not any(np.isfinite(matrix.mean[i, j]) for i, j in pairs):
            found[name] = pairs
    return found


def unusable_lines(matrices: dict[str, DistanceMatrix]) -> list[str]:
    """One sentence per distance without a single finite pair value, saying how to get one.

    Such a distance's correlations and pair tests say nothing; the report says so first.
    """
    return [
        f"**{markdown_text(name)} has no usable value**: {_why_unusable(matrices[name], pairs)}"
        for name, pairs in _unusable(matrices).items()
    ]


def unusable_warnings(matrices: dict[str, DistanceMatrix]) -> list[str]:
    """One short warning per distance without a usable value (why and the fix: the details)."""
    return [
        f"**{markdown_text(name)} has no usable value**: its correlations and pair tests say "
        "nothing (why, and the settings that fix it: the details below)."
        for name in _unusable(matrices)
    ]


def _why_unusable(matrix: DistanceMatrix, pairs: list[tuple[int, int]]) -> str:
    if not matrix.name.startswith("sinkhorn"):
        return "every pair's distance is undefined (NaN), so its correlations say nothing."
    config = matrix.config
    left = 0 if matrix.excluded is None else int(sum(matrix.excluded[i, j] for i, j in pairs))
    epsilon = config.get("epsilon")
    now = f" (now {epsilon:.4g})" if isinstance(epsilon, int | float) else ""
    return (
        f"{f'{left} of its solves' if left else 'its solves'} did not converge, so every "
        "pair's distance is undefined and its correlations and pair tests say nothing. Raise "
        f"distance.sinkhorn.max_iterations (now {config.get('max_iterations', '?')}) and "
        f"distance.sinkhorn.inner_iterations (now {config.get('inner_iterations', '?')}), or "
        f"set a larger finite distance.sinkhorn.epsilon{now}."
    )


def verdict_lines(matrices: dict[str, DistanceMatrix]) -> list[str]:
    """One line naming the distances: estimates with noise floors, no pair verdict of their own.

    Which pairs differ is the test of record's alone.
    """
    if not matrices:
        return []
    named = ", ".join(
        f"`{markdown_text(name)}` ({markdown_text(distance_label(name))})" for name in matrices
    )
    return [
        f"{named}: estimates of each pair's distance with noise floors, without a pair "
        "verdict of their own (which pairs differ is the test of record's)."
    ]


def noise_section(matrices: dict[str, DistanceMatrix]) -> str:
    """Markdown: each distance's floor per group and the repetitions left out per pair.

    That every solve converged is said once, for the distances where it holds.
    """
    shown = {n: m for n, m in matrices.items() if m.floor is not None or m.excluded is not None}
    parts, converged = [], []
    for name, matrix in shown.items():
        parts.append(f"### {markdown_text(name)}")
        if matrix.floor is not None:
            cells = [
                f"{markdown_text(g)} {f:.4g} ± {s:.2g}"
                for g, f, s in zip(matrix.groups, matrix.floor, matrix.floor_spread(), strict=True)
            ]
            parts.append("Floor (mean ± sd over repetitions): " + "; ".join(cells) + ".")
        if matrix.excluded is not None and matrix.excluded.any():
            left = [
                f"{markdown_text(matrix.groups[i])}-{markdown_text(matrix.groups[j])} "
                f"{int(matrix.excluded[i, j])}"
                for i, j in matrix.pair_indices()
                if matrix.excluded[i, j]
            ]
            parts.append(
                "Repetitions left out (a solve did not converge): " + ", ".join(left) + "."
            )
        else:
            converged.append(markdown_text(name))
    if not parts:
        return ""
    if converged:
        which = "every distance" if len(converged) == len(shown) else ", ".join(converged)
        parts.insert(0, f"Every solve of {which} converged: no repetition was left out.")
    return "## Noise floors\n\n" + "\n\n".join(parts) + "\n"
