"""The canvas every report figure is drawn on, and the one way figures are written.

Figures are built on the Agg canvas directly, without pyplot, so that importing a figure
module changes no global backend and figures made in a long sweep are never kept alive by
pyplot.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Resolution of every written figure.
DPI = 150


def new_figure(width: float, height: float) -> Figure:
    """An empty ``width`` by ``height`` inch figure on its own Agg canvas, constrained layout.

    Unknown to pyplot, it is freed with its last reference.
    """
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Figure, path: Path | str) -> Path:
    """Write ``fig`` as a PNG at 150 dpi (folders made, ``.png`` added), close it; the path."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        path = path.with_name(path.name + ".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png")
    # Our figures are unknown to pyplot and freed with their last reference; a caller's pyplot
    # figure would otherwise stay open for the rest of a long sweep.
    from matplotlib import pyplot

    pyplot.close(fig)
    return path
