"""Stage III: distance between group centroids in a linear discriminant projection.

Per repetition the distance is cross-fitted by default: each group's passages are split into
two halves, the LDA is fitted on one half of every group and the centroids are measured on the
projected other half (not swapped and averaged). Fitting and measuring on
the same passages (the paper, ``cross_fit: false``) inflates every distance, because the
projection is chosen to separate exactly those passages.

Each matrix also carries a noise floor per group (see :func:`lda_distance_matrix`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Literal

import numpy as np
from scipy import linalg
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from threadpoolctl import threadpool_limits

from regbias.distances.matrix import DistanceMatrix, mean_sd
from regbias.errors import ConfigError
from regbias.settings_reader import check_choices

#: ``distance.lda.solver``: scikit-learn's solvers (``lsqr`` is rejected: it cannot project).
LdaSolver = Literal["svd", "eigen", "lsqr"]

# Random within-group splits averaged into one repetition's floor (no refit: cheap).
FLOOR_SPLITS = 8


@dataclass(frozen=True)
class LdaSettings:
    """How to fit the discriminant analysis (classes = groups); fields = ``distance.lda`` keys.

    Attributes:
        n_components: dimensions of the projection (the paper: 3); at most K - 1.
        solver: scikit-learn solver, ``svd`` (the paper) or ``eigen``; ``lsqr`` cannot project.
        shrinkage: covariance shrinkage, a float in [0, 1], ``"auto"`` (Ledoit-Wolf) or None;
            needed when there are fewer passages than embedding dimensions (Reuters).
        enabled: compute the LDA matrix at all (read by the job, not here).
        passages_per_group: long-text passages per group per repetition (read by the draws).
        cross_fit: fit on one half of each group's passages and measure on the other
            (False: fit and measure on the same passages, as the paper did).
    """

    n_components: int
    solver: LdaSolver
    shrinkage: float | Literal["auto"] | None
    enabled: bool
    passages_per_group: int
    cross_fit: bool

    def __post_init__(self) -> None:
        check_choices(self, "distance.lda")  # solver and shrinkage, also made in Python
        if self.solver == "lsqr":
            raise ConfigError("lda solver=lsqr cannot project passages; use solver=eigen or svd")
        if self.n_components < 1:
            raise ConfigError(f"lda n_components must be >= 1, got {self.n_components}")
        if self.shrinkage is not None and self.solver == "svd":
            raise ConfigError(
                "lda shrinkage does not work with solver=svd; use solver=eigen (or lsqr) "
                "with the shrinkage, or shrinkage=null"
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


def _check(
    draw: dict[str, np.ndarray], settings: LdaSettings, fit_share: float = 1.0
) -> tuple[list[str], int, int]:
    """Raise a clear error when LDA cannot be fitted to this draw.

    ``fit_share`` is the share of each group's passages a fit sees (1/2 when cross-fitted).
    """
    groups = list(draw)
    sizes = {g: np.asarray(v).shape[0] for g, v in draw.items()}
    if len(set(sizes.values())) != 1:
        raise ConfigError(
            f"lda needs equal group sizes, got {sizes}; draw the same count per group"
        )
    check_components(settings.n_components, len(groups))
    n, dim = sizes[groups[0]], np.asarray(draw[groups[0]]).shape[1]
    if fit_share < 1 and n < 4:
        raise ConfigError(
            f"cross-fitted lda needs at least 4 passages per group, got {n}; raise "
            "distance.lda.passages_per_group or set distance.lda.cross_fit=false"
        )
    n_samples = int(n * fit_share) * len(groups)
    if settings.shrinkage is None and n_samples - len(groups) < dim:
        raise ConfigError(
            f"lda fits {n_samples} passages for {dim} dimensions: the within-group covariance "
            "is singular; use solver=eigen shrinkage=auto"
        )
    return groups, n, dim


def _sklearn_lda(settings: LdaSettings) -> LinearDiscriminantAnalysis:
    return LinearDiscriminantAnalysis(
        n_components=settings.n_components, solver=settings.solver, shrinkage=settings.shrinkage
    )


def lda_projection(draw: dict[str, np.ndarray], settings: LdaSettings) -> LdaProjection:
    """Fit LDA on all groups of one repetition together and project their passages.

    ``draw[group]`` holds the ``(n, d)`` pooled vectors of that group's passages (equal n).
    """
    groups, n, _ = _check(draw, settings)
    vectors = np.concatenate([np.asarray(draw[g], dtype=np.float64) for g in groups])
    labels = np.repeat(np.array(groups), n)
    points = _sklearn_lda(settings).fit(vectors, labels).transform(vectors)
    centroids = np.stack([points[labels == g].mean(axis=0) for g in groups])
    return LdaProjection(points, labels, centroids, groups)


def _ledoit_wolf_shrinkage(x: np.ndarray) -> float:
    """Scikit-learn's ``ledoit_wolf_shrinkage`` of centred data, via the ``n x n`` Gram matrix.

    Cheaper than scikit-learn's ``d x d`` blocks when passages are fewer than dimensions.
    """
    n, dim = x.shape
    if dim == 1:
        return 0.0  # one feature: every shrinkage gives the same covariance
    squares = x**2
    variances = squares.sum(axis=0) / n
    mu = variances.sum() / dim
    delta_ = float(np.sum((x @ x.T) ** 2)) / n**2
    beta_ = float(np.sum(squares.sum(axis=1) ** 2))
    beta = (beta_ / n - delta_) / (dim * n)
    delta = (delta_ - 2.0 * mu * variances.sum() + dim * mu**2) / dim
    beta = min(beta, delta)
    return 0.0 if beta == 0 else beta / delta


def _covariance(x: np.ndarray, shrinkage: float | str | None) -> np.ndarray:
    """One class's covariance exactly as scikit-learn's eigen solver estimates it."""
    centred = x - x.mean(axis=0)
    n, dim = centred.shape
    empirical = centred.T @ centred / n
    if shrinkage is None:
        return empirical
    if shrinkage == "auto":
        # Ledoit-Wolf on standardised features, rescaled: the target is diagonal, not isotropic.
        scale = np.sqrt(np.diag(empirical)).copy()
        scale[scale < 10 * np.finfo(np.float64).eps] = 1.0
        standard = centred / scale
        alpha = _ledoit_wolf_shrinkage(standard)
        mu = float(np.sum(standard**2)) / (n * dim)
        shrunk = (1.0 - alpha) * empirical
        shrunk[np.diag_indices(dim)] += alpha * mu * scale**2
        return shrunk
    shrunk = (1.0 - float(shrinkage)) * empirical
    shrunk[np.diag_indices(dim)] += float(shrinkage) * np.trace(empirical) / dim
    return shrunk


class _Fit:
    """The training passages of one LDA fit.

    With ``solver=eigen`` the projection is scikit-learn's (``eigh(Sb, Sw)``, top components),
    computed from the per-group covariances, only the needed eigenvectors solved. Other
    solvers fit scikit-learn's estimator.
    """

    def __init__(self, train: list[np.ndarray], settings: LdaSettings) -> None:
        self.train, self.settings = train, settings
        self.fast = settings.solver == "eigen"
        if self.fast:
            sizes = np.array([len(x) for x in train], dtype=np.float64)
            self.priors = sizes / sizes.sum()
            self.covariances = [_covariance(x, settings.shrinkage) for x in train]
            self.within = sum(p * c for p, c in zip(self.priors, self.covariances, strict=True))
            self.total = _covariance(np.concatenate(train), settings.shrinkage)

    def scalings(self) -> np.ndarray:
        """``(d, n_components)`` projection."""
        train = self.train
        if not self.fast:
            labels = np.repeat(np.arange(len(train)), [len(x) for x in train])
            lda = _sklearn_lda(self.settings).fit(np.concatenate(train), labels)
            return lda.scalings_[:, : self.settings.n_components]
        within = self.within
        dim, k = within.shape[0], self.settings.n_components
        _, vectors = linalg.eigh(self.total - within, within, subset_by_index=[dim - k, dim - 1])
        return vectors[:, ::-1]


def _distance(scalings: np.ndarray, mean_a: np.ndarray, mean_b: np.ndarray) -> float:
    """Distance of two centroids in the projection (projection is linear: project the means)."""
    return float(np.linalg.norm((mean_a - mean_b) @ scalings))


@dataclass
class _Repetition:
    """One repetition's passages in the layout of the chosen design.

    Cross-fitted: ``fit[k]`` are group ``k``'s passages the projection is fitted on and
    ``measure[k]`` the disjoint ones its centroid is measured on (``measured[k]`` their
    positions in the draw). In-sample: both are all of the group's passages.
    """

    fit: list[np.ndarray]
    measure: list[np.ndarray]
    measured: list[np.ndarray]
    cross_fit: bool

    @classmethod
    def split(
        cls, vectors: list[np.ndarray], cross_fit: bool, rng: np.random.Generator
    ) -> _Repetition:
        if not cross_fit:
            return cls(vectors, vectors, [np.arange(len(x)) for x in vectors], False)
        orders = [rng.permutation(len(x)) for x in vectors]
        fit = [x[o[: len(o) // 2]] for x, o in zip(vectors, orders, strict=True)]
        held = [o[len(o) // 2 :] for o in orders]
        measure = [x[h] for x, h in zip(vectors, held, strict=True)]
        return cls(fit, measure, held, True)


def _held_out_floor(
    repetition: _Repetition, scalings: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """``(K,)`` within-group distances of held-out passages, at the between-group scale.

    A group's held-out passages (``h``) are split at random into two parts (``s1 + s2 = h``)
    and their centroids compared in the projection. Projected means are (nearly) Gaussian
    with spread proportional to ``sqrt(1/s1 + 1/s2)``, so the distance is rescaled to two
    centroids of ``h`` passages each, the sizes the between-group distances compare.
    """
    floor = np.zeros(len(repetition.measure))
    for k, x in enumerate(repetition.measure):
        h = len(x)
        s1, s2 = h // 2, h - h // 2
        factor = np.sqrt((2 / h) / (1 / s1 + 1 / s2))
        for _ in range(FLOOR_SPLITS):
            order = rng.permutation(h)
            distance = _distance(scalings, x[order[:s1]].mean(0), x[order[s1:]].mean(0))
            floor[k] += factor * distance
    return floor / FLOOR_SPLITS


def _floor_possible(settings: LdaSettings, n: int, k: int, dim: int) -> bool:
    return n >= 4 and (settings.shrinkage is not None or (n // 2) * k - k >= dim)


@dataclass(frozen=True)
class _Measured:
    """One repetition's observed ``(K, K)`` distances and floor (None: halves too small)."""

    observed: np.ndarray
    floor: np.ndarray | None


