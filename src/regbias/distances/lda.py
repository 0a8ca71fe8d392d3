"""Stage III: distance between group centroids in a linear discriminant projection."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError

__all__ = [
    "LdaProjection",
    "LdaSettings",
    "check_components",
    "lda_distance_matrix",
    "lda_projection",
]

SOLVERS = ("svd", "eigen", "lsqr")


@dataclass(frozen=True)
class LdaSettings:
    """How to fit the discriminant analysis (classes = groups).

    Attributes:
        n_components: dimensions of the projection (the paper: 3); at most K - 1.
        solver: scikit-learn solver, ``svd`` (the paper), ``eigen`` or ``lsqr``.
        shrinkage: covariance shrinkage, a float in [0, 1], ``"auto"`` (Ledoit-Wolf) or None;
            needed when there are fewer passages than embedding dimensions (Reuters).
    """

    n_components: int = 3
    solver: Literal["svd", "eigen", "lsqr"] = "svd"
    shrinkage: float | Literal["auto"] | None = None

    def __post_init__(self) -> None:
        if self.solver not in SOLVERS:
            raise ConfigError(f"unknown lda solver {self.solver!r}; choose one of {SOLVERS}")
        if self.n_components < 1:
            raise ConfigError(f"lda n_components must be >= 1, got {self.n_components}")
        if self.shrinkage is not None and self.solver == "svd":
            raise ConfigError(
                "lda shrinkage does not work with solver=svd; use solver=eigen (or lsqr) "
                "with the shrinkage, or shrinkage=null"
            )
        if isinstance(self.shrinkage, str) and self.shrinkage != "auto":
            raise ConfigError(
                f"lda shrinkage must be a float, 'auto' or null, not {self.shrinkage!r}"
            )
        if isinstance(self.shrinkage, float | int) and not 0 <= self.shrinkage <= 1:
            raise ConfigError(f"lda shrinkage must lie in [0, 1], got {self.shrinkage}")


@dataclass(frozen=True)
class LdaProjection:
    """The projected passages of one repetition, for a scatter figure.

    Attributes:
        points: ``(n, n_components)`` projected vectors.
        labels: ``(n,)`` group of each point.
        centroids: ``(K, n_components)`` centroid of each group, in ``groups`` order.
        groups: group names.
    """

    points: np.ndarray
    labels: np.ndarray
    centroids: np.ndarray
    groups: list[str]


def check_components(n_components: int, n_groups: int) -> None:
    """LDA projects ``n_groups`` groups onto at most ``n_groups - 1`` components.

    Raises:
        ConfigError: too many components for the groups (checked before any embedding).
    """
    if n_groups - 1 < n_components:
        raise ConfigError(
            f"lda n_components={n_components} exceeds groups - 1 = {n_groups - 1}: set "
            f"distance.lda.n_components <= {max(n_groups - 1, 1)}, study more groups, or "
            "distance.lda.enabled=false"
        )


def _check(draw: dict[str, np.ndarray], settings: LdaSettings) -> tuple[list[str], int, int]:
    """Raise a clear error when LDA cannot be fitted to this draw."""
    groups = list(draw)
    sizes = {g: np.asarray(v).shape[0] for g, v in draw.items()}
    if len(set(sizes.values())) != 1:
        raise ConfigError(
            f"lda needs equal group sizes, got {sizes}; draw the same count per group"
        )
    check_components(settings.n_components, len(groups))
    n_samples = sum(sizes.values())
    dim = np.asarray(draw[groups[0]]).shape[1]
    if settings.shrinkage is None and n_samples - len(groups) < dim:
        raise ConfigError(
            f"lda has {n_samples} passages for {dim} dimensions: the within-group covariance is "
            "singular; use solver=eigen shrinkage=auto"
        )
    return groups, sizes[groups[0]], dim


def lda_projection(draw: dict[str, np.ndarray], settings: LdaSettings) -> LdaProjection:
    """Fit LDA on all groups of one repetition together and project their passages.

    Args:
        draw: ``draw[group]`` = ``(n, d)`` pooled vectors of that group's passages (equal n).
        settings: LDA settings.

    Returns:
        The projected points, their group labels and each group's centroid.
    """
    groups, n, _ = _check(draw, settings)
    vectors = np.concatenate([np.asarray(draw[g], dtype=np.float64) for g in groups])
    labels = np.repeat(np.array(groups), n)
    lda = LinearDiscriminantAnalysis(
        n_components=settings.n_components, solver=settings.solver, shrinkage=settings.shrinkage
    )
    points = lda.fit(vectors, labels).transform(vectors)
    centroids = np.stack([points[labels == g].mean(axis=0) for g in groups])
    return LdaProjection(points, labels, centroids, groups)


def _centroid_distances(centroids: np.ndarray) -> np.ndarray:
    return np.linalg.norm(centroids[:, None, :] - centroids[None, :, :], axis=-1)


def lda_distance_matrix(
    draws: list[dict[str, np.ndarray]], settings: LdaSettings, name: str = "lda"
) -> DistanceMatrix:
    """Euclidean distance between group centroids in the LDA projection, over repetitions.

    Args:
        draws: ``draws[r][group]`` = ``(n, d)`` pooled vectors of that group's long-text
            passages in repetition ``r``; equal ``n`` for every group, same groups throughout.
        settings: LDA settings.
        name: the matrix's name.

    Returns:
        The mean and standard deviation over repetitions of the centroid distances.
    """
    if not draws:
        raise ValueError("lda_distance_matrix needs at least one repetition")
    groups = list(draws[0])
    values = []
    for r, draw in enumerate(draws):
        if list(draw) != groups:
            raise ValueError(f"repetition {r} has groups {list(draw)}, expected {groups}")
        values.append(_centroid_distances(lda_projection(draw, settings).centroids))
    return DistanceMatrix.from_repetitions(name, groups, np.stack(values), asdict(settings))
