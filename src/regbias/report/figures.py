"""The paper's figures: distance heatmaps, correlation heatmaps, scatters, distributions.

Each function returns a ``Figure`` on :mod:`regbias.report.canvas`, whose ``save_figure``
writes it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from regbias.analysis.correlation.result import RHO
from regbias.analysis.pair_table import PairTable
from regbias.distances.lda import LdaProjection
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, DataError
from regbias.report.canvas import new_figure

ALPHA = 0.05
# Below this many groups a cell has room for the standard deviation under the mean.
_SD_ROOM = 10
_LIGHT_TEXT_BELOW = 0.5  # luminance of the cell colour under which text turns white


def _label(group: str) -> str:
    return str(group).upper()


def _format(value: float) -> str:
    # Three significant digits: pairs of one distance often differ only in the third.
    if not np.isfinite(value):
        return ""
    return f"{value:.3g}"


def _text_colour(rgba: tuple[float, ...]) -> str:
    luminance = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
    return "white" if luminance < _LIGHT_TEXT_BELOW else "black"


def distance_heatmap(
    matrix: DistanceMatrix,
    title: str | None = None,
    *,
    triangle: bool = True,
    marked: Collection[tuple[str, str]] = (),
) -> Figure:
    """Heatmap of a group distance matrix with annotated cells (the paper's Fig. 6).

    Each cell shows the mean (its colour too) and, with several repetitions and room, ``±sd``;
    ``triangle`` shows each pair once; ``marked`` pairs (either order) are outlined in red.
    """
    k = len(matrix.groups)
    rows = list(range(1, k)) if triangle else list(range(k))
    cols = list(range(k - 1)) if triangle else list(range(k))
    values = matrix.mean[np.ix_(rows, cols)].astype(np.float64)
    shown = np.array([[not triangle or r > c for c in cols] for r in rows], dtype=bool)
    masked = np.ma.masked_array(values, mask=~shown)
    fig = new_figure(1.0 + 0.8 * len(cols), 0.6 + 0.7 * len(rows))
    ax = fig.add_subplot()
    cmap = colormaps["viridis"]
    finite = values[shown & np.isfinite(values)]
    band = _floor_band(matrix)
    norm = Normalize(*_colour_range(finite, band))
    image = ax.imshow(masked, cmap=cmap, norm=norm)
    label = matrix.name if band is None else f"{matrix.name} (hatched: the pairs' noise floors)"
    colorbar = fig.colorbar(image, ax=ax, shrink=0.8, label=label)
    if band is not None:
        colorbar.ax.axhspan(*band, facecolor="none", edgecolor="white", hatch="///", lw=0)
    with_sd = matrix.n_repetitions > 1 and k <= _SD_ROOM
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            if not shown[i, j]:
                continue
            colour = _text_colour(cmap(norm(values[i, j])))
            pair = (matrix.groups[r], matrix.groups[c])
            if pair in marked or pair[::-1] in marked:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=2))
            offset = -0.12 if with_sd else 0.0
            ax.text(j, i + offset, _format(values[i, j]), ha="center", va="center", color=colour)
            if with_sd:
                sd_text = f"±{_format(matrix.sd[r, c])}"
                ax.text(j, i + 0.22, sd_text, ha="center", va="center", color=colour, fontsize=6)
    ax.set_xticks(range(len(cols)), [_label(matrix.groups[c]) for c in cols])
    ax.set_yticks(range(len(rows)), [_label(matrix.groups[r]) for r in rows])
    ax.spines[:].set_visible(not triangle)
    ax.set_title(title if title is not None else matrix.name)
    return fig


def _floor_band(matrix: DistanceMatrix) -> tuple[float, float] | None:
    """The lowest and highest mean floor of a pair (the mean of its two groups' floors)."""
    if matrix.floor is None:
        return None
    floor = np.asarray(matrix.floor, dtype=np.float64)
    pairs = (floor[:, None] + floor[None, :]) / 2
    finite = pairs[np.triu_indices(len(floor), 1)]
    finite = finite[np.isfinite(finite)]
    return (float(finite.min()), float(finite.max())) if finite.size else None


def _colour_range(values: np.ndarray, band: tuple[float, float] | None) -> tuple[float, float]:
    """The colour scale: from the lowest floor (or value) to the highest value (or floor).

    Starting at the floor keeps pairs that sit within sampling noise from looking apart.
    """
    low = [float(values.min())] if values.size else []
    high = [float(values.max())] if values.size else []
    if band is not None:
        low.append(band[0])
        high.append(band[1])
    if not low:
        return 0.0, 1.0
    return min(low), max(high)


def floor_plot(matrix: DistanceMatrix, title: str | None = None) -> Figure:
    """Each pair's distance against the noise floor of its two groups.

    Pairs are sorted by distance; a dot with whiskers is the pair's mean ± sd over
    repetitions, the grey bar the mean floor of its two groups ± their floors' sd. A pair whose
    dot sits inside its grey bar is not apart from sampling noise (an estimate, not a test:
    which pairs differ is the test of record's).

    Raises:
        ValueError: the matrix has no floor.
    """
    if matrix.floor is None:
        raise ValueError(f"{matrix.name} has no noise floor")
    pairs = sorted(matrix.pair_indices(), key=lambda p: matrix.mean[p])
    floor_sd = matrix.floor_spread()
    fig = new_figure(7.0, 0.8 + 0.22 * len(pairs))
    ax = fig.add_subplot()
    for y, (i, j) in enumerate(pairs):
        floor = (matrix.floor[i] + matrix.floor[j]) / 2
        spread = max(floor_sd[i], floor_sd[j])
        ax.barh(y, 2 * spread, left=floor - spread, height=0.6, color="0.85", zorder=1)
        ax.plot([floor, floor], [y - 0.3, y + 0.3], color="0.5", lw=1, zorder=2)
        ax.errorbar(
            matrix.mean[i, j],
            y,
            xerr=matrix.sd[i, j],
            fmt="o",
            color="C0",
            zorder=3,
            markerfacecolor="white",
            markersize=5,
            capsize=2,
        )
    labels = [f"{_label(matrix.groups[i])}–{_label(matrix.groups[j])}" for i, j in pairs]
    ax.set_yticks(range(len(pairs)), labels, fontsize=7)
    ax.set_xlabel(f"{matrix.name}: mean ± sd; grey: floor ± sd")
    ax.set_title(title if title is not None else f"{matrix.name}: distance vs noise floor")
    return fig


def correlation_heatmap(
    correlations_df: pd.DataFrame,
    statistic: str = RHO,
    p_column: str | None = None,
    *,
    alpha: float = ALPHA,
    title: str | None = None,
) -> Figure:
    """Heatmap of correlations: distances by rows, performance columns by columns (Figs. 7/8).

    Cells whose ``p_column`` (default: the statistic's permutation p) is below ``alpha`` are
    bold with an asterisk.
    """
    if p_column is None:
        p_column = f"{statistic.split('_')[0]}_p_perm"
    needed = ["distance", "performance", statistic, p_column]
    missing = [c for c in needed if c not in correlations_df.columns]
    if missing:
        raise ConfigError(
            f"the correlation table lacks {missing}; it has {list(correlations_df.columns)}."
        )
    rows = list(dict.fromkeys(correlations_df["distance"]))
    cols = list(dict.fromkeys(correlations_df["performance"]))
    values = _grid(correlations_df, statistic, rows, cols)
    p_values = _grid(correlations_df, p_column, rows, cols)
    fig = new_figure(2.5 + 0.75 * len(cols), 2.0 + 0.55 * len(rows))
    ax = fig.add_subplot()
    cmap = colormaps["RdBu_r"]
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-1.0, vmax=1.0)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, aspect="auto")
    fig.colorbar(image, ax=ax, label=statistic)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if not np.isfinite(values[i, j]):
                continue
            significant = bool(p_values[i, j] < alpha)
            text = f"{values[i, j]:.2f}" + ("*" if significant else "")
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=8,
                fontweight="bold" if significant else "normal",
                color=_text_colour(cmap(norm(values[i, j]))),
            )
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    default = f"{statistic} (* {p_column} < {alpha:g})"
    ax.set_title(title if title is not None else default)
    return fig


