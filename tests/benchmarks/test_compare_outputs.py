"""The before-and-after check of a redesign finds a moved number, and only a moved number."""

from __future__ import annotations

import pandas as pd

from tests.benchmark_module import load_benchmark

compare_outputs = load_benchmark("compare_outputs")


def _run(folder, gap: float, extra_column: bool = False):
    analysis = folder / "report" / "analysis"
    performance = folder / "report" / "performance"
    analysis.mkdir(parents=True)
    performance.mkdir(parents=True)
    table = pd.DataFrame(
        {
            "group_a": ["au", "au"],
            "group_b": ["ca", "nz"],
            "p": [0.01, float("nan")],
            "gap": [gap, 0.5],
        }
    )
    if extra_column:
        table["note"] = ["", "untestable"]
    table.to_csv(analysis / "pair_tests.csv", index=False)
    pd.DataFrame({"group": ["au"], "accuracy": [0.8]}).to_csv(
        performance / "groups.csv", index=False
    )
    return folder


def test_the_same_numbers_in_a_new_layout_are_the_same(tmp_path, capsys):
    before = _run(tmp_path / "before", 0.25)
    after = _run(tmp_path / "after", 0.25, extra_column=True)
    assert compare_outputs.main([str(before), str(after)]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 tables the same" in out
    assert "+1 new columns" in out


def test_a_moved_number_is_named_with_its_cell(tmp_path, capsys):
    before = _run(tmp_path / "before", 0.25)
    after = _run(tmp_path / "after", 0.25 + 1e-12)
    assert compare_outputs.main([str(before), str(after)]) == 1
    assert "gap[0] 0.25 -> 0.250000000001" in capsys.readouterr().out
    assert compare_outputs.main([str(before), str(after), "--atol", "1e-9"]) == 0


def test_a_lost_column_or_file_differs(tmp_path):
    before = _run(tmp_path / "before", 0.25, extra_column=True)
    after = _run(tmp_path / "after", 0.25)
    (after / "report" / "performance" / "groups.csv").unlink()
    results = {r.name: r for r in compare_outputs.compare(before, after)}
    assert results["report/analysis/pair_tests.csv"].missing_columns == ["note"]
    assert not results["report/performance/groups.csv"].same


def test_folders_without_tables_are_refused(tmp_path):
    assert compare_outputs.main([str(tmp_path), str(tmp_path)]) == 2


def test_a_renamed_column_is_compared_under_its_new_name(tmp_path):
    before = _run(tmp_path / "before", 0.25)
    after = _run(tmp_path / "after", 0.25)
    pd.DataFrame({"n_permutations": [720]}).to_csv(before / "report/analysis/primary.csv")
    pd.DataFrame({"null_size": [720]}).to_csv(after / "report/analysis/primary.csv")
    primary = "report/analysis/primary.csv"
    assert all(r.same for r in compare_outputs.compare(before, after))
    pd.DataFrame({"null_size": [721]}).to_csv(after / primary)
    (moved,) = [r for r in compare_outputs.compare(before, after) if not r.same]
    assert moved.name == primary and moved.moved == ["null_size[0] 720.0 -> 721.0"]


def test_sizes_say_how_far_each_moved_column_went_and_distances_are_compared(tmp_path, capsys):
    before = _run(tmp_path / "before", 0.25)
    after = _run(tmp_path / "after", 0.2)
    for folder, value in ((before, 1.0), (after, 1.0)):
        (folder / "report" / "distances").mkdir()
        pd.DataFrame({"au": [0.0, value]}, index=["au", "ca"]).to_csv(
            folder / "report/distances/sinkhorn_short.csv"
        )
    assert compare_outputs.main([str(before), str(after), "--sizes"]) == 1
    out = capsys.readouterr().out
    assert "gap: 1 cells, largest move 0.05 (20.00% of the larger value)" in out
    assert "same       report/distances/sinkhorn_short.csv: 2 rows" in out
    pd.DataFrame({"au": [0.0, 1.5]}, index=["au", "ca"]).to_csv(
        after / "report/distances/sinkhorn_short.csv"
    )
    results = {r.name: r for r in compare_outputs.compare(before, after)}
    assert results["report/distances/sinkhorn_short.csv"].sizes == {"au": (1, 0.5, 0.5 / 1.5)}
