"""A long finding as a short bullet with its clauses beneath: every bullet read at a glance.

A finding is one sentence of clauses (a verdict, its interval, its caveats, the pairs it
names). On the page each bullet is at most :data:`LIMIT` characters: a longer finding keeps its
first clause as the bullet and its other clauses become bullets beneath it, split where the
sentence itself separates them (``;`` between clauses, ``:`` before what it introduces, ``,``
between the pairs of a list, a long parenthesis lifted out), never inside brackets or a code
span.
The words are the finding's own, in its order; only the layout changes (findings.json keeps
each finding as one line).
"""

from __future__ import annotations

import re

#: The longest bullet of the report's findings, in characters (its indent and ``- `` included).
LIMIT = 300
_INDENT = "    "  # a nested Markdown list (Python-Markdown needs four spaces)
_OPEN, _CLOSE = "([", ")]"
#: What starts a sentence after ``. ``: a capital letter or a bold label.
_SENTENCE = re.compile(r"[A-Z*]")
#: An item of a list of pairs: ``au-ca``, ``au-ca (effect ...)``, ``au-ca.``.
_PAIR = re.compile(r"^[^\s,()]+-[^\s,()]+(?: \(|\.?$)")


def bullet_lines(text: str, depth: int = 0) -> list[str]:
    """``text`` as Markdown bullets at ``depth``: one bullet, or its head and its clauses."""
    prefix = f"{_INDENT * depth}- "
    if len(prefix) + len(text) <= LIMIT:
        return [prefix + text]
    parts = _clauses(text)
    if parts is None:
        return [prefix + text]  # nothing to split at: one clause longer than the limit
    head, children = parts
    lines = bullet_lines(head, depth)
    return lines + [line for child in children for line in bullet_lines(child, depth + 1)]


def _clauses(text: str) -> tuple[str, list[str]] | None:
    """The head and the clauses beneath it, at the first separator that splits ``text``."""
    for separator in (". ", "; "):
        pieces = _split(text, separator, after=_SENTENCE if separator == ". " else None)
        if len(pieces) > 1:
            ends = "." if separator == ". " else ""
            return pieces[0] + ends, [p + ends for p in pieces[1:-1]] + [pieces[-1]]
    pieces = _split(text, ": ", first=True)
    if len(pieces) > 1:
        return pieces[0] + ":", _pairs(pieces[1]) or pieces[1:]
    return _lifted(text)


def _pairs(text: str) -> list[str]:
    """The items of a list of pairs (``au-ca (...), au-uk (...)``); empty where it is not one."""
    items = _split(text, ", ")
    return items if len(items) > 1 and all(_PAIR.match(item) for item in items) else []


def _lifted(text: str) -> tuple[str, list[str]] | None:
    """The text with its longest top-level parenthesis lifted out as the clause beneath it."""
    spans = _parentheses(text)
    if not spans:
        return None
    start, end = max(spans, key=lambda s: s[1] - s[0])
    inner = text[start + 1 : end]
    head = (text[:start].rstrip() + text[end + 1 :]).strip()
    return (head, [inner]) if head and inner else None


def _split(
    text: str, separator: str, first: bool = False, after: re.Pattern[str] | None = None
) -> list[str]:
    """``text`` split at ``separator`` outside brackets and code spans.

    ``first``: at most once; ``after``: only where what follows the separator matches.
    """
    pieces, depth, code, start, i = [], 0, False, 0, 0
    while i < len(text):
        char = text[i]
        if char == "`":
            code = not code
        elif not code and char in _OPEN:
            depth += 1
        elif not code and char in _CLOSE:
            depth = max(0, depth - 1)
        elif (
            not code
            and depth == 0
            and text.startswith(separator, i)
            and (after is None or after.match(text, i + len(separator)))
        ):
            pieces.append(text[start:i])
            start = i + len(separator)
            i = start
            if first:
                break
            continue
        i += 1
    pieces.append(text[start:])
    return [p for p in (p.strip() for p in pieces) if p]


def _parentheses(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each top-level parenthesis (outside code spans)."""
    spans, depth, code, start = [], 0, False, 0
    for i, char in enumerate(text):
        if char == "`":
            code = not code
        elif not code and char == "(":
            if depth == 0:
                start = i
            depth += 1
        elif not code and char == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i))
    return spans
