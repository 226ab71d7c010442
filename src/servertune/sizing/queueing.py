"""Little's law and the Poisson tail: how many threads a stream of requests keeps busy.

One place for the rule that the thread sizing (`rules.threads`), the sync_to_async executor
(`servertune.asgi.executor_threads`) and `servertune advise` all use.
"""

from __future__ import annotations

import math

from servertune.pool_limits import MAX_THREADS
from servertune.sizing.defaults import SLOW_CALL_QUANTILE
from servertune.workload import Workload

__all__ = [
    "arrival_rate",
    "held_s",
    "in_flight",
    "poisson_quantile",
    "pool_threads",
    "threads_for",
]


def arrival_rate(workload: Workload, ceiling_rps: float) -> tuple[float, str]:
    """The rate to size for and its name: `peak_rps` when given, else the CPU ceiling."""
    if workload.peak_rps is not None:
        return workload.peak_rps, "peak_rps"
    return ceiling_rps, "the CPU ceiling"


def held_s(workload: Workload) -> float:
    """Mean seconds a request holds its thread: its service time plus its share of slow calls."""
    return (workload.service_time_ms + workload.slow_call_ratio * workload.slow_call_ms) / 1000


def in_flight(rate_per_s: float, hold_s: float) -> float:
    """Little's law: the mean number of requests in flight is arrival rate x time each is held."""
    return rate_per_s * hold_s


def threads_for(mean_in_flight: float, cap: int, quantile: float = SLOW_CALL_QUANTILE) -> int:
    """Threads that cover `mean_in_flight` at the `quantile` of a Poisson, at most `cap`."""
    if mean_in_flight >= cap:  # the quantile is above the mean: the cap decides
        return cap
    return min(cap, poisson_quantile(mean_in_flight, quantile, cap=cap))


def pool_threads(mean_in_flight: float, cpu_threads: int) -> int:
    """A sync_to_async pool for `mean_in_flight` calls: the Poisson tail above it, at least
    `cpu_threads`, at most `MAX_THREADS`.

    The one formula behind `servertune.asgi.executor_threads` and the plan's `executor_threads`.
    """
    return max(min(cpu_threads, MAX_THREADS), threads_for(mean_in_flight, MAX_THREADS))


def poisson_quantile(mean: float, q: float, cap: int | None = None) -> int:
    """Smallest k with P(N <= k) >= q for N ~ Poisson(mean), or `cap` if that is smaller.

    Terms are computed in log space, so large means do not underflow; `cap` bounds the work
    (callers that clamp the result anyway need not sum a million terms).
    """
    if mean <= 0:
        return 0
    log_mean = math.log(mean)
    cumulative = 0.0
    limit = int(mean + 20 * math.sqrt(mean) + 50)
    if cap is not None:
        limit = min(limit, cap)
    for k in range(limit + 1):
        cumulative += math.exp(-mean + k * log_mean - math.lgamma(k + 1))
        if cumulative >= q:
            return k
    return limit
