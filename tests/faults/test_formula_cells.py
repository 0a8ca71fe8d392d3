"""Issue 56, item 2: no CSV regbias writes holds a cell a spreadsheet would run (CSV injection).

A group named ``=1+2`` or ``@SUM(1+1)``, or a text ``=cmd|' /C calc'!A0``, was written as it is
into ``analysis/pair_tests.csv``, ``distances/*.csv`` and ``explain/*_typical.csv``, locally and
in MLflow. Such a cell now begins with ``'`` (the spreadsheet shows the text), numbers keep their
sign, and regbias reads every name back as it was.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from regbias.tables import csv_text, neutral, read_table, restored
from regbias.tracking.runs import start_run
from tests.cli import run_job, runs

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
ATTACK = "=cmd|' /C calc'!A0"


@pytest.mark.parametrize(
    "cell", ["=1+2", "@SUM(1+1)*cmd|x", "+x", "-x+1", "\tx", "\rx", "'=x", "''@x", "'plain"]
)
def test_a_formula_cell_is_neutralised_and_restored(cell):
    written = neutral(cell)
    assert (isinstance(written, str) and written.startswith("'")) or cell[0] not in "=+-@\t\r"
    assert restored(written) == cell


@pytest.mark.parametrize("number", ["-0.5", "-1e-3", "+2", "-inf", "-nan", "au", "", "1-2"])
def test_numbers_and_ordinary_names_are_left_as_they_are(number):
    assert neutral(number) == number


def test_a_table_keeps_its_numbers_and_reads_back_its_names(tmp_path):
    frame = pd.DataFrame(
        {"group_a": ["=1+2", "au"], "group_b": ["@x", "'-y"], "effect": [-0.25, 1e-9]},
        index=pd.Index(["-z", "k"]),
    )
    path = tmp_path / "t.csv"
    path.write_text(csv_text(frame, index=True))
    assert path.read_text().splitlines() == [
        ",group_a,group_b,effect",
        "'-z,'=1+2,'@x,-0.25",
        "k,au,''-y,1e-09",
    ]
    back = read_table(path, index_col=0)
    assert back.index.tolist() == ["-z", "k"]
    pd.testing.assert_frame_equal(back.reset_index(drop=True), frame.reset_index(drop=True))


def _formula_cells(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.csv")):
        with path.open(newline="") as lines:
            for row in csv.reader(lines):
                found += [f"{path.name}: {c!r}" for c in row if c and c[0] in FORMULA_STARTS]
    cells = [f.split(": ", 1)[1].strip("'") for f in found]
    numbers = pd.to_numeric(pd.Series(cells, dtype=object), errors="coerce").notna()
    return [f for f, number in zip(found, numbers, strict=True) if not number]


def test_no_csv_of_a_job_holds_a_formula(tmp_path):
    groups = {"train": 240, "=1+2": 40, "@SUM(1+1)": 40, "+x": 40}
    rows = ["text,label,group"]
    words = "good bad happy sad great awful fine terrible lovely nasty calm loud".split()
    for group, count in groups.items():
        for i in range(count):
            text = ATTACK if i == 0 else " ".join(words[(i + k) % 12] for k in range(6))
            rows.append(f'"{text} {i}",{i % 2},{group}')
    path = tmp_path / "study.csv"
    path.write_text("\n".join(rows) + "\n")
    done = run_job(
        tmp_path, "experiment=smoke", "dataset=csv", f"dataset.path={path}",
        "dataset.train_group=train",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = runs(tmp_path)
    local = next(tmp_path.rglob("report/report.md")).parent
    stored = Path(run.info.artifact_uri.removeprefix("file://"))
    tables = sorted(p.relative_to(local).as_posix() for p in local.rglob("*.csv"))
    assert "analysis/pair_tests.csv" in tables and any(t.startswith("distances/") for t in tables)
    assert _formula_cells(local) == [] and _formula_cells(stored) == []
    pairs = read_table(local / "analysis" / "pair_tests.csv")
    assert {"=1+2", "@SUM(1+1)", "+x"} <= set(pairs["group_a"]) | set(pairs["group_b"])


def test_a_typical_text_table_in_mlflow_is_neutralised(store, tmp_path):
    """``explain/*_typical.csv`` and every other artifact table go through ``RunLog.table``."""
    client, experiment_id = store
    run = start_run(client, experiment_id, "job", {})
    typical = pd.DataFrame({"side": ["=1+2"], "text": [ATTACK], "score": [-0.5]})
    run.table(typical, "explain/a-b_typical.csv")
    stored = Path(client.download_artifacts(run.run_id, "explain/a-b_typical.csv", str(tmp_path)))
    assert stored.read_text().splitlines()[1] == "'=1+2,'=cmd|' /C calc'!A0,-0.5"
    assert read_table(stored)["text"].tolist() == [ATTACK]
