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
    """A p-value in words: two significant digits, ``n/a`` where there is none.

    The rule: ``f"{p:.2g}"`` for every finite p (0.12, 0.05, 0.039, 0.0004, 1e-05); ``n/a``
    for NaN, an infinity or a value that is no number.

    Args:
        p: the p-value (a float, an int, or anything read back from a table).

    Returns:
        The p-value as the report prints it.
    """
    return f"{p:.{P_DIGITS}g}" if _finite(p) else "n/a"


def number_text(value: object, digits: int = 3) -> str:
    """A statistic in words: ``digits`` significant digits, ``n/a`` where there is none.

    Args:
        value: the number (a float, an int, or anything read back from a table).
        digits: its significant digits.

    Returns:
        ``f"{value:.{digits}g}"``, or ``n/a`` for NaN, an infinity or no number.
    """
    return f"{value:.{digits}g}" if _finite(value) else "n/a"
