"""Each file of a folder walk gets a time budget: a backstop, so that input nobody foresaw (a
regex that backtracks exponentially on it) makes one file a coverage note, never a hang of a
user's pre-commit hook or CI job.

The budget is a real-time timer (`signal.setitimer`) whose SIGALRM raises `OverBudget` in the
main thread: CPython's regex engine checks for signals as it matches, so even a runaway
pattern is interrupted. `OverBudget` derives from BaseException, as KeyboardInterrupt does, so
that a reader's `except Exception` does not swallow it. Off the main thread, or on a platform
without SIGALRM (Windows), a budget does nothing and the file is read as before.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

__all__ = ["FILE_BUDGET_S", "OverBudget", "over_budget", "within_budget"]

#: Wall seconds one file's reading may take in a walk. Every file of the speed bench's corpus
#: (tests/corpus) is read in well under a second; a file that takes ten is not a slow file but a
#: pathological one (minutes on 15 lines of a compose file, evroon/bracket).
FILE_BUDGET_S = 10.0


class OverBudget(BaseException):
    """A file's reading ran out of its time budget."""


#: Whether a budget is running: an inner one leaves the outer's timer alone.
_running = False


def over_budget(seconds: float | None = None) -> str:
    """What a file over its budget (default `FILE_BUDGET_S`) is, for its coverage note."""
    seconds = FILE_BUDGET_S if seconds is None else seconds
    return f"not read: reading took over {seconds:g} s; please report"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise OverBudget


@contextlib.contextmanager
def within_budget(seconds: float | None = None) -> Iterator[None]:
    """Run the block with a budget of `seconds` (default `FILE_BUDGET_S`): OverBudget is
    raised in it when they run out. The previous SIGALRM handler and timer are restored (the
    timer less the time the block took). Nothing is done inside another budget, off the main
    thread or without SIGALRM."""
    global _running
    seconds = FILE_BUDGET_S if seconds is None else seconds
    if (
        _running
        or seconds <= 0
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _interrupt)
    started = time.monotonic()
    before = signal.setitimer(signal.ITIMER_REAL, seconds)
    _running = True
    try:
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:  # restored even when the timer ran out just as the block ended
            _running = False
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
            if before[0] > 0:
                # The caller's own timer, less the time spent here (due now if it has passed).
                left = max(before[0] - (time.monotonic() - started), 1e-6)
                signal.setitimer(signal.ITIMER_REAL, left, before[1])