def _grid(frame: pd.DataFrame, column: str, rows: list[str], cols: list[str]) -> np.ndarray:
    table = frame.pivot_table(
        index="distance", columns="performance", values=column, aggfunc="first", dropna=False
    )
    return table.reindex(index=rows, columns=cols).to_numpy(dtype=np.float64)


def pair_scatter(
    table: pd.DataFrame | PairTable,
    distance_column: str,
    performance_column: str,
    stats: dict[str, float] | pd.Series | None = None,
    *,
    title: str | None = None,
    p_suffix: str = "p_perm",
) -> Figure:
    """Scatter of a distance against a performance column, one ``A-B`` point per pair (Fig. 16).

    Rows with NaN in either column are left out. Without a ``title`` the title shows ``stats``
    (a correlation table row) with the p-values ``p_suffix`` names (``p_perm``, ``p_holm``...).
    """
    frame = table.frame if isinstance(table, PairTable) else table
    missing = [c for c in (distance_column, performance_column) if c not in frame.columns]
    if missing:
        raise DataError(f"the pair table lacks {missing}; it has {list(frame.columns)}.")
    data = frame[["group_a", "group_b", distance_column, performance_column]].dropna()
    fig = new_figure(6.0, 4.5)
    ax = fig.add_subplot()
    ax.scatter(data[distance_column], data[performance_column], s=20, color="tab:blue")
    for a, b, x, y in data.itertuples(index=False):
        ax.annotate(
            f"{_label(a)}-{_label(b)}",
            (x, y),
            xytext=(3, 3),
            textcoords="offset points",
            fontsize=7,
        )
    ax.margins(0.1)  # room for the labels of points at the edges
    ax.set_xlabel(distance_column)
    ax.set_ylabel(performance_column)
    ax.grid(alpha=0.3)
    text = title if title is not None else _stats_title(stats, data, p_suffix)
    # Wrapped, and the canvas's constrained layout makes room for its lines: never clipped.
    ax.set_title(textwrap.fill(text, 60), fontsize=10)
    return fig


