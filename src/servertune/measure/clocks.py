"""The clocks behind each sample: wall time, CPU time, and time spent waiting for a core.

The last one comes from Linux `/proc/<pid>/task/<tid>/schedstat` (second field: nanoseconds
runnable but not running). While another process holds the core a request neither computes nor
waits on I/O, and counting that time as waiting would make a CPU-bound app look I/O-bound.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

__all__ = ["Clock", "rss_kb", "schedstat_run_s"]


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
    tids = [tid] if tid is not None else _all_tids(pid)
    total = 0
    try:
        for t in tids:
            with open(f"/proc/{pid}/task/{t}/schedstat", encoding="ascii") as handle:
                total += int(handle.read().split()[field])
    except (OSError, IndexError, ValueError):
        return None
    return total / 1e9


def rss_kb(statm: str = "/proc/self/statm") -> int | None:
    """This process's resident memory now, in KiB (Linux statm's second field, in pages)."""
    try:
        with open(statm, encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def _all_tids(pid: int) -> list[int]:
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
