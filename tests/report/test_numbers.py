"""One p-value format and one number format: what every page prints."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from regbias.numbers import number_text, p_text


def test_a_p_value_has_two_significant_digits() -> None:
    shown = [p_text(p) for p in (0.123, 0.05, 0.039, 0.0004, 1.0, np.float32(0.25))]
    assert shown == ["0.12", "0.05", "0.039", "0.0004", "1", "0.25"]


def test_no_number_reads_n_a() -> None:
    for value in (math.nan, math.inf, None, "0.1", pd.NA):
        assert p_text(value) == "n/a"
        assert number_text(value) == "n/a"


def test_a_number_has_the_digits_asked_for() -> None:
    assert [number_text(0.123456), number_text(-0.05), number_text(12345.0, 4)] == [
        "0.123",
        "-0.05",
        "1.234e+04",
    ]
