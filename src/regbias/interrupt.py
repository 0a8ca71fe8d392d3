"""SIGTERM as a request to stop at the next safe point, never an exception inside a callback.

A scheduler's SIGTERM can land anywhere, including inside a C callback (numba, llvmlite, JAX)
where a raised exception is printed as "Exception ignored" and lost. So the handler only sets a
flag; the stages call :func:`check_stop` between units of work (embedding batches, Sinkhorn
solves, training epochs, jobs) and that raises :class:`StopRequested`. A second SIGTERM while a
stop is pending raises at once, for work that reaches no safe point.

Ctrl-C (SIGINT) in a job's work raises ``KeyboardInterrupt`` as usual, but the job's handler
(:func:`interrupt`, installed by :func:`ctrl_c_raises`) sets the same flag first: a
``KeyboardInterrupt`` that JAX or Python swallows (raised inside a gc callback or a weakref
finalizer, printed as "Exception ignored") still stops the job at its next safe point, with exit
status 130. Outside a job's work (Hydra composing a config, a sweep between its jobs) Ctrl-C only
sets the flag (:func:`defer_ctrl_c`, installed by :func:`interrupted_exits`): a
``KeyboardInterrupt`` inside OmegaConf leaves a config half-changed, and Hydra then reports
OmegaConf's own ``AttributeError`` and exit status 1 instead of the Ctrl-C.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

_requested = threading.Event()
_signal_number: int = signal.SIGTERM


class StopRequested(SystemExit):
    """A stop was asked for (SIGTERM); raised at a safe point, ends the job and the sweep.

    A ``SystemExit`` (exit status 128 + signal), so ``except Exception`` does not swallow it and
    a sweep does not go on to its next job.
    """

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(128 + int(signum))
        self.signum = int(signum)

    def __str__(self) -> str:
        return "interrupted" if self.signum == signal.SIGINT else "stopped by SIGTERM"


def request_stop(signum: int = signal.SIGTERM, frame: Any = None) -> None:
    """The SIGTERM handler: set the flag; on a second signal, stop now."""
    global _signal_number
    if _requested.is_set():
        raise StopRequested(signum)
    _signal_number = signum
    _requested.set()


def clear_stop() -> None:
    """Forget a pending stop (tests; a process that handled it)."""
    _requested.clear()


def check_stop() -> None:
    """A safe point: raise :class:`StopRequested` if a stop is pending."""
    if _requested.is_set():
        raise StopRequested(_signal_number)


def install_sigterm_flag() -> bool:
    """Make SIGTERM set the flag for the rest of the process; False off the main thread."""
    try:
        signal.signal(signal.SIGTERM, request_stop)
    except ValueError:  # not the main thread (some launchers): leave signals alone
        return False
    return True


def interrupt(signum: int = signal.SIGINT, frame: Any = None) -> None:
    """The command's Ctrl-C handler: set the stop flag, then raise ``KeyboardInterrupt``.

    Raises:
        KeyboardInterrupt: always; if it is swallowed where it lands (a callback whose
            exception is printed and dropped), :func:`check_stop` raises
            :class:`StopRequested` (exit status 130) at the next safe point.
    """
    global _signal_number
    if not _requested.is_set():  # a pending SIGTERM keeps its own exit status
        _signal_number = signal.SIGINT
        _requested.set()
    raise KeyboardInterrupt


def defer_ctrl_c(signum: int = signal.SIGINT, frame: Any = None) -> None:
    """Ctrl-C outside a job's work: set the stop flag; a second Ctrl-C raises at once.

    Raises:
        KeyboardInterrupt: on a Ctrl-C while a stop is pending (the user insists).
    """
    global _signal_number
    if _requested.is_set():
        raise KeyboardInterrupt
    _signal_number = signal.SIGINT
    _requested.set()


@contextmanager
def interrupted_exits() -> Iterator[None]:
    """The command's whole life: Ctrl-C prints ``regbias: interrupted`` and exits 130.

    Entered on the first line of ``run.py`` and of the ``regbias`` command, before Hydra and
    the study are imported, so a Ctrl-C while they load or while Hydra composes the config is
    one line too, never a traceback. Until a job's work starts (:func:`ctrl_c_raises`), Ctrl-C
    only sets the stop flag (:func:`defer_ctrl_c`): the job raises it where that is safe, and
    one still pending when the block ends (it came after the last safe point) is said and
    exits 130 too. The previous handler is back after the block unless a stop under way
    ignores Ctrl-C. Off the main thread: the handler stays as it is.

    Raises:
        SystemExit: 130 on a ``KeyboardInterrupt`` that reaches the block or a Ctrl-C still
            pending at its end.
    """
    with _handler(signal.SIGINT, defer_ctrl_c):
        try:
            yield
            if _requested.is_set() and _signal_number == signal.SIGINT:
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            ignore_ctrl_c()  # a second Ctrl-C would land in JAX's exit handler: a traceback
            print("regbias: interrupted", file=sys.stderr)
            raise SystemExit(130) from None


@contextmanager
def ctrl_c_raises() -> Iterator[None]:
    """A job's work: inside the block Ctrl-C raises ``KeyboardInterrupt`` (:func:`interrupt`).

    A Ctrl-C that came while it was deferred (:func:`defer_ctrl_c`: Hydra composing the
    config, the sweep between jobs) is raised on entry, before the study is imported. After
    the block the previous handler is back, unless a stop under way ignores Ctrl-C.

    Raises:
        KeyboardInterrupt: on entry, if a Ctrl-C is pending.
    """
    with _handler(signal.SIGINT, interrupt):
        if _requested.is_set() and _signal_number == signal.SIGINT:
            raise KeyboardInterrupt
        yield


def ignore_ctrl_c() -> None:
    """Stopping: a further Ctrl-C is ignored while runs are closed and the process exits.

    Else a second Ctrl-C lands in a ``finally`` (a run left RUNNING) or in an exit handler
    (JAX's prints a ``KeyboardInterrupt`` traceback). Off the main thread: nothing.
    """
    with suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def stop_flag(signum: int = signal.SIGTERM) -> Iterator[None]:
    """Signal ``signum`` inside the block sets the stop flag; the previous handler after it.

    SIGTERM by default. SIGINT (Ctrl-C) too, as SIGTERM does, for work inside libraries that
    lose or garble a ``KeyboardInterrupt`` raised in them (SQLAlchemy prints "Exception
    ignored" and goes on): the next :func:`check_stop` raises :class:`StopRequested` with exit
    status 130; a second Ctrl-C raises at once. Off the main thread: signals are left alone.
    """
    with _handler(signum, request_stop):
        yield


@contextmanager
def _handler(signum: int, handler: Callable[[int, Any], None]) -> Iterator[None]:
    """``handler`` for ``signum`` inside the block, the previous one after it.

    Not restored if the handler was replaced since (a stop under way ignores Ctrl-C). Off the
    main thread: signals are left alone.
    """
    try:
        previous = signal.signal(signum, handler)
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        yield
    finally:
        if previous is not None and signal.getsignal(signum) is handler:
            signal.signal(signum, previous)
