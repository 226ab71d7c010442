"""The clocks behind each sample: wall time, CPU time, and time spent waiting for a core.

The last one comes from Linux `/proc/<pid>/task/<tid>/schedstat` (second field: nanoseconds
runnable but not running). While another process holds the core a request neither computes nor
waits on I/O, and counting that time as waiting would make a CPU-bound app look I/O-bound.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Clock", "ThreadWaits", "rss_kb", "schedstat_run_s", "thread_ids"]


def schedstat_wait_s(tid: int | None) -> float | None:
    """Seconds a thread (or, with None, every thread of this process) waited on a run queue."""
    return _schedstat_s(tid, 1)


def schedstat_run_s(tid: int) -> float | None:
    """Seconds a thread of this process has run on a CPU (schedstat's first field)."""
    return _schedstat_s(tid, 0)


def _schedstat_s(tid: int | None, field: int) -> float | None:
    """One field of schedstat in seconds, for a thread or (None) summed over every thread of
    this process; None where Linux does not give it."""
    pid = os.getpid()
    tids = [tid] if tid is not None else thread_ids(pid)
    total = 0
    try:
        for t in tids:
            with open(f"/proc/{pid}/task/{t}/schedstat", encoding="ascii") as handle:
                total += int(handle.read().split()[field])
    except (OSError, IndexError, ValueError):
        return None
    return total / 1e9


class ThreadWaits:
    """Run-queue seconds of this process's threads but one, those that exited included.

    An app that starts a thread for a request (Django's ASGI handler does, twice a request,
    through `sync_to_async`) has its loop wait in `Thread.start()` until the new thread gets a
    core: on a busy machine that wait is the new thread's time on the run queue, neither the
    loop's CPU nor a sync call's sleep. A thread gone by the end of a window takes its
    schedstat with it, so each thread started while this is installed reads its own on the way
    out. A thread whose class overrides `run` is not seen exiting; its wait is then not taken
    out, which leaves the loop's time the larger (the safe side for a limit).
    """

    def __init__(self, leave_out: int) -> None:
        #: The thread whose own wait is counted elsewhere (the loop's).
        self.leave_out = leave_out
        #: (tid, seconds it waited over its life), appended by each thread as it ends.
        self._exited: list[tuple[int, float]] = []

    def mark(self) -> tuple[dict[int, float], int]:
        """A reading to measure a window from (`since`)."""
        return self._live(), len(self._exited)

    def since(self, mark: tuple[dict[int, float], int]) -> float:
        """Seconds the other threads waited on a run queue since `mark`."""
        start, seen = mark
        ended = dict(self._exited[seen:])
        now = {tid: wait for tid, wait in self._live().items() if tid not in ended}
        now.update(ended)
        return sum(max(0.0, wait - start.get(tid, 0.0)) for tid, wait in now.items())

    def _live(self) -> dict[int, float]:
        waits = {}
        for tid in thread_ids(os.getpid()):
            wait = schedstat_wait_s(tid)
            if tid != self.leave_out and wait is not None:
                waits[tid] = wait
        return waits

    @contextlib.contextmanager
    def installed(self) -> Iterator[ThreadWaits]:
        original = threading.Thread.run
        exited = self._exited

        def run(thread: threading.Thread) -> None:
            try:
                original(thread)
            finally:
                tid = threading.get_native_id()
                wait = schedstat_wait_s(tid)
                if wait is not None:
                    exited.append((tid, wait))

        threading.Thread.run = run  # type: ignore[method-assign,assignment]
        try:
            yield self
        finally:
            threading.Thread.run = original  # type: ignore[method-assign]


def rss_kb(statm: str = "/proc/self/statm") -> int | None:
    """This process's resident memory now, in KiB (Linux statm's second field, in pages)."""
    try:
        with open(statm, encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def thread_ids(pid: int) -> list[int]:
    """The Linux thread ids of process `pid` now ([] where /proc does not give them)."""
    try:
        return [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


@dataclass
class Clock:
    """Wall, CPU and core-wait readings; CPU of this thread, or of the whole process.

    ASGI apps may hand work to executor threads, so they are timed with the process's CPU clock.
    """

    whole_process: bool
    tid: int = field(default_factory=threading.get_native_id)

    def read(self) -> tuple[float, float, float | None]:
        """(perf_counter, CPU seconds, run-queue seconds or None where /proc has no schedstat)."""
        cpu = time.process_time() if self.whole_process else time.thread_time()
        wait = schedstat_wait_s(None if self.whole_process else self.tid)
        return time.perf_counter(), cpu, wait
