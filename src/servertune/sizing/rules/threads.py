"""Threads: enough to keep the GIL busy, plus headroom for threads parked on slow calls."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import GIL_SATURATION, MAX_THREADS_PER_PROCESS, SLOW_CALL_QUANTILE
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import arrival_rate, in_flight, threads_for
from servertune.workload import Workload


def gil_threads(cpu_fraction: float) -> int:
    """The fewest threads that keep the GIL busy GIL_SATURATION of the time (Goetz: 1 + wait/compute)."""
    return max(1, math.ceil(GIL_SATURATION / cpu_fraction - 1e-9))


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """cpu_threads + slow_call_threads, capped at MAX_THREADS_PER_PROCESS."""
    cpu_threads = d.put(
        "cpu_threads",
        gil_threads(w.cpu_fraction),
        f"ceil({GIL_SATURATION:g} / cpu_fraction {w.cpu_fraction:g}): the fewest threads that keep "
        f"the GIL busy {GIL_SATURATION:.0%} of the time; more would only queue for it (bench "
        "balance: requests holding the GIL half the time saturate a process with 2 threads)",
    )

    processes = d.get_int("processes")
    rate, rate_name = arrival_rate(w, d.get_float("ceiling_rps"))
    per_process = rate / processes
    if w.slow_call_ratio > 0:
        slow_s = w.slow_call_ms / 1000
        parked = in_flight(per_process * w.slow_call_ratio, slow_s)
        slow = max(1, threads_for(parked, MAX_THREADS_PER_PROCESS))
        slow_reason = (
            f"Little's law: {per_process:.1f} req/s per process ({rate_name}) x "
            f"{w.slow_call_ratio:g} slow x {slow_s:g} s = {parked:.2f} threads parked on average; "
            f"p{SLOW_CALL_QUANTILE * 100:g} of Poisson => {slow} (at least 1, so one slow call "
            "never blocks quick requests: bench hol)"
        )
    else:
        slow, slow_reason = 0, "no slow calls (slow_call_ratio = 0)"
    slow = d.put("slow_call_threads", slow, slow_reason)

    total = cpu_threads + slow
    reason = f"{cpu_threads} for the GIL + {slow} for slow calls"
    if total > MAX_THREADS_PER_PROCESS:
        d.warn(
            f"{total} threads per process wanted; capped at {MAX_THREADS_PER_PROCESS}. "
            "Slow calls dominate: consider asyncio for them"
        )
        total = MAX_THREADS_PER_PROCESS
        reason += f", capped at {MAX_THREADS_PER_PROCESS}"
    d.put("threads", total, reason)
