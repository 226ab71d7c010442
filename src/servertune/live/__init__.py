"""Follow the CPU limit at runtime: when a container's quota or cpuset changes (Kubernetes
in-place pod resize), move the server's worker count to the plan's number for the new limit.

* `servertune.live.gunicorn.follow_cpu_limit()`: a `when_ready` hook for gunicorn.conf.py.
* `python -m servertune.live -- uvicorn app:app --workers 2 ...`: a supervisor for uvicorn.
* granian cannot change its worker count at runtime and is refused with the reason.

A new limit must hold for a window (`DEFAULT_WINDOW_S`) before the workers move, so a
flapping limit changes nothing; each change is logged in one line naming the old and new limit
and worker count. Fractional quotas become whole cores by `servertune.cores.ROUNDING_RULE`.
"""

from __future__ import annotations

from servertune.live.cgroup import CgroupReader, CpuLimit
from servertune.live.follower import (
    DEFAULT_INTERVAL_S,
    DEFAULT_WINDOW_S,
    Change,
    Follower,
    watch,
    workers_for,
)

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEFAULT_WINDOW_S",
    "CgroupReader",
    "Change",
    "CpuLimit",
    "Follower",
    "watch",
    "workers_for",
]
