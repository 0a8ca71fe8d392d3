"""Each figure shows what it should and saves as a non-empty PNG."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from regbias.analysis.correlation.table import correlations
from regbias.distances.matrix import DistanceMatrix
from regbias.errors import ConfigError, DataError
from regbias.report.canvas import save_figure
from regbias.report.figures import (
    correlation_heatmap,
    distance_heatmap,
    pair_scatter,
    performance_distributions,
    representation_plot,
)
from tests.settings import packaged_lda

GROUPS = ["au", "ca", "nz", "uk", "us", "za"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _matrix(repetitions: int = 3) -> DistanceMatrix:
    rng = np.random.default_rng(0)
    values = rng.uniform(0.1, 2.0, size=(repetitions, len(GROUPS), len(GROUPS)))
    values = (values + values.transpose(0, 2, 1)) / 2
    for v in values:
        np.fill_diagonal(v, 0.0)
    return DistanceMatrix.from_repetitions("sinkhorn_long", GROUPS, values)


def _pair_table() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [(a, b) for i, a in enumerate(GROUPS) for b in GROUPS[i + 1 :]]
    table = pd.DataFrame(rows, columns=["group_a", "group_b"])
    table["dist_sinkhorn_long"] = rng.uniform(size=len(table))
    table["dist_lda"] = table["dist_sinkhorn_long"] + rng.normal(0, 0.05, len(table))
    table["gap_accuracy"] = table["dist_sinkhorn_long"] * 0.1 + rng.normal(0, 0.005, len(table))
    table["dcor_auc"] = rng.uniform(size=len(table))
    table["gap_recall_0"] = rng.uniform(size=len(table))
    return table


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def _assert_saves(fig: Figure, path: Path) -> None:
    written = save_figure(fig, path)
    assert written == path
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 2000


def test_distance_heatmap_annotates_each_pair_once(tmp_path: Path) -> None:
    matrix = _matrix()
    fig = distance_heatmap(matrix, title="long text")
    texts = _texts(fig)
    means = [t for t in texts if not t.startswith("±")]
    sds = [t for t in texts if t.startswith("±")]

    assert len(means) == 15 and len(sds) == 15
    assert f"{matrix.mean[1, 0]:.2f}" in means
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["AU", "CA", "NZ", "UK", "US"]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["CA", "NZ", "UK", "US", "ZA"]
    assert fig.axes[0].get_title() == "long text"
    _assert_saves(fig, tmp_path / "heat.png")


def test_distance_heatmap_full_matrix_without_repetitions() -> None:
    fig = distance_heatmap(_matrix(repetitions=1), triangle=False)
    texts = _texts(fig)
    assert len(texts) == 36
    assert not any(t.startswith("±") for t in texts)
    assert fig.axes[0].get_title() == "sinkhorn_long"


def test_correlation_heatmap_marks_significant_cells(tmp_path: Path) -> None:
    result = correlations(_pair_table())
    fig = correlation_heatmap(result, "kendall_tau")
    texts = fig.axes[0].texts
    significant = result.kendall_p_perm < 0.05

    assert len(texts) == 6  # 2 distances x 3 performance columns
    assert sum(t.get_text().endswith("*") for t in texts) == significant.sum() > 0
    bold = [t for t in texts if t.get_fontweight() == "bold"]
    assert len(bold) == significant.sum()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        "dist_sinkhorn_long",
        "dist_lda",
    ]
    assert len(fig.axes[0].get_xticklabels()) == 3
    _assert_saves(fig, tmp_path / "sub" / "corr.png")


def test_correlation_heatmap_leaves_nan_cells_blank() -> None:
    result = correlations(_pair_table())
    result.loc[0, "spearman_rho"] = np.nan
    fig = correlation_heatmap(result, "spearman_rho", p_column="spearman_p")
    assert len(fig.axes[0].texts) == 5
    with pytest.raises(ConfigError, match="tau_b"):
        correlation_heatmap(result, "tau_b")


def test_pair_scatter_labels_every_pair(tmp_path: Path) -> None:
    table = _pair_table()
    table.loc[0, "gap_accuracy"] = np.nan
    row = correlations(table, ["dist_sinkhorn_long"], ["gap_accuracy"]).iloc[0]
    fig = pair_scatter(table, "dist_sinkhorn_long", "gap_accuracy", row.to_dict())
    ax = fig.axes[0]

    assert len(ax.collections[0].get_offsets()) == 14
    assert len(ax.texts) == 14
    assert "CA-NZ" in _texts(fig) and "AU-CA" not in _texts(fig)
    assert "ρ = " in ax.get_title() and "τ = " in ax.get_title() and "14 pairs" in ax.get_title()
    _assert_saves(fig, tmp_path / "scatter.png")
    with pytest.raises(DataError, match="gap_auc"):
        pair_scatter(table, "dist_lda", "gap_auc")


def test_performance_distributions_shows_one_point_per_model(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    rows = [
        (f"s{seed}f{fold}", seed, fold, group, metric, rng.uniform(0.6, 0.8))
        for seed in range(2)
        for fold in range(3)
        for group in GROUPS
        for metric in ("accuracy", "auc")
        for _ in range(2)  # two rows per model and group are averaged
    ]
    summary = pd.DataFrame(rows, columns=["model", "seed", "fold", "group", "metric", "value"])
    fig = performance_distributions(summary, "accuracy")
    ax = fig.axes[0]
    points = sum(len(c.get_offsets()) for c in ax.collections)

    assert points == 6 * len(GROUPS)
    assert [t.get_text() for t in ax.get_xticklabels()] == [g.upper() for g in GROUPS]
    assert "6 models" in ax.get_title()
    _assert_saves(fig, tmp_path / "dist.png")
    with pytest.raises(ConfigError, match="f1"):
        performance_distributions(summary, "f1")


def test_representation_plot_labels_each_group(tmp_path: Path) -> None:
    distance = {"au": 0.2, "ca": 0.25, "nz": 0.3, "uk": 0.15, "us": 0.1, "za": 0.35}
    share = {"au": 7.6, "ca": 6.4, "nz": 1.1, "uk": 22.5, "us": 61.5, "za": 0.9}
    fig = representation_plot(distance, share, "sinkhorn_long", log_share=True)
    ax = fig.axes[0]

    assert len(ax.collections[0].get_offsets()) == 6
    assert sorted(_texts(fig)) == sorted(g.upper() for g in GROUPS)
    assert ax.get_xscale() == "log"
    _assert_saves(fig, tmp_path / "representation.png")
    with pytest.raises(DataError, match="za"):
        representation_plot(distance, {k: v for k, v in share.items() if k != "za"}, "lda")


def test_save_figure_adds_the_png_suffix(tmp_path: Path) -> None:
    fig = distance_heatmap(_matrix())
    written = save_figure(fig, tmp_path / "matrix")
    assert written.name == "matrix.png" and written.stat().st_size > 0


def test_lda_scatter_draws_every_passage_and_labels_centroids(tmp_path):
    from regbias.distances.lda import lda_projection
    from regbias.report.figures import lda_scatter

    rng = np.random.default_rng(0)
    draw = {g: rng.normal(loc=i, size=(12, 5)) for i, g in enumerate(["au", "uk", "us"])}
    projection = lda_projection(draw, packaged_lda(n_components=2))
    fig = lda_scatter(projection)
    ax = fig.axes[0]
    offsets = [c.get_offsets() for c in ax.collections]
    assert sum(len(o) for o in offsets) == 36 + 3  # passages + centroids
    assert {t.get_text() for t in ax.texts} == {"AU", "UK", "US"}
    assert save_figure(fig, tmp_path / "lda").stat().st_size > 0


def test_the_effect_heatmap_outlines_the_pairs_that_differ():
    from matplotlib.patches import Rectangle

    from regbias.report.figures import distance_heatmap

    groups = ["au", "nz", "uk"]
    matrix = DistanceMatrix("effect", groups, np.ones((3, 3)) - np.eye(3), np.zeros((3, 3)), 1)
    plain = distance_heatmap(matrix)
    marked = distance_heatmap(matrix, marked={("uk", "au")})  # either order
    outlined = [p for p in marked.axes[0].patches if isinstance(p, Rectangle)]
    assert len(outlined) == 1 and outlined[0].get_xy() == (-0.5, 0.5)
    assert not [p for p in plain.axes[0].patches if isinstance(p, Rectangle)]


def test_a_long_scatter_title_is_wrapped_inside_the_figure_without_a_layout_warning(
    tmp_path: Path,
) -> None:
    title = "The primary hypothesis: " + "a long title of many words " * 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = pair_scatter(_pair_table(), "dist_sinkhorn_long", "gap_accuracy", title=title)
        _assert_saves(fig, tmp_path / "long.png")
    box = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer())  # type: ignore[attr-defined]
    assert fig.axes[0].get_title().count("\n") >= 2
    assert box.y1 <= fig.bbox.y1 and box.x0 >= 0 and box.x1 <= fig.bbox.x1
