"""Threads: enough to keep the GIL (or, without one, the process's cores) busy, plus headroom
for threads parked on slow calls."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import GIL_SATURATION, MAX_THREADS_PER_PROCESS, SLOW_CALL_QUANTILE
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import arrival_rate, in_flight, threads_for
from servertune.workload import Workload


def gil_threads(cpu_fraction: float, cores: float = 1.0, cap: int | None = None) -> int:
    """The fewest threads that keep `cores` busy GIL_SATURATION of the time (Goetz:
    cores x (1 + wait/compute)); under the GIL a process has one core's worth, the GIL itself.
    At most `cap` (default: the cap for `cores`), however small cpu_fraction is."""
    cap = thread_cap(cores) if cap is None else cap
    wanted = GIL_SATURATION * cores / cpu_fraction - 1e-9
    return max(1, min(cap, math.ceil(wanted))) if wanted < cap else cap


def thread_cap(cores: float) -> int:
    """Most threads per process: MAX_THREADS_PER_PROCESS for each core its threads compute on.

    Under the GIL that is one core. Without it, a process with several cores needs that many
    times the threads to keep them busy, and the per-thread costs the cap bounds (stacks,
    switching) are paid once per core it runs on.
    """
    return MAX_THREADS_PER_PROCESS * max(1, math.floor(cores))


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """cpu_threads + slow_call_threads, capped at MAX_THREADS_PER_PROCESS per core."""
    cores = d.get_float("cores_per_process")
    cap = thread_cap(cores)
    if w.gil == "enabled" and cores < 1:
        reason = (
            f"ceil({GIL_SATURATION:g} x {cores:.3g} of a core per process / cpu_fraction "
            f"{w.cpu_fraction:g}): the processes share the cores, so each keeps its share of a "
            f"GIL busy {GIL_SATURATION:.0%} of the time with this many (1: every slot a process)"
        )
    elif w.gil == "enabled":
        reason = (
            f"ceil({GIL_SATURATION:g} / cpu_fraction {w.cpu_fraction:g}): the fewest threads that "
            f"keep the GIL busy {GIL_SATURATION:.0%} of the time; more would only queue for it "
            "(bench balance: requests holding the GIL half the time saturate a process with 2 "
            "threads)"
        )
    else:
        reason = (
            f"gil = 'disabled': ceil({GIL_SATURATION:g} x {cores:g} cores per process / "
            f"cpu_fraction {w.cpu_fraction:g}), Little's law at the CPU ceiling (the process's "
            "cores / CPU time per request x the service time each request holds a thread): the "
            f"fewest threads that keep its cores busy {GIL_SATURATION:.0%} of the time; more "
            "would only queue for a core. No GIL caps it at ~1 / cpu_fraction: the cores do "
            "(derived, not measured here)"
        )
    cpu_threads = gil_threads(w.cpu_fraction, cores, cap)
    cpu_capped = GIL_SATURATION * cores / w.cpu_fraction - 1e-9 > cap
    if cpu_capped:
        reason += f", at most {cap} (the cap per process)"
    cpu_threads = d.put("cpu_threads", cpu_threads, reason)

    processes = d.get_int("processes")
    rate, rate_name = arrival_rate(w, d.get_float("ceiling_rps"))
    per_process = rate / processes
    if w.slow_call_ratio > 0:
        slow_s = w.slow_call_ms / 1000
        parked = in_flight(per_process * w.slow_call_ratio, slow_s)
        slow = max(1, threads_for(parked, cap))
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
    held = "the GIL" if w.gil == "enabled" else f"{cores:g} cores (no GIL)"
    reason = f"{cpu_threads} for {held} + {slow} for slow calls"
    if total > cap or cpu_capped:
        if slow > cpu_threads:
            why = "Slow calls dominate: consider asyncio for them"
        else:
            why = (
                f"cpu_fraction {w.cpu_fraction:g} means a request waits outside the GIL for "
                f"{1 - w.cpu_fraction:.2%} of its {w.service_time_ms:g} ms: if that is I/O, an "
                "ASGI app (interface 'asgi') waits without a thread each"
            )
        wanted = f"more than {cap}" if cpu_capped else str(total)
        d.warn(f"{wanted} threads per process wanted; capped at {cap}. {why}")
        total = cap
        reason += f", capped at {cap}"
    d.put("threads", total, reason)
