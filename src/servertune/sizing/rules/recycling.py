"""Recycling: restart workers after N requests (spread out) or when their memory grows."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import (
    MAX_REQUESTS,
    MAX_REQUESTS_CAP,
    MAX_REQUESTS_JITTER_RATIO,
    MEMORY_GROWTH_ALLOWANCE,
    MEMORY_HEADROOM_RATIO,
    RECYCLE_MIN_INTERVAL_S,
    RSS_GROWTH_FACTOR,
)
from servertune.sizing.plan import Derivation
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """max_requests with jitter; reload_on_rss from the memory limit share or the growth factor."""
    processes = d.get_int("processes")
    per_worker_rps = d.get_float("ceiling_rps") / processes
    spaced = math.ceil(per_worker_rps * RECYCLE_MIN_INTERVAL_S)
    if spaced > MAX_REQUESTS:
        max_requests = spaced
        reason = (
            f"{per_worker_rps:.4g} req/s a worker at the ceiling x {RECYCLE_MIN_INTERVAL_S} s: "
            f"a worker recycles (to bound slow leaks) at most every {RECYCLE_MIN_INTERVAL_S // 60} "
            "min, so its restart pause stays out of the p99"
        )
    else:
        max_requests = MAX_REQUESTS
        reason = (
            f"recycle a worker every {MAX_REQUESTS} requests to bound slow leaks (at the ceiling, "
            f"{per_worker_rps:.4g} req/s a worker, that is every {MAX_REQUESTS / per_worker_rps:.0f} s "
            f"or longer)"
        )
    if max_requests > MAX_REQUESTS_CAP:
        max_requests = MAX_REQUESTS_CAP
        reason += f"; capped at {MAX_REQUESTS_CAP}, past any Python worker's ten minutes"
    growth = w.memory_growth_kb_per_request
    if growth and w.memory_per_worker_mb is not None:
        # The process is budgeted at its warm size + the allowance (rules/processes.py): it
        # must recycle before it grows past that, however long the interval above.
        allowance_kb = w.memory_per_worker_mb * MEMORY_GROWTH_ALLOWANCE * 1024
        # Compared as a float: a growth of a few subnormal KiB gives an infinite quotient.
        by_growth = allowance_kb / growth
        if by_growth < max_requests:
            max_requests = max(1, math.floor(by_growth))
            reason = (
                f"{MEMORY_GROWTH_ALLOWANCE:.0%} of the warm {w.memory_per_worker_mb} MiB / "
                f"{growth:g} KiB a request (memory_growth_kb_per_request): a worker recycles "
                "before it outgrows the memory the plan budgets it (bound: memory growth)"
            )
            every_s = max_requests / per_worker_rps
            if every_s < RECYCLE_MIN_INTERVAL_S:
                d.warn(
                    f"memory_growth_kb_per_request {growth:g}: a worker must recycle every "
                    f"{max_requests} requests (about every {every_s:.0f} s at the ceiling) to "
                    "stay in its memory; each restart pauses its socket while the app imports. "
                    "Find the leak, or give each worker more memory"
                )
        else:
            reason += (
                f"; memory growth ({growth:g} KiB a request) stays within the "
                f"{MEMORY_GROWTH_ALLOWANCE:.0%} allowance of the warm {w.memory_per_worker_mb} "
                f"MiB until then ({max_requests * growth / 1024:.0f} MiB)"
            )
    max_requests = d.put("max_requests", max_requests, reason)
    d.put(
        "max_requests_jitter",
        math.ceil(max_requests * MAX_REQUESTS_JITTER_RATIO),
        f"{MAX_REQUESTS_JITTER_RATIO:.0%} of max_requests: workers restart at different times",
    )
    rss: int | None = None
    if w.memory_limit_mb is not None:
        # A worker over its share of the limit restarts before the container is OOM-killed.
        rss = math.floor(w.memory_limit_mb * MEMORY_HEADROOM_RATIO / processes)
        reason = (
            f"{MEMORY_HEADROOM_RATIO:.0%} of {w.memory_limit_mb} MiB / {processes} workers: a "
            "worker over its share restarts before the container is OOM-killed"
        )
    elif w.memory_per_worker_mb is not None:
        rss = math.ceil(w.memory_per_worker_mb * RSS_GROWTH_FACTOR)
        reason = f"{RSS_GROWTH_FACTOR:g} x the warm worker size: growth that large is a leak"
    else:
        reason = "no memory given: no RSS cap (set memory_per_worker_mb or memory_limit_mb)"
    d.put("reload_on_rss_mb", rss, reason)
