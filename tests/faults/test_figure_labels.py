"""Issue 56, item 9: a group named ``$\\foo$`` is drawn as a label, not parsed as mathtext.

Matplotlib reads text between two ``$`` as mathtext; its parser failed on such a group name
when the figures were written after the distance stage, and the run ended FAILED with a raw
traceback. Every figure is drawn on :func:`regbias.report.canvas.new_figure`, whose texts are
plain text: each figure function draws and saves with hostile names, shown as written.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from regbias.distances.lda import lda_projection
from regbias.distances.matrix import DistanceMatrix
from regbias.report import figures
from regbias.report.canvas import new_figure, save_figure
from tests.settings import packaged_lda

# A mathtext parse error, an unpaired dollar, TeX's sub- and superscript marks, and a pair of
# dollars mathtext would parse (and draw as an italic x).
HOSTILE = [r"$\foo$", "a$b", "^_^", "$x$"]


def _matrix() -> DistanceMatrix:
    rng = np.random.default_rng(0)
    values = rng.uniform(0.1, 2.0, size=(3, len(HOSTILE), len(HOSTILE)))
    values = (values + values.transpose(0, 2, 1)) / 2
    for v in values:
        np.fill_diagonal(v, 0.0)
    matrix = DistanceMatrix.from_repetitions(r"sinkhorn_$\bar$", HOSTILE, values)
    floor = np.full(len(HOSTILE), 0.05)
    return DistanceMatrix(
        matrix.name, HOSTILE, matrix.mean, matrix.sd, 3, floor=floor, floor_sd=floor / 10
    )


def _pair_table() -> pd.DataFrame:
    rows = [(a, b) for i, a in enumerate(HOSTILE) for b in HOSTILE[i + 1 :]]
    table = pd.DataFrame(rows, columns=["group_a", "group_b"])
    table["dist_$a$"] = np.linspace(0.1, 1.0, len(table))
    table["gap_$\\x$"] = np.linspace(0.0, 0.2, len(table))
    return table


def _figure(name: str) -> Figure:
    """The figure function ``name`` drawn with hostile names everywhere a name goes."""
    matrix = _matrix()
    table = _pair_table()
    correlation = pd.DataFrame(
        {
            "distance": ["dist_$a$"],
            "performance": ["gap_$\\x$"],
            "spearman_rho": [0.5],
            "spearman_p_perm": [0.01],
        }
    )
    summary = pd.DataFrame(
        [
            {"model": f"m{m}", "group": g, "metric": "acc_$y$", "value": 0.5 + 0.01 * m}
            for m in range(3)
            for g in HOSTILE
        ]
    )
    rng = np.random.default_rng(0)
    draw = {g: rng.normal(loc=i, size=(12, 5)) for i, g in enumerate(HOSTILE)}
    rates = pd.DataFrame(
        {
            "distance": [r"$\foo$"] * 2,
            "share": [0.1, 0.2],
            "power": [0.2, 0.9],
            "power_low": [0.1, 0.8],
            "power_high": [0.3, 1.0],
            "power_unadjusted": [0.3, 0.95],
        }
    )
    makers = {
        "distance_heatmap": lambda: figures.distance_heatmap(
            matrix, marked={(HOSTILE[1], HOSTILE[0])}
        ),
        "distance_heatmap_titled": lambda: figures.distance_heatmap(
            matrix, title=r"$\foo$", triangle=False
        ),
        "floor_plot": lambda: figures.floor_plot(matrix),
        "correlation_heatmap": lambda: figures.correlation_heatmap(correlation),
        "pair_scatter": lambda: figures.pair_scatter(table, "dist_$a$", "gap_$\\x$"),
        "performance_distributions": lambda: figures.performance_distributions(summary, "acc_$y$"),
        "representation_plot": lambda: figures.representation_plot(
            dict.fromkeys(HOSTILE, 0.5), dict.fromkeys(HOSTILE, 0.25), r"$\foo$"
        ),
        "lda_scatter": lambda: figures.lda_scatter(
            lda_projection(draw, packaged_lda(n_components=2)), title="a$b"
        ),
        "power_curves": lambda: figures.power_curves(rates, "$p$ <= a$b"),
    }
    return makers[name]()


FIGURES = [
    "distance_heatmap",
    "distance_heatmap_titled",
    "floor_plot",
    "correlation_heatmap",
    "pair_scatter",
    "performance_distributions",
    "representation_plot",
    "lda_scatter",
    "power_curves",
]


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_draws_hostile_names_as_written(name: str, tmp_path: Path) -> None:
    fig = _figure(name)
    path = save_figure(fig, tmp_path / name)  # raised ValueError (ParseFatalException)
    assert path.stat().st_size > 0
    shown = {t.get_text() for t in fig.findobj(Text)}
    assert any("$" in text for text in shown), shown  # the names, not rewritten


def test_the_group_labels_keep_their_dollars() -> None:
    fig = figures.distance_heatmap(_matrix(), triangle=False)
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [name.upper() for name in HOSTILE]


def test_any_figure_on_the_canvas_is_plain_text_however_it_is_written() -> None:
    """MLflow's ``log_figure`` calls ``savefig`` itself; tick labels made while drawing too."""
    fig = new_figure(4, 3)
    ax = fig.add_subplot()
    ax.plot(range(10))
    ax.set_xticks(range(4), HOSTILE)
    ax.annotate(r"$\foo$", (1, 1))
    ax.set_title("a$b")
    ax.set_xticks(range(8), [*HOSTILE, *HOSTILE])  # more ticks than before: made at the draw
    fig.savefig(io.BytesIO(), format="png")
    assert all(not t.get_parse_math() for t in fig.findobj(Text))
