"""Little's law, the Poisson tail and the finite-source queue: how many threads a stream of
requests keeps busy, and how many request slots keep the cores busy.

One place for the rules that the thread and process sizing (`rules.threads`,
`rules.processes`), the sync_to_async executor (`servertune.asgi.executor_threads`) and
`servertune advise` use.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

from servertune.pool_limits import MAX_THREADS
from servertune.sizing.defaults import GIL_SATURATION, SLOT_UTILISATION, SLOW_CALL_QUANTILE
from servertune.workload import Workload

__all__ = [
    "Slots",
    "arrival_rate",
    "core_utilisation",
    "held_s",
    "in_flight",
    "longest_s",
    "poisson_quantile",
    "pool_threads",
    "slots_for",
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


def longest_s(workload: Workload, slow_calls: bool = True) -> tuple[float, str]:
    """The longest legitimate request, in seconds, and what it is in words: `request_tail_ms`
    (a tail, what the log's p99.9 gives) when set, else the mean service time plus the slow
    call's (`slow_calls`: False leaves the slow call out where the workload has none)."""
    if workload.request_tail_ms is not None:
        return workload.request_tail_ms / 1000, "request_tail_ms, a tail"
    slow_ms = workload.slow_call_ms if slow_calls else 0.0
    return (workload.service_time_ms + slow_ms) / 1000, (
        "service + slow call" if slow_calls else "no slow calls"
    )


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


@functools.lru_cache(maxsize=1024)
def core_utilisation(slots: int, cores: int, cpu_fraction: float) -> float:
    """The share of time `cores` compute when `slots` requests each alternate between CPU
    (`cpu_fraction` of their time alone) and waiting: the finite-source (machine-repairman,
    M/M/s//N) queue.

    With r = CPU time / wait time, the probability that n of the N slots want a core is
    p_n ~ C(N, n) r^n for n <= s and N! / ((N - n)! s! s^(n - s)) r^n above (Gross & Harris,
    "Fundamentals of Queueing Theory", finite-source queues), and the cores are busy
    sum(min(n, s) p_n) / s of the time. The slots are sources, the cores repairmen: when more
    than s slots hold CPU work at once the rest queue for a core while the cores cannot run
    ahead on work that is still waiting, which `cores / cpu_fraction` slots ignore.
    Terms are summed in log space, so thousands of slots do not overflow.
    """
    if slots <= 0:
        return 0.0
    if cpu_fraction >= 1:  # no waiting: every slot always wants a core
        return min(slots, cores) / cores
    # p_n / p_(n-1) = (N - n + 1) r / min(n, s): one logarithm a term.
    log_r = math.log(cpu_fraction / (1 - cpu_fraction))
    logs = [0.0]
    for n in range(1, slots + 1):
        logs.append(logs[-1] + math.log(slots - n + 1) + log_r - math.log(min(n, cores)))
    top = max(logs)
    weights = [math.exp(log_p - top) for log_p in logs]
    busy = sum(min(n, cores) * weight for n, weight in enumerate(weights))
    return busy / (cores * sum(weights))


class Slots(NamedTuple):
    """How many request slots keep `cores` busy, with the numbers behind it."""

    slots: int
    utilisation: float
    #: `cores x ceil(GIL_SATURATION / cpu_fraction)`: the count if CPU and waits interleaved
    #: perfectly, never undercut, and the utilisation it reaches in the model.
    floor: int
    floor_utilisation: float
    #: True when `cap` stopped the count below SLOT_UTILISATION.
    capped: bool


def slots_for(cores: int, cpu_fraction: float, cap: int) -> Slots:
    """The fewest slots, at least the perfect-interleaving floor and at most `cap`, whose
    `core_utilisation` reaches SLOT_UTILISATION.

    Utilisation grows with the slots, and the answer is rarely far above the floor: steps that
    double from the floor find an interval holding it, a bisection the count, so the sums stay
    near the answer's size rather than the cap's.
    """
    per_core = max(1, math.ceil(GIL_SATURATION / cpu_fraction - 1e-9))
    floor = min(cap, cores * per_core)

    def enough(slots: int) -> bool:
        return core_utilisation(slots, cores, cpu_fraction) >= SLOT_UTILISATION

    low, high, step = floor, floor, 1
    while not enough(high) and high < cap:
        low, high, step = high + 1, min(cap, high + step), step * 2
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    reached = core_utilisation(high, cores, cpu_fraction)
    return Slots(
        slots=high,
        utilisation=reached,
        floor=floor,
        floor_utilisation=core_utilisation(floor, cores, cpu_fraction),
        capped=reached < SLOT_UTILISATION,
    )
