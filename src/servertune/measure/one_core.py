"""The in-flight sweep runs on one core, as each process of a saturated server does.

The plan's capacity is what the server's processes serve once every core is busy, and then
each process has about one core's time: the threads it hands requests to (Django's ASGI handler
starts two a request; `run_in_executor`, `to_thread`) take the GIL from its loop on that core.
Measured in process on an otherwise idle machine, those threads run on the other cores, and
every hand-off of the GIL crosses cores: a Django async view used 0.97-1.05 ms of CPU a request
and answered 392-515 req/s at its busiest level, against 0.68-0.73 ms and 1,195-1,265 req/s on
one core, where the servers' saturation in `bench app` implied 0.68 ms. An app whose requests
stay on the loop's thread measures the same either way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from servertune.measure.clocks import thread_ids

__all__ = ["on_one_core"]


@contextlib.contextmanager
def on_one_core() -> Iterator[int | None]:
    """Every thread of this process, and every thread they start meanwhile (Linux gives a new
    thread its creator's affinity), on one of the cores it may use; each thread's affinity put
    back after. Yields the core, or None where there is one core or no affinity to set."""
    getter = getattr(os, "sched_getaffinity", None)
    setter = getattr(os, "sched_setaffinity", None)
    if getter is None or setter is None:
        yield None
        return
    allowed: set[int] = getter(0)
    if len(allowed) < 2:
        yield None
        return
    core = max(allowed)
    before: dict[int, set[int]] = {}
    for tid in thread_ids(os.getpid()):
        with contextlib.suppress(OSError):
            before[tid] = getter(tid)
            setter(tid, {core})
    try:
        yield core
    finally:
        for tid in thread_ids(os.getpid()):
            with contextlib.suppress(OSError):
                setter(tid, before.get(tid, allowed))