def _measure(
    draw: dict[str, np.ndarray], settings: LdaSettings, rng: np.random.Generator
) -> _Measured:
    groups, n, dim = _check(draw, settings, 0.5 if settings.cross_fit else 1.0)
    vectors = [np.asarray(draw[g], dtype=np.float64) for g in groups]
    repetition = _Repetition.split(vectors, settings.cross_fit, rng)
    fit = _Fit(repetition.fit, settings)
    scalings = fit.scalings()
    projected = [x @ scalings for x in repetition.measure]
    centroids = np.stack([p.mean(axis=0) for p in projected])
    observed = np.linalg.norm(centroids[:, None, :] - centroids[None, :, :], axis=-1)
    floor = None
    if settings.cross_fit:
        floor = _held_out_floor(repetition, scalings, rng)
    elif _floor_possible(settings, n, len(groups), dim):
        # The floor is always measured on held-out passages, so it is the honest noise level
        # that in-sample distances exceed.
        halves = _Repetition.split(vectors, True, rng)
        floor = _held_out_floor(halves, _Fit(halves.fit, settings).scalings(), rng)
    return _Measured(observed, floor)


def lda_distance_matrix(
    draws: list[dict[str, np.ndarray]], settings: LdaSettings, name: str = "lda", *, seed: int = 0
) -> DistanceMatrix:
    """Euclidean distance between group centroids in the LDA projection, over repetitions.

    Cross-fitted (the default): per repetition each group's passages are split at random into
    two halves; the projection is fitted on one half of every group and the centroids are
    measured on the other. ``cross_fit: false`` fits and measures on the same passages (the
    paper; inflated distances).

    Noise floor: per group, the distance between the centroids of two disjoint random parts of
    the group's held-out passages, rescaled from the parts' sizes to the sizes a between-group
    distance compares (see ``_held_out_floor``). When two groups are exchangeable their
    cross-fitted distance is the same kind of quantity, so under the null ``d(a, b)`` is about
    ``(floor(a) + floor(b)) / 2``. It is always measured on held-out passages, so in-sample
    distances exceed it even for exchangeable groups (that is their inflation).

    Args:
        draws: ``draws[r][group]`` = ``(n, d)`` pooled vectors of that group's long-text
            passages in repetition ``r``; equal ``n`` for every group, same groups throughout.
        settings: LDA settings.
        name: the matrix's name.
        seed: seed of the halves and the floor's splits.

    Returns:
        The mean and standard deviation over repetitions of the centroid distances, with the
        floor (mean and sd over repetitions).
    """
    if not draws:
        raise ValueError("lda_distance_matrix needs at least one repetition")
    groups = list(draws[0])
    rng = np.random.default_rng(seed)
    values, floors = [], []
    # Many small eigenproblems: threads of a BLAS only contend for the cores.
    with threadpool_limits(limits=1, user_api="blas"):
        for r, draw in enumerate(draws):
            if list(draw) != groups:
                raise ValueError(f"repetition {r} has groups {list(draw)}, expected {groups}")
            measured = _measure(draw, settings, rng)
            values.append(measured.observed)
            floors.append(measured.floor)
    config = asdict(settings)
    matrix = DistanceMatrix.from_repetitions(name, groups, np.stack(values), config)
    floor, floor_sd = _summary(floors)
    return replace(matrix, floor=floor, floor_sd=floor_sd)


def _summary(floors: list[np.ndarray | None]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Mean and sample sd of the per-repetition floors (None where a repetition has none)."""
    known = [f for f in floors if f is not None]
    return mean_sd(np.stack(known)) if len(known) == len(floors) else (None, None)
