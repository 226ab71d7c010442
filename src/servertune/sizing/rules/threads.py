"""Threads: enough to keep the GIL (or, without one, the process's cores) busy SLOT_UTILISATION
of the time in the finite-source queue, plus headroom for threads parked on slow calls."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import (
    GIL_SATURATION,
    MAX_THREADS_PER_PROCESS,
    SLOT_UTILISATION,
    SLOW_CALL_QUANTILE,
)
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import Slots, arrival_rate, in_flight, slots_for, threads_for
from servertune.workload import Workload


def cpu_slots(w: Workload, processes: int, cap: int) -> Slots:
    """The CPU-saturating request slots the processes' threads share (`slots_for`).

    The cores they compute on are the servers of the finite-source queue: all of them, except
    under the GIL with fewer processes than cores, where each process computes on one and the
    rest stay idle. The slots are split over the processes (the processes rule decides how
    many of them memory holds).
    """
    return slots_for(cpu_slots_servers(w, processes), w.cpu_fraction, processes * cap)


def cpu_slots_servers(w: Workload, processes: int) -> int:
    """The cores the processes' threads compute on: under the GIL no more than the processes."""
    assert isinstance(w.cores, int)
    return min(w.cores, processes) if w.gil == "enabled" else w.cores


def gil_threads(cpu_fraction: float, cores: float, cap: int) -> int:
    """The fewest threads that keep a process's `cores` (under the GIL its share of one) busy
    GIL_SATURATION of the time if their CPU and waits interleaved perfectly (Goetz: 1 +
    wait/compute a core): the most a process gets, at most `cap`."""
    wanted = GIL_SATURATION * cores / cpu_fraction - 1e-9
    return max(1, min(cap, math.ceil(wanted)))


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
    processes = d.get_int("processes")
    slots = cpu_slots(w, processes, cap)
    cpu_threads = math.ceil(slots.slots / processes - 1e-9)
    cpu_capped = slots.capped
    reason = _cpu_reason(w, cores, processes, slots)
    gil = gil_threads(w.cpu_fraction, cores, cap)
    if cpu_threads > gil:
        # The headroom the finite-source queue adds is taken as processes (processes rule), not
        # as threads: a process's threads share one GIL, and bench balance measured a third
        # thread a process (2 x 3) at 0.82-0.85 of the CPU ceiling against 0.77-0.79 for 2 x 2,
        # for p99 373-417 ms against 311-324 ms at 8 connections, where 3 processes x 2
        # threads (the same 6 slots) reached 0.90 and 6 processes 0.92-0.93.
        held = "its one GIL" if w.gil == "enabled" else f"its {cores:g} cores (no GIL)"
        reason = (
            f"{utilisation_text(w, slots, f'{cpu_slots_servers(w, processes)} cores')}; as "
            f"threads {gil} a process, ceil({GIL_SATURATION:g} x {cores:.3g} of a core / "
            f"cpu_fraction {w.cpu_fraction:g}): past that a process's threads queue for {held}, "
            "so the other slots are processes where memory holds them (bench balance)"
        )
        cpu_threads = gil
    if cpu_threads == gil:
        # Bound by the GIL's count: capped only if that count itself is past the cap.
        cpu_capped = GIL_SATURATION * cores / w.cpu_fraction - 1e-9 > cap
    if cpu_capped:
        reason += f", at most {cap} (the cap per process)"
    cpu_threads = d.put("cpu_threads", cpu_threads, reason)

    rate, rate_name = arrival_rate(w, d.get_float("ceiling_rps"))
    per_process = rate / processes
    if w.slow_call_ratio > 0:
        slow_s = w.slow_call_ms / 1000
        parked = in_flight(per_process * w.slow_call_ratio, slow_s)
        slow = max(1, threads_for(parked, cap))
        slow_reason = (
            f"Little's law: {per_process:.1f} req/s per process ({rate_name}) x "
            f"{w.slow_call_ratio:g} slow x {slow_s:g} s (slow_call_ms, a mean) = {parked:.2f} "
            f"threads parked on average; the tail: p{SLOW_CALL_QUANTILE * 100:g} of Poisson => "
            f"{slow} (at least 1, so one slow call never blocks quick requests: bench hol)"
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


def _cpu_reason(w: Workload, cores: float, processes: int, slots: Slots) -> str:
    """Why cpu_threads: the slots the finite-source queue asks for, split over the processes."""
    assert isinstance(w.cores, int)
    servers = cpu_slots_servers(w, processes)
    held = utilisation_text(w, slots, f"{servers} cores")
    if w.gil == "enabled" and cores >= 1:
        why = (
            "under the GIL a process computes on one core, and more threads would only queue for it"
        )
    elif w.gil == "enabled":
        why = f"the processes share the cores, each computing on {cores:.3g} of one"
    else:
        why = (
            "gil = 'disabled': a process's threads run Python on several cores at once "
            "(derived, not measured here)"
        )
    return f"{held}; split over {processes} processes: {why}"


def utilisation_text(w: Workload, slots: Slots, what: str) -> str:
    """`6 slots keep the 2 cores busy 97.6% ... (4 ... 85.0%)`: the model's numbers behind a
    slot count."""
    text = (
        f"{slots.slots} slots keep {what} busy {slots.utilisation:.1%} of the time "
        f"(finite-source queue, cpu_fraction {w.cpu_fraction:g}; target "
        f"{SLOT_UTILISATION:.0%})"
    )
    if slots.slots > slots.floor:
        text += (
            f"; {slots.floor}, the count if CPU and waits interleaved perfectly "
            f"(ceil({GIL_SATURATION:g} / {w.cpu_fraction:g}) a core), reach "
            f"{slots.floor_utilisation:.1%}"
        )
    return text
