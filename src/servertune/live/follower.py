"""Follow a changing CPU limit with the plan's worker count, with hysteresis.

`Follower` decides; it reads no clock and no file (the caller passes the time and the reading),
so its rule is tested without waiting. `watch` is the loop that feeds it: read the cgroup every
`interval_s`, and when the follower commits a change, call `resize(old, new)` and log one line
naming the old and new limit and worker count.

The worker count for a limit is the plan's own: `workers_for` runs `servertune.sizing` for the
workload on this machine with `cores` = the limit's whole cores (`servertune.cores.ROUNDING_RULE`),
so memory, the GIL and every other rule still apply; there is no second formula here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from servertune.live.cgroup import CgroupReader, CpuLimit
from servertune.machine import Machine
from servertune.sizing import plan_for
from servertune.workload import Workload

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEFAULT_WINDOW_S",
    "Change",
    "Follower",
    "watch",
    "workers_for",
]

#: How long a new limit must hold before the worker count moves. Kubernetes applies a resize
#: once and it stays; what changes faster is an autoscaler or an operator trying values, and a
#: worker added then removed within seconds costs a fork, an app import and a drain for
#: nothing. Until the window passes the old count runs under the new quota: throttled (more
#: workers than cores) or with a core idle (fewer), what `servertune bench resize` measures.
DEFAULT_WINDOW_S = 10.0
#: How often the cgroup files are read: a few small file reads, far below the window.
DEFAULT_INTERVAL_S = 1.0

logger = logging.getLogger("servertune.live")


def workers_for(workload: Workload, machine: Machine, limit: CpuLimit) -> int:
    """The plan's processes for `workload` on `machine` with the limit's cores."""
    cores = limit.cores
    source = f"CPU limit now: {limit}"
    live = machine.model_copy(update={"cores": cores, "cores_source": source})
    return plan_for(workload.model_copy(update={"cores": "auto"}), live).processes


@dataclass(frozen=True)
class Change:
    """A committed change: the limits and worker counts before and after."""

    old_limit: CpuLimit
    new_limit: CpuLimit
    old_workers: int
    new_workers: int

    def __str__(self) -> str:
        return (
            f"CPU limit {self.old_limit.limit:g} -> {self.new_limit.limit:g} cores "
            f"({self.old_limit} -> {self.new_limit}): "
            f"workers {self.old_workers} -> {self.new_workers}"
        )


class Follower:
    """Moves the worker count to `size(limit)` once a new count has held for `window_s`.

    A reading whose count differs from the current one starts (or continues) a pending
    change; a reading back at the current count, or at yet another count, cancels or restarts
    it. So a limit flapping faster than the window never moves the workers.
    """

    def __init__(
        self,
        size: Callable[[CpuLimit], int],
        limit: CpuLimit,
        workers: int,
        window_s: float = DEFAULT_WINDOW_S,
    ) -> None:
        self.size = size
        self.limit = limit
        self.workers = workers
        self.window_s = window_s
        self._pending: tuple[int, float] | None = None

    def observe(self, now: float, limit: CpuLimit) -> Change | None:
        """Feed one reading taken at `now` (monotonic seconds); a Change when one commits."""
        wanted = self.size(limit)
        if wanted == self.workers:
            self._pending = None
            self.limit = limit
            return None
        if self._pending is None or self._pending[0] != wanted:
            self._pending = (wanted, now)
            return None
        if now - self._pending[1] < self.window_s:
            return None
        change = Change(self.limit, limit, self.workers, wanted)
        self.limit, self.workers, self._pending = limit, wanted, None
        return change


def watch(
    reader: CgroupReader,
    follower: Follower,
    resize: Callable[[int, int], None],
    stop: threading.Event,
    interval_s: float = DEFAULT_INTERVAL_S,
    log: logging.Logger = logger,
) -> None:
    """Read, decide, resize, log, until `stop` is set. A failed resize is logged, not raised."""
    while not stop.wait(interval_s):
        change = follower.observe(time.monotonic(), reader.read())
        if change is None:
            continue
        log.info("servertune.live: %s", change)
        try:
            resize(change.old_workers, change.new_workers)
        except OSError as exc:
            log.warning("servertune.live: resize to %d workers failed: %s", change.new_workers, exc)
