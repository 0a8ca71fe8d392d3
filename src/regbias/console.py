"""Progress on the console: a bar on a terminal, a plain line now and then everywhere else.

Stages report progress through :func:`progress_bar`, a drop-in for the ``tqdm`` calls they make
(``total``, ``desc``, ``disable``, ``update``, context manager, iteration). On a terminal it is
a ``tqdm`` bar; in a log file, a pipe or a batch job it writes one plain log line at most every
:data:`PLAIN_INTERVAL_S` seconds and one at the end, so logs stay readable.
``REGBIAS_PROGRESS=bar|plain|off`` overrides the choice.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sized
from typing import Any, NoReturn, Protocol

from regbias.redaction import redacted

#: Environment variable choosing the progress style: ``bar``, ``plain`` or ``off``.
PROGRESS_ENV = "REGBIAS_PROGRESS"
#: Least seconds between two plain progress lines of one task.
PLAIN_INTERVAL_S = 30.0

log = logging.getLogger("regbias.progress")


class ProgressBar(Protocol):
    """What a stage calls on a :func:`progress_bar` (a ``tqdm`` bar or a :class:`PlainProgress`)."""

    def update(self, n: int = 1) -> Any:
        """Count ``n`` more steps done."""


def progress_mode() -> str:
    """``bar`` on a terminal, else ``plain``; ``$REGBIAS_PROGRESS`` wins when set."""
    chosen = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if chosen in ("bar", "plain", "off"):
        return chosen
    return "bar" if sys.stderr.isatty() else "plain"


class PlainProgress:
    """A counter that logs ``desc: n/total (p%) after s`` now and then, and once at the end.

    Args:
        iterable: items to iterate over (optional).
        total: how many steps make 100%; ``len(iterable)`` when omitted.
        desc: what is progressing.
        disable: count silently.
        interval_s: least seconds between two lines.
    """

    def __init__(
        self,
        iterable: Iterable[Any] | None = None,
        total: int | None = None,
        desc: str = "",
        disable: bool = False,
        interval_s: float = PLAIN_INTERVAL_S,
    ) -> None:
        self.iterable = iterable
        if total is None and isinstance(iterable, Sized):
            total = len(iterable)
        self.total = total
        self.desc = desc
        self.disable = disable
        self.n = 0
        self.interval_s = interval_s
        self._start = self._last = time.monotonic()
        self._closed = False
        self._logged = -1  # the count of the last line logged

    def update(self, n: int = 1) -> None:
        """Count ``n`` more steps; log a line when the interval has passed."""
        self.n += n
        now = time.monotonic()
        if not self.disable and now - self._last >= self.interval_s:
            self._last, self._logged = now, self.n
            log.info("%s", self._line(now))

    def _line(self, now: float) -> str:
        done = f"{self.n}"
        if self.total:
            done = f"{self.n}/{self.total} ({100 * self.n / self.total:.0f}%)"
        return f"{self.desc}: {done} after {now - self._start:.0f} s"

    def close(self) -> None:
        """Log the final count once (only when the task took longer than one interval)."""
        if self._closed:
            return
        self._closed = True
        now = time.monotonic()
        if not self.disable and now - self._start >= self.interval_s and self._logged != self.n:
            log.info("%s", self._line(now))

    def __iter__(self) -> Iterator[Any]:
        assert self.iterable is not None, "PlainProgress without an iterable"
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str = "",
    disable: bool | None = False,
    **tqdm_options: Any,
) -> Any:
    """A ``tqdm`` bar on a terminal, else a :class:`PlainProgress` (same calls).

    Args:
        iterable: items to iterate over (optional).
        total: how many steps make 100%.
        desc: what is progressing.
        disable: no output at all (``None`` means "decide by the terminal", as in ``tqdm``).
        **tqdm_options: further ``tqdm`` options (``unit``, ``leave``), used only for the bar.
    """
    mode = progress_mode()
    off = bool(disable) or mode == "off"
    if mode == "bar":
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, desc=desc, disable=off, **tqdm_options)
    return PlainProgress(iterable, total=total, desc=desc, disable=off)


def exit_with(message: str, code: int) -> NoReturn:
    """One line ``regbias: <message>`` on stderr (credentials redacted), then exit ``code``."""
    print(f"regbias: {redacted(message)}", file=sys.stderr)
    raise SystemExit(code) from None