def _stats_title(
    stats: dict[str, float] | pd.Series | None, data: pd.DataFrame, p_suffix: str = "p_perm"
) -> str:
    if stats is None:
        return f"{len(data)} pairs"
    parts = []
    for symbol, name in (("ρ", "spearman"), ("τ", "kendall")):
        statistic = stats.get(f"{name}_rho" if name == "spearman" else f"{name}_tau")
        if statistic is None:
            continue
        p_value = stats.get(f"{name}_{p_suffix}", stats.get(f"{name}_p"))
        label = "p" if p_suffix == "p_perm" else p_suffix
        p_text = f" ({label} = {p_value:.3g})" if p_value is not None else ""
        parts.append(f"{symbol} = {statistic:.2f}{p_text}")
    return ", ".join(parts) + f"; {len(data)} pairs"


def performance_distributions(
    summary: pd.DataFrame, metric: str, *, groups: list[str] | None = None
) -> Figure:
    """Per-group box plot of a metric with the models as points (Figs. 9/10).

    ``summary`` is long (``model, group, metric, value``, maybe ``seed, fold``); a model's
    repeated rows for one group are averaged.
    """
    needed = ["model", "group", "metric", "value"]
    missing = [c for c in needed if c not in summary.columns]
    if missing:
        raise DataError(f"the summary lacks {missing}; it has {list(summary.columns)}.")
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        known = sorted(summary["metric"].unique())
        raise ConfigError(f"no values for metric {metric!r}; the summary has {known}.")
    keys = [c for c in ("model", "seed", "fold") if c in rows.columns] + ["group"]
    per_model = rows.groupby(keys, sort=False, dropna=False)["value"].mean().reset_index()
    groups = groups if groups is not None else list(dict.fromkeys(per_model["group"]))
    values = [per_model.loc[per_model["group"] == g, "value"].to_numpy() for g in groups]
    fig = new_figure(1.2 + 0.8 * len(groups), 4.0)
    ax = fig.add_subplot()
    ax.boxplot(values, showfliers=False, widths=0.5)
    jitter = np.random.default_rng(0)  # fixed: the same data draw the same figure
    for position, group_values in enumerate(values, start=1):
        spread = jitter.uniform(-0.12, 0.12, len(group_values))
        ax.scatter(position + spread, group_values, s=10, alpha=0.7, color="tab:blue", zorder=3)
    ax.set_xticks(range(1, len(groups) + 1), [_label(g) for g in groups])
    ax.set_ylabel(metric)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{metric} per group ({per_model['model'].nunique()} models)")
    return fig


