"""The canvas every report figure is drawn on, and the one way figures are written.

Figures are built on the Agg canvas directly, without pyplot, so that importing a figure
module changes no global backend and figures made in a long sweep are never kept alive by
pyplot.

Every text on them is drawn as written: a group named ``a$b`` or ``$x^2$`` (from a CSV
file) is a label, never matplotlib's mathtext (whose parser fails on it and took the run down).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

#: Resolution of every written figure.
DPI = 150


class PlainTextFigure(Figure):
    """A figure whose texts are plain text: ``$`` is a dollar sign, not the start of mathtext.

    Names come from users (groups, columns, encoders) and reach a figure as tick labels,
    titles, annotations and legends; rather than escape each of them, every text of the figure
    is made plain when it is drawn (``savefig``, MLflow's ``log_figure``, a canvas draw), tick
    labels created during the draw included.
    """

    def draw(self, renderer: Any) -> None:
        """Draw with mathtext off for every text of the figure."""
        with rc_context({"text.parse_math": False}):
            for text in self.findobj(Text):
                text.set_parse_math(False)
            super().draw(renderer)


def new_figure(width: float, height: float) -> Figure:
    """An empty ``width`` by ``height`` inch figure on its own Agg canvas, constrained layout.

    Unknown to pyplot, it is freed with its last reference; its texts are drawn as written
    (:class:`PlainTextFigure`).
    """
    fig = PlainTextFigure(figsize=(width, height), layout="constrained")
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
