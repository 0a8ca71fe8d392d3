"""Names a user chose (groups, columns, labels) written as plain text into Markdown or HTML.

A group named ``<img src=x onerror=...>`` or ``a|b`` comes from a CSV file: written as it is,
it would be live HTML in ``report.html`` and split a row of a Markdown table. Every writer
of the report puts such a name through :func:`markdown_text` (or :func:`markdown_code` inside
backticks); the HTML page renders the Markdown with raw HTML disabled and puts its own text
through :func:`html_text`.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np

# Backslash-escaped: what could start markup (emphasis, code, links, HTML, entities,
# strike-through) or end a table cell; CommonMark allows a backslash before any of them. An
# underscore between two letters or digits (``gap_accuracy``) never delimits emphasis.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>|&~!]|(?<![^\W_])_|_(?![^\W_])")
# A line break would end a table row or a list item.
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x85\u2028\u2029]")
_BACKTICKS = re.compile(r"`+")
# The escapes MLflow's description renderer shows as written (a backslash before the sign).
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_SHOWN_ESCAPES = re.compile(r"\\([<>&])")
# A backslash escape (its character kept), bold markers and backticks (dropped).
_MARKUP = re.compile(r"\\([!-/:-@\[-`{-~])|\*\*|`")


def _one_line(value: object) -> str:
    return _LINE_BREAKS.sub(" ", str(value))


def markdown_text(value: object) -> str:
    """``value`` as literal Markdown text: rendered, it reads exactly as ``str(value)``.

    Markdown's special characters are backslash-escaped (``|`` included, so it stays one table
    cell) and line breaks made spaces.
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), _one_line(value))


def markdown_code(value: object) -> str:
    """``value`` as a Markdown code span (prose, not table cells: :func:`markdown_text`)."""
    text = _one_line(value)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: The significant digits of a float in a table cell.
CELL_DIGITS = 4


def cell_text(value: object) -> str:
    """A table cell: ``yes``/``no``, a float to 4 digits (NaN: empty), else as text."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{value:.{CELL_DIGITS}g}"
    return markdown_text(value)


def path_text(name: str) -> str:
    """``name`` with every character but letters, digits, ``_``, ``-`` and ``.`` as ``_``."""
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in name)


def html_text(value: object) -> str:
    """``value`` as HTML text for an element or attribute (``<>&`` and quotes as entities)."""
    return html.escape(str(value), quote=True)


def plain_text(markdown: str) -> str:
    r"""A line of the report's Markdown as plain text: ``\<b\>`` is ``<b>``, ``**x**`` is x."""
    return _MARKUP.sub(lambda m: m.group(1) or "", markdown)


def description_text(markdown: str) -> str:
    r"""The report's Markdown as an MLflow run description: no escaping artefacts.

    MLflow's UI renders a description with a Markdown converter that keeps the backslash of
    ``\<``, ``\>`` and ``\&`` (``p \<= 0.05``); as HTML entities the signs read as written
    and still open no markup.
    """
    return _SHOWN_ESCAPES.sub(lambda m: _ENTITIES[m.group(1)], markdown)