def representation_plot(
    distance_to_baseline: dict[str, float],
    share: dict[str, float],
    name: str,
    *,
    log_share: bool = False,
) -> Figure:
    """Each group's distance to the baseline against its share of the data (the paper's Fig. 5).

    Raises:
        DataError: a group has a distance but no share.
    """
    missing = [g for g in distance_to_baseline if g not in share]
    if missing:
        raise DataError(f"no data share for group(s) {missing}; shares given for {list(share)}.")
    groups = list(distance_to_baseline)
    x = np.array([share[g] for g in groups], dtype=np.float64)
    y = np.array([distance_to_baseline[g] for g in groups], dtype=np.float64)
    fig = new_figure(5.5, 4.0)
    ax = fig.add_subplot()
    ax.scatter(x, y, s=30, color="tab:orange")
    for group, xi, yi in zip(groups, x, y, strict=True):
        ax.annotate(_label(group), (xi, yi), xytext=(4, 4), textcoords="offset points")
    ax.margins(0.1)  # room for the labels of points at the edges
    if log_share:
        ax.set_xscale("log")
    unit = "%" if x.size and float(x.max()) > 1.0 else "fraction"
    scale = ", log scale" if log_share else ""
    ax.set_xlabel(f"share of the regions' texts ({unit}{scale})")
    ax.set_ylabel(f"{name} distance to baseline")
    ax.grid(alpha=0.3)
    ax.set_title(f"{name}: distance to baseline vs representation")
    return fig


def lda_scatter(projection: LdaProjection, title: str = "LDA projection") -> Figure:
    """The passages of one repetition in the first two LDA components, coloured by group.

    Each group's centroid is a labelled cross; the LDA distance is the distance between them.
    With one component the second axis is the group, so the groups sit on separate rows.
    """
    fig = new_figure(6.0, 4.5)
    ax = fig.add_subplot()
    colours = colormaps["tab10"]
    two = projection.points.shape[1] >= 2
    for i, group in enumerate(projection.groups):
        points = projection.points[projection.labels == group]
        y = points[:, 1] if two else np.full(len(points), i, dtype=np.float64)
        ax.scatter(points[:, 0], y, s=8, alpha=0.4, color=colours(i % 10), label=_label(group))
        cy = projection.centroids[i, 1] if two else i
        ax.scatter(
            projection.centroids[i, 0],
            cy,
            marker="X",
            s=90,
            color=colours(i % 10),
            edgecolor="black",
            linewidth=0.8,
            zorder=3,
        )
        ax.annotate(
            _label(group),
            (projection.centroids[i, 0], cy),
            xytext=(5, 5),
            textcoords="offset points",
            fontweight="bold",
        )
    ax.set_xlabel("LD1")
    ax.set_ylabel("LD2" if two else "group")
    ax.legend(fontsize="small", markerscale=2, frameon=False, loc="best")
    ax.set_title(title)
    return fig


def power_curves(rates: pd.DataFrame, level: str, target: float = 0.8) -> Figure:
    """Detection rate against the planted share, a line per ``distance`` of ``rates``.

    ``level`` says how detection was judged (``p <= 0.05 / 28``); ``target`` is dashed.
    """
    fig = new_figure(6.0, 4.0)
    ax = fig.add_subplot()
    for k, (name, part) in enumerate(rates.groupby("distance", sort=False)):
        part = part.sort_values("share")
        colour = f"C{k % 10}"
        ax.plot(part["share"], part["power"], "o-", color=colour, label=str(name))
        ax.fill_between(
            part["share"], part["power_low"], part["power_high"], color=colour, alpha=0.12
        )
        ax.plot(part["share"], part["power_unadjusted"], ":", color=colour, lw=1)
    ax.axhline(target, color="0.5", ls="--", lw=1)
    ax.set_xlabel("share of one pseudo-group's texts replaced by the donor's")
    ax.set_ylabel("share of plants detected")
    ax.text(
        0.99,
        0.02,
        f"solid: {level}; dotted: p <= 0.05",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=7,
        color="0.3",
    )
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Power of the pair tests (band: 95% interval)")
    ax.legend(fontsize=8, loc="upper left")
    return fig
