"""How a number reads in a page: one p-value format and one number format for every floor.

The report, the console summary and a family's verdict in words all print their p-values
with :func:`p_text`, so one page never shows ``0.12`` beside ``0.123``.
"""

from __future__ import annotations

import math

#: The significant digits of a p-value in words.
P_DIGITS = 2


def _finite(value: object) -> bool:
    try:
        return math.isfinite(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # None, text, pandas' NA: no number
        return False


def p_text(p: object) -> str:
    """A p-value in words: ``f"{p:.2g}"`` (0.12, 0.039, 1e-05), ``n/a`` for no finite number."""
    return f"{p:.{P_DIGITS}g}" if _finite(p) else "n/a"


def number_text(value: object, digits: int = 3) -> str:
    """A statistic in words: ``digits`` significant digits, ``n/a`` for no finite number."""
    return f"{value:.{digits}g}" if _finite(value) else "n/a"


#: The most decimals :func:`monte_carlo_text` writes out; a finer unit is written as 1.2e-06.
_FIXED_DECIMALS = 4


def monte_carlo_step(mc_sd: float) -> int:
    """The power of ten of the last digit a Monte Carlo sd supports (``0.0013 -> -2``).

    The unit is the smallest power of ten at least twice the sd: hundredths for 0.0013.
    """
    return math.ceil(math.log10(2 * mc_sd))


def monte_carlo_text(value: object, mc_sd: object, digits: int = 3) -> str:
    """A Monte Carlo estimate to the digit its Monte Carlo sd supports, at most ``digits``.

    The last digit's unit is the smallest power of ten at least twice ``mc_sd``, so a rerun
    with other draws moves the printed value by about a unit at most; an unknown sd (NaN, an
    older table) prints ``digits`` significant digits, as :func:`number_text`.
    """
    if not _finite(value):
        return "n/a"
    x = float(value)  # type: ignore[arg-type]
    if not _finite(mc_sd) or float(mc_sd) <= 0 or x == 0:  # type: ignore[arg-type]
        return number_text(x, digits)
    supported = -monte_carlo_step(float(mc_sd))  # type: ignore[arg-type]
    decimals = min(supported, digits - 1 - math.floor(math.log10(abs(x))))
    rounded = round(x, decimals) + 0.0  # no "-0.00"
    if decimals <= _FIXED_DECIMALS:
        return f"{rounded:.{max(decimals, 0)}f}"
    if rounded == 0:
        return "0"
    significant = max(1, decimals + math.floor(math.log10(abs(rounded))) + 1)
    return f"{rounded:.{significant - 1}e}"  # tiny values (a random encoder's): 1.2e-06


def points(value: float) -> str:
    """A gap in points of the metric, signed (``+3.1``; ``n/a`` where there is none)."""
    return "n/a" if not math.isfinite(value) else f"{100 * value:+.1f}"


def points_interval(low: float, high: float) -> str:
    """An interval in points, ``[+1.0, +5.0]`` (``no interval`` where there is none)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no interval"
    return f"[{100 * low:+.1f}, {100 * high:+.1f}]"


def models_words(n: int) -> str:
    """``1 model``, ``5 models``."""
    return f"{n} model" + ("s" if n != 1 else "")
