"""A run written into a local folder too: the same bytes as the store's, metrics kept in memory."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from regbias.tracking.run_log import RunLog
from regbias.tracking.runs import connect, start_run
from tests.conftest import local_tracking

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return connect(local_tracking(tmp_path_factory.mktemp("store"), "t"))


def write_everything(run: RunLog, tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    figure = Figure()
    figure.add_subplot().plot([0, 1], [1, 0])
    (tmp_path / "page.html").write_text("<p>page</p>")
    run.json({"a": 1, "b": [1.5, None]}, "analysis/headline.json")
    run.text("# Report\n", "report.md")
    run.table(pd.DataFrame({"x": [0.1, 2.0], "g": ["=1+1", "au"]}), "analysis/t.csv")
    run.figure(figure, "figures/f.png")
    run.file(tmp_path / "page.html", "pages")
    run.metrics({"headline/primary_rho": 0.5})


def test_a_local_folder_holds_what_the_store_holds_byte_for_byte(store, tmp_path):
    client, experiment = store
    local = tmp_path / "local"
    run = start_run(client, experiment, "tee", {})
    write_everything(RunLog(client, run.run_id, local=local).under("variant-x/"), tmp_path)
    stored = Path(client.download_artifacts(run.run_id, "variant-x", str(tmp_path / "got")))
    written = sorted(p.relative_to(local / "variant-x") for p in local.rglob("*") if p.is_file())
    assert [str(p) for p in written] == [
        "analysis/headline.json",
        "analysis/t.csv",
        "figures/f.pdf",
        "figures/f.png",
        "pages/page.html",
        "report.md",
    ]
    for relative in written:
        assert (stored / relative).read_bytes() == (local / "variant-x" / relative).read_bytes()
    assert "'=1+1" in (local / "variant-x" / "analysis/t.csv").read_text()  # formulas defused


def test_a_run_without_a_local_folder_writes_the_same_artifacts(store, tmp_path):
    client, experiment = store
    teed, plain = (start_run(client, experiment, name, {}) for name in ("teed", "plain"))
    write_everything(RunLog(client, teed.run_id, local=tmp_path / "local"), tmp_path)
    write_everything(RunLog(client, plain.run_id), tmp_path)
    a = Path(client.download_artifacts(teed.run_id, "", str(tmp_path / "a")))
    b = Path(client.download_artifacts(plain.run_id, "", str(tmp_path / "b")))
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files if f.suffix != ".png")


def test_the_metrics_a_run_logged_are_kept_under_their_full_keys(store):
    client, experiment = store
    run = start_run(client, experiment, "metrics", {})
    own = RunLog(client, run.run_id)
    own.metrics({"a": 1.0})
    own.under("variant-x/").metrics({"b/c": 2.0})
    assert own.logged == {"a": 1.0, "variant-x/b/c": 2.0}
    assert own.logged == client.get_run(run.run_id).data.metrics


def test_a_print_copy_keeps_the_png_s_layout_and_the_figure_its_layout_engine(store, tmp_path):
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from regbias.report.canvas import new_figure

    client, experiment = store
    figure = new_figure(4, 3)
    axes = figure.add_subplot()
    axes.plot([0, 1], [1, 0])
    axes.set_title("a title the layout makes room for")
    run = start_run(client, experiment, "print", {})
    log = RunLog(client, run.run_id, local=tmp_path / "local")
    log.figure(figure, "figures/f.png")
    laid_out = axes.get_position().bounds
    assert isinstance(figure.get_layout_engine(), ConstrainedLayoutEngine)
    assert (tmp_path / "local/figures/f.pdf").read_bytes().startswith(b"%PDF")
    figure.set_layout_engine("none")
    figure.savefig(tmp_path / "again.pdf")  # drawn where the PNG's layout put it
    assert axes.get_position().bounds == laid_out != (0.125, 0.11, 0.775, 0.77)
