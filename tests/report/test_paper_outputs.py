"""What a paper needs from a study: its table (CSV, LaTeX), print figures, provenance, floors.

Each fails on f7bc9eb (issue 60): none of these existed there.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from mlflow.tracking import MlflowClient

from regbias.analysis.study import Analysis, AnalysisSettings, StudyResults
from regbias.distances.matrix import DistanceMatrix
from regbias.report.markdown import (
    FLOOR_DIAGONAL,
    FLOOR_DIAGONAL_AGAIN,
    floors_on_diagonal,
    report_markdown,
)
from regbias.report.noise import noise_section
from regbias.report.paper_table import paper_latex, paper_section, paper_table
from regbias.report.provenance import command_line, provenance_section
from regbias.tracking.artifacts import PAPER_CSV, print_copy
from regbias.tracking.runs import start_run
from tests.conftest import packaged


def _pairwise() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group_a": ["au", "au", "au"],
            "group_b": ["ca", "nz", "baseline"],
            "excess_dist_sinkhorn_long": [0.02, -0.05, 0.3],
            "pair_test_family": ["regions", "regions", "reference"],
            "pair_test_effect": [0.0213, 0.0402, 0.1],
            "pair_test_effect_ci_low": [0.0101, 0.0033, 0.05],
            "pair_test_effect_ci_high": [0.0333, 0.0845, 0.15],
            "pair_test_p_adjusted": [0.0015, 0.2, 0.001],
            "pair_test_differs": [True, False, True],
            "perf_test_family": ["regions", "regions", "reference"],
            "perf_test_gap": [-0.0106, math.nan, 0.0],
            "perf_test_ci_low": [-0.0369, math.nan, 0.0],
            "perf_test_ci_high": [0.0136, math.nan, 0.0],
            "perf_test_p_adjusted": [1.0, math.nan, 1.0],
            "perf_test_differs": [False, False, False],
        }
    )


def test_one_row_per_region_pair_with_estimates_intervals_verdicts_and_excesses() -> None:
    table = paper_table(_pairwise())
    assert list(table["pair"]) == ["au-ca", "au-nz"]  # the reference pair is left out
    assert list(table["encoder_effect_verdict"]) == ["differs", "not shown"]
    assert list(table["performance_gap_verdict"]) == ["not shown", "untested"]
    assert list(table["excess_sinkhorn_long"]) == [0.02, -0.05]
    latex = paper_latex(table, 0.95)
    assert latex.startswith("\\begin{tabular}") and "\\toprule" in latex and "\\bottomrule" in latex
    # Each estimate to the decimal a twentieth of its interval reaches; none where untested.
    assert "au-ca & 0.021 [0.010, 0.033] & differs & -0.011 [-0.037, 0.014] & not shown" in latex
    tiny = paper_latex(
        table.assign(
            encoder_effect=-2.27e-7, encoder_effect_ci_low=-8.5e-7, encoder_effect_ci_high=7.7e-7
        ),
        0.95,
    )
    assert "-2.3e-07 [-8.5e-07, 7.7e-07]" in tiny
    # Where the ends' Monte Carlo sd is known, to the digit it supports, as the report prints.
    measured = paper_latex(paper_table(_pairwise().assign(pair_test_effect_ci_mc=0.004)), 0.95)
    assert "au-ca & 0.02 [0.01, 0.03] & differs" in measured
    assert "Encoder effect [95\\% CI]" in latex and "Excess sinkhorn\\_long" in latex
    assert f"[{PAPER_CSV}]({PAPER_CSV})" in paper_section(table)


def test_every_figure_but_the_word_charts_gets_a_pdf_for_print(tmp_path) -> None:
    assert print_copy("figures/primary.png") == "figures/primary.pdf"
    assert print_copy("figures/scatter/primary__d__g.png") == "figures/scatter/primary__d__g.pdf"
    for diagnostic in ("explain/au-uk", "sinkhorn_long_floor", "performance_accuracy"):
        assert print_copy(f"figures/{diagnostic}.png") is None
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    experiment = client.create_experiment("e", artifact_location=str(tmp_path / "art"))
    run = start_run(client, experiment, "r", {})
    figure = Figure()
    figure.add_subplot().plot([0, 1])
    run.figure(figure, "figures/x.png")
    listed = [a.path for a in client.list_artifacts(run.run_id, "figures")]
    assert listed == ["figures/x.pdf", "figures/x.png"]


def test_the_report_states_its_command_commit_date_versions_and_run(tmp_path) -> None:
    password = "s3cret"
    argv = ["/x/run.py", "-m", "seed=range(5)", f"tracking.uri=http://u:{password}@h:5000"]
    assert command_line(argv).startswith("python run.py -m 'seed=range(5)' ")
    assert password not in command_line(argv)
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    experiment = client.create_experiment("e", artifact_location=str(tmp_path / "art"))
    run = start_run(client, experiment, "r", {"git.commit": "abc123", "version.torch": "2.13.0"})
    section = provenance_section(run, argv)
    assert section.startswith("## Provenance")
    assert "- commit: `abc123`" in section and "\n  - torch 2.13.0" in section
    assert "- written: 20" in section and " UTC" in section
    assert f"- MLflow run: [{run.run_id}](http://127.0.0.1:5000/#/experiments/" in section
    assert password not in section


def test_a_distance_table_shows_the_floors_on_its_diagonal() -> None:
    values = np.array([[[0.0, 24.0], [24.0, 0.0]]] * 2)
    matrix = DistanceMatrix.from_repetitions("sinkhorn_long", ["au", "za"], values)
    assert floors_on_diagonal(matrix).loc["au", "au"] == 0.0  # no floors measured: as before
    floored = DistanceMatrix(**{**matrix.__dict__, "floor": np.array([23.2, 23.9])})
    shown = floors_on_diagonal(floored)
    assert (shown.loc["au", "au"], shown.loc["za", "za"], shown.loc["au", "za"]) == (
        23.2,
        23.9,
        24.0,
    )
    assert floored.mean[0, 0] == 0.0 and "noise floor" in FLOOR_DIAGONAL


def test_a_studys_provenance_links_its_jobs_side_by_side(tmp_path) -> None:
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    experiment = client.create_experiment("e", artifact_location=str(tmp_path / "art"))
    run = start_run(client, experiment, "study", {})
    section = provenance_section(run, ["run.py"], jobs=["a1", "b2"])
    expected = "/#/compare-runs?runs=%5B%22a1%22%2C%20%22b2%22%5D&experiments=%5B%22"
    assert f"- its 2 jobs side by side: [compare](http://127.0.0.1:5000{expected}" in section


def test_a_print_copy_is_the_same_bytes_whenever_it_is_written(tmp_path) -> None:
    """No creation date in the PDF: two runs of one config give the same artifacts."""
    import time

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    experiment = client.create_experiment("e", artifact_location=str(tmp_path / "art"))
    figure = Figure()
    figure.add_subplot().plot([0, 1])
    written = []
    for name in ("a", "b"):
        run = start_run(client, experiment, name, {})
        run.figure(figure, "figures/x.png")
        written.append(client.download_artifacts(run.run_id, "figures/x.pdf", str(tmp_path / name)))
        time.sleep(1.1)  # a PDF's creation date has whole seconds
    first, second = (Path(w).read_bytes() for w in written)
    assert first == second


def test_the_floors_note_is_said_once_on_a_page_of_several_distances() -> None:
    values = np.array([[[0.0, 24.0], [24.0, 0.0]]] * 2)
    floored = {
        name: DistanceMatrix(
            **{
                **DistanceMatrix.from_repetitions(name, ["au", "za"], values).__dict__,
                "floor": np.array([23.2, 23.9]),
            }
        )
        for name in ("sinkhorn_long", "sinkhorn_short", "energy_long")
    }
    results = StudyResults(["au", "za"], floored)
    page = report_markdown(
        results, Analysis(None, None, None, None, None), packaged(AnalysisSettings, "analysis")
    )
    assert page.count(FLOOR_DIAGONAL) == 1 and page.count(FLOOR_DIAGONAL_AGAIN) == 2
    assert page.index(FLOOR_DIAGONAL) < page.index(FLOOR_DIAGONAL_AGAIN)


def test_that_every_solve_converged_is_said_once() -> None:
    values = np.array([[[0.0, 24.0], [24.0, 0.0]]] * 2)

    def matrix(name: str, excluded: int) -> DistanceMatrix:
        made = DistanceMatrix.from_repetitions(name, ["au", "za"], values)
        left = np.array([[0, excluded], [excluded, 0]])
        return DistanceMatrix(**{**made.__dict__, "floor": np.array([1.0, 2.0]), "excluded": left})

    converged = {n: matrix(n, 0) for n in ("sinkhorn_long", "sinkhorn_short", "lda")}
    section = noise_section(converged)
    assert section.count("converged") == 1
    assert "Every solve of every distance converged: no repetition was left out." in section
    some = noise_section({**converged, "energy_long": matrix("energy_long", 1)})
    assert "Every solve of sinkhorn_long, sinkhorn_short, lda converged" in some
    assert "Repetitions left out (a solve did not converge): au-za 1." in some
