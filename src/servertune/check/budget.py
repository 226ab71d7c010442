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
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import TypeVar

from servertune.check.memo import run_table

__all__ = [
    "FILE_BUDGET_S",
    "LINK_BUDGET_S",
    "OVER_BUDGET_FIX",
    "OverBudget",
    "each_within_budget",
    "file_within_budget",
    "linking_within_budget",
    "not_linked",
    "over_budget",
    "overran",
    "overran_files",
    "within_budget",
]

T = TypeVar("T")

#: Wall seconds one file's reading may take in a walk. Every file of the speed bench's corpus
#: (tests/corpus) is read in well under a second; one that takes this long is not a slow
#: file but a pathological one (minutes on 15 lines of a compose file, evroon/bracket). Above
#: the limits of the children a reading starts (gunicorn loading a config: 10 s of wall time;
#: uvicorn's parser: 10 s of CPU), so a config that loops is still said as such, and with room
#: for a loaded CI runner.
FILE_BUDGET_S = 30.0

#: Wall seconds the linking of a run's files may take, all of it: twice a file's, since it
#: works over every file read (a folder of 63 public projects links in well under a second).
LINK_BUDGET_S = 2 * FILE_BUDGET_S


class OverBudget(BaseException):
    """A file's reading ran out of its time budget."""


#: The fix of a file's note when it overran its budget: what the user can do about it.
OVER_BUDGET_FIX = "report the file (or one like it): no deployment file should take this long"

#: Whether a budget is running: an inner one leaves the outer's timer alone.
_running = False


def over_budget(seconds: float | None = None) -> str:
    """What a file over its budget (default `FILE_BUDGET_S`) is, for its coverage note."""
    seconds = FILE_BUDGET_S if seconds is None else seconds
    return f"not read: reading took over {seconds:g} s; please report"


def not_linked(seconds: float | None = None) -> str:
    """What a run whose linking overran its budget (default `LINK_BUDGET_S`) says, once."""
    seconds = LINK_BUDGET_S if seconds is None else seconds
    return f"not linked: linking took over {seconds:g} s; please report"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise OverBudget


@contextlib.contextmanager
def within_budget(seconds: float | None = None) -> Iterator[None]:
    """Run the block with a budget of `seconds` (default `FILE_BUDGET_S`): OverBudget is
    raised in it when they run out. The previous SIGALRM handler and timer are restored (the
    timer less the time the block took). Nothing is done inside another budget (the outer one
    bounds the block: an inner budget never extends nor shortens it), off the main thread or
    without SIGALRM."""
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


#: The run's table of the files that overran their budget (`memo.run_table`).
_OVERRAN = "over-budget"


def overran(path: Path) -> bool:
    """Whether `path` overran its budget earlier in the run in progress."""
    table = run_table(_OVERRAN)
    return table is not None and os.path.normpath(path) in table


@contextlib.contextmanager
def file_within_budget(path: Path) -> Iterator[None]:
    """`within_budget` for work on one file in the run in progress (its reading, or what a
    run works out from it before reading: the image a Dockerfile builds, the files a script
    writes). A file that overran once raises OverBudget at once, not spending its budget
    again on each pass over the files; one that overruns is recorded so. Inside another
    budget (a pass the linking or another file's reading starts) the file has none of its
    own: the outer budget's running out is the outer block's, and blames no file."""
    if overran(path):
        raise OverBudget
    if _running:
        yield
        return
    try:
        with within_budget():
            yield
    except OverBudget:
        table = run_table(_OVERRAN)
        if table is not None:
            table[os.path.normpath(path)] = (True, ())
        raise


def linking_within_budget() -> contextlib.AbstractContextManager[None]:
    """`within_budget` for the whole linking of a run (`LINK_BUDGET_S`)."""
    return within_budget(LINK_BUDGET_S)


def each_within_budget(paths: Iterable[Path], work: Callable[[Path], T]) -> list[tuple[Path, T]]:
    """`work(path)` for each of `paths` within the file's budget (`file_within_budget`), with
    each path it finished for: a pass over the run's files (what a compose file mounts, a
    script's lines). A file over its budget, in this pass or an earlier one, is left out (its
    reading, or the run, names it once). Inside another budget, whose running out is not the
    file's, the OverBudget goes on to the block that set it."""
    done: list[tuple[Path, T]] = []
    for path in paths:
        nested = _running
        try:
            with file_within_budget(path):
                value = work(path)
        except OverBudget:
            if nested and not overran(path):
                raise  # the outer budget ran out: its block stops, not only this file
            continue
        done.append((path, value))
    return done


def overran_files() -> tuple[Path, ...]:
    """The files that overran their budget in the run in progress, in order."""
    table = run_table(_OVERRAN)
    return tuple(Path(str(name)) for name in table or {})
