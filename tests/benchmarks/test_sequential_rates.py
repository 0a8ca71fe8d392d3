"""``sequential_rates.py`` still runs: the performance test's null rates, cost and planted gaps.

Not a rate check (three sweeps): the benchmark's code keeps working. Its measured rates are in
docs/method.md ("Sequential p-values").
"""

from __future__ import annotations

import re

from tests.benchmark_module import load_benchmark

sequential_rates = load_benchmark("sequential_rates")


def test_the_performance_part_prints_rates_cost_and_detection(capsys) -> None:
    sequential_rates.main(["--tests", "performance", "--sweeps", "3", "--planted-sweeps", "2"])
    out = capsys.readouterr().out
    assert re.search(r"p <= 0\.05: \d+/45 = \d\.\d{4}, 99% bounds", out), out
    assert re.search(r"relabellings drawn: mean \d+, median \d+ of 9999", out), out
    assert re.search(r"sequential   p <= 0\.05: \d\.\d{3}   Holm over the 15 pairs", out), out
    assert re.search(r"fixed count  p <= 0\.05: \d\.\d{3}", out), out
