"""Strict CSV reading shared by the corpus readers: every malformation names file and line."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from regbias.errors import DataError

#: The largest field limit every platform's ``csv`` accepts (a C long on Windows).
_LARGEST_FIELD = 2**31 - 1


def read_csv_rows(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line number, row by column name)`` of a UTF-8 CSV file with a header.

    Blank lines are skipped; a byte-order mark is accepted. A field may be as long as the file
    (``csv``'s default limit of 128 KiB would call a long valid text malformed).

    Raises:
        DataError: a required column is missing, a column name appears twice, a row has the
            wrong number of fields, the quoting is broken, or the file is not UTF-8; the
            message names file and line.
    """
    _allow_fields_of(path)
    with path.open(encoding="utf-8-sig", newline="") as stream:
        reader = csv.reader(stream, strict=True)
        try:
            header = next(reader, None) or []
            missing = [name for name in required if name not in header]
            if missing:
                raise DataError(
                    f"{path}, line 1: no column named {', '.join(map(repr, missing))}; the "
                    f"header has {', '.join(map(repr, header)) or 'no columns'}"
                )
            _check_unique(path, header)
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise DataError(
                        f"{path}, line {reader.line_num}: expected {len(header)} fields, "
                        f"found {len(row)}"
                    )
                yield reader.line_num, dict(zip(header, row, strict=True))
        except csv.Error as error:
            raise DataError(f"{path}, line {reader.line_num}: malformed CSV ({error})") from None
        except UnicodeDecodeError:
            raise DataError(non_utf8_message(path)) from None


def _allow_fields_of(path: Path) -> None:
    """Raise ``csv``'s field limit (process-wide) to the file's size: no field is longer.

    Only ever raised, never put back: another file may still be being read.
    """
    wanted = min(path.stat().st_size + 1, _LARGEST_FIELD)
    if wanted > csv.field_size_limit():
        csv.field_size_limit(wanted)


def _check_unique(path: Path, header: list[str]) -> None:
    """A column name given twice would leave one of the columns unread, silently."""
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise DataError(
            f"{path}, line 1: the header names column(s) {', '.join(map(repr, twice))} more "
            "than once; rename or remove the duplicates"
        )


def non_utf8_message(path: Path) -> str:
    """Where a file stops being UTF-8: the first bad line and its bad bytes, for the user."""
    with path.open("rb") as stream:
        for number, line in enumerate(stream, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as error:
                bad = line[error.start : error.end]
                return (
                    f"{path}, line {number}: not UTF-8 text (bytes {bad!r} at column "
                    f"{error.start + 1}); re-save the file as UTF-8"
                )
    return f"{path} is not UTF-8 text; re-save the file as UTF-8"
