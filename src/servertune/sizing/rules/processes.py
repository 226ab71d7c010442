"""Processes: the concurrency the GIL share asks for, filled with single-threaded processes
while memory holds them (threads only beyond), one per core when memory per process is unknown,
fewer when memory holds fewer; the cores each one computes on; and the CPU ceiling they give."""

from __future__ import annotations

import math
import sys

from servertune.machine import Machine
from servertune.sizing.defaults import (
    ASGI_THREADED_PROCESSES_PER_CORE,
    MAX_PROCESSES_PER_CORE,
    MEMORY_GROWTH_ALLOWANCE,
    MEMORY_HEADROOM_RATIO,
    MIN_CPU_MS_PER_REQUEST,
    WSGI_SERVER_MS_PER_REQUEST,
)
from servertune.sizing.plan import Derivation, PlanError
from servertune.sizing.queueing import slots_for
from servertune.sizing.rules.threads import utilisation_text
from servertune.workload import Workload


def process_memory_mb(w: Workload) -> float | None:
    """What one process is budgeted at: its warm size, plus MEMORY_GROWTH_ALLOWANCE of it when
    its memory grows with requests (max_requests recycles it before it outgrows that)."""
    if w.memory_per_worker_mb is None:
        return None
    if w.memory_growth_kb_per_request:
        return w.memory_per_worker_mb * (1 + MEMORY_GROWTH_ALLOWANCE)
    return float(w.memory_per_worker_mb)


def memory_budget(w: Workload, m: Machine) -> tuple[int | None, str]:
    """The memory the workers share and where it comes from: memory_limit_mb (given, or the
    cgroup's for cores 'auto'), else the host's RAM ('auto' only), else None."""
    if w.memory_limit_mb is not None:
        return w.memory_limit_mb, f"memory_limit_mb {w.memory_limit_mb} MiB"
    if m.memory_total_mb is not None:
        return m.memory_total_mb, f"the host's {m.memory_total_mb} MiB of RAM (no memory limit)"
    return None, "no memory limit"


def workers_that_fit(w: Workload, m: Machine | None = None) -> int | None:
    """How many processes the memory budget holds with headroom, None if either is unknown."""
    per = process_memory_mb(w)
    budget, _ = memory_budget(w, m or Machine(cores=1))
    if per is None or budget is None:
        return None
    return math.floor(budget * MEMORY_HEADROOM_RATIO / per + 1e-9)


def _memory_text(w: Workload) -> str:
    """`300 MiB` or `300 MiB + 25% for growth (0.5 KiB a request)`: what a process is budgeted."""
    text = f"{w.memory_per_worker_mb} MiB"
    if w.memory_growth_kb_per_request:
        text += (
            f" + {MEMORY_GROWTH_ALLOWANCE:.0%} for growth until recycling "
            f"({w.memory_growth_kb_per_request:g} KiB a request)"
        )
    return text


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Processes for the concurrency, memory permitting; the cores each one's threads run on;
    the CPU ceiling."""
    count = _processes(w, m, d)
    cores_each = _cores_per_process(w, m, d, count)
    _ceiling(w, d, count, cores_each)


def _processes(w: Workload, m: Machine, d: Derivation) -> int:
    """One per core, fewer when memory holds fewer, more (single-threaded) for the GIL share
    when memory holds them."""
    assert isinstance(w.cores, int)
    count = w.cores
    if w.gil == "enabled":
        reason = f"one per core ({w.cores}, {m.cores_source}): under the GIL a process uses at most one core"
    else:
        reason = (
            f"one per core ({w.cores}, {m.cores_source}): with the GIL disabled a process could "
            "use several, but a socket per worker balanced by least_conn is what bench balance "
            "measured, and a crashed worker takes one core's share with it"
        )
    budget, budget_name = memory_budget(w, m)
    fits = workers_that_fit(w, m)
    field = "memory_limit_mb" if w.memory_limit_mb is not None else "memory_per_worker_mb"
    if fits is not None and fits < 1:
        raise PlanError(
            f"{field}: {budget_name} cannot hold one worker of {_memory_text(w)} "
            f"(with {1 - MEMORY_HEADROOM_RATIO:.0%} headroom)"
        )
    # The concurrency the CPU work asks for: the slots that keep the cores busy in the
    # finite-source queue. Under the GIL a thread hands the GIL to another at every switch
    # interval and I/O call; a process of its own has no one to hand it to, so bench balance
    # measured single-threaded processes with a lower p99 than the same slots as threads.
    # They cost memory instead.
    need = slots_for(w.cores, w.cpu_fraction, w.cores * MAX_PROCESSES_PER_CORE)
    wanted = need.slots if w.gil == "enabled" else w.cores
    if fits is not None and fits < count:
        count = fits
        reason = (
            f"{fits}, fewer than the {w.cores} cores (bound: memory): "
            f"{MEMORY_HEADROOM_RATIO:.0%} of {budget_name} holds {fits} processes of "
            f"{_memory_text(w)}"
        )
    elif w.interface == "wsgi" and wanted > count:
        slots = utilisation_text(w, need, f"the {w.cores} cores")
        if need.capped:
            slots += f", at most {MAX_PROCESSES_PER_CORE} processes a core"
        if fits is None:
            missing = "memory_per_worker_mb" if budget is not None else "a memory limit"
            asks, which = (
                (f"more than {wanted}", f"{wanted} of them would be processes")
                if need.capped
                else (wanted, "each would be a process")
            )
            reason += (
                f" (bound: cores; the GIL share asks for {asks} slots, threads here: given "
                f"{missing} with room for {wanted}, {which})"
            )
        elif fits >= wanted:
            count = wanted
            reason = (
                f"{wanted} single-threaded processes (bound: GIL share): {slots}; "
                f"{MEMORY_HEADROOM_RATIO:.0%} of {budget_name} holds {fits} of {_memory_text(w)}, "
                "so each slot is a process, not a thread (no GIL hand-offs: bench balance)"
            )
        else:
            count = fits
            reason = (
                f"{fits} processes (bound: memory): {slots}, but {MEMORY_HEADROOM_RATIO:.0%} of "
                f"{budget_name} holds only {fits} of {_memory_text(w)}, so threads take the rest"
            )
    elif w.interface == "asgi" and w.gil == "enabled" and w.off_loop_fraction:
        count, reason = _threaded_asgi(w, fits, budget_name)
    derived: int = d.put("processes", count, reason)
    return derived


def _threaded_asgi(w: Workload, fits: int | None, budget_name: str) -> tuple[int, str]:
    """ASGI requests that run work in threads besides the loop's: more than one process a
    core, memory permitting."""
    assert isinstance(w.cores, int)
    wanted = w.cores * ASGI_THREADED_PROCESSES_PER_CORE
    why = (
        f"off_loop_fraction {w.off_loop_fraction:g} (the share of a request's CPU run in other "
        "threads)"
    )
    asks = (
        f"{why}: the GIL changes hands between the loop's thread and the others within every "
        "request, each waiting for the other to let go, and one such process a core leaves it "
        f"short of work: {ASGI_THREADED_PROCESSES_PER_CORE} processes a core (bench app, Django's "
        "async view: 1.83-1.91 x the req/s of one a core)"
    )
    if fits is None:
        # No thread pool takes the concurrency instead (the loop is it), and the factor is
        # small: the processes go ahead, and the reason says what was not checked.
        per = process_memory_mb(w)
        held = f"{wanted} x {per:g} MiB = {wanted * per:g} MiB, " if per is not None else ""
        return wanted, (
            f"{wanted} ({ASGI_THREADED_PROCESSES_PER_CORE} a core for {w.cores} cores): {asks}; "
            f"{held}not checked against a memory budget (give memory_limit_mb"
            + ("" if per is not None else " and memory_per_worker_mb")
            + ")"
        )
    if fits >= wanted:
        return wanted, (
            f"{wanted} ({ASGI_THREADED_PROCESSES_PER_CORE} a core for {w.cores} cores): {asks}; "
            f"{MEMORY_HEADROOM_RATIO:.0%} of {budget_name} holds {fits} of {_memory_text(w)}"
        )
    return fits, (
        f"{fits} (bound: memory): {asks}, but {MEMORY_HEADROOM_RATIO:.0%} of {budget_name} "
        f"holds only {fits} of {_memory_text(w)}"
    )


def _cores_per_process(w: Workload, m: Machine, d: Derivation, count: int) -> float:
    """The cores one process computes on: one under the GIL (a share when processes outnumber
    cores), its share of the cores without it."""
    assert isinstance(w.cores, int)
    if w.gil == "enabled" and count > w.cores:
        cores_each, cores_reason = (
            w.cores / count,
            (
                f"{w.cores} cores / {count} processes: under the GIL each process computes on at "
                "most one core, and more processes than cores share them"
            ),
        )
    elif w.gil == "enabled":
        cores_each, cores_reason = (
            1.0,
            (
                "gil = 'enabled': the GIL lets one thread of a process run Python at a time, so a "
                "process computes on one core however many it has threads"
            ),
        )
    else:
        cores_each, cores_reason = (
            w.cores / count,
            (
                f"gil = 'disabled' (free-threaded build): a process's threads run Python on several "
                f"cores at once, so each of the {count} processes has its share of the {w.cores} "
                "cores (derived, not measured here: no free-threaded Python in the benchmarks)"
            ),
        )
        if m.gil_enabled:
            d.warn(
                f"gil = 'disabled', but the Python running servertune ({sys.version.split()[0]}) "
                "has the GIL on: this plan is for a free-threaded build (python3.13t or later) "
                "serving with sys._is_gil_enabled() False; one extension module without "
                "free-threading support turns the GIL back on, and then plan with gil = 'enabled'"
            )
    derived: float = d.put("cores_per_process", cores_each, cores_reason)
    return derived


def _ceiling(w: Workload, d: Derivation, count: int, cores_each: float) -> None:
    """The CPU ceiling: the processes' cores over the CPU time a request takes."""
    assert isinstance(w.cores, int)
    given_cpu_s = w.cpu_ms_per_request / 1000
    cpu_s = max(given_cpu_s, MIN_CPU_MS_PER_REQUEST / 1000)
    what = w.cpu_named
    if cpu_s > given_cpu_s:
        what += f", at least {MIN_CPU_MS_PER_REQUEST:g} ms: what a bare call through a Python server costs"
    if w.interface == "wsgi":
        # The worker's own accept, parse, write and close hold the GIL too (measured on
        # gunicorn's sync worker; see the constant); the ASGI servers' share is the admission's.
        what = (
            f"{cpu_s * 1000:.3g} ms of the app's ({what}) + {WSGI_SERVER_MS_PER_REQUEST:g} ms the "
            "WSGI server's own accept, parsing, writing and close"
        )
        cpu_s += WSGI_SERVER_MS_PER_REQUEST / 1000
    if w.gil == "enabled" and count > w.cores:
        ceiling_reason = (
            f"{w.cores} cores shared by {count} processes / {cpu_s * 1000:.3g} ms of GIL time "
            f"per request ({what}): no thread count goes past this"
        )
    elif w.gil == "enabled":
        ceiling_reason = (
            f"{count} processes / {cpu_s * 1000:.3g} ms of GIL time per request "
            f"({what}): no thread count goes past this"
        )
    else:
        ceiling_reason = (
            f"{count} processes x {cores_each:g} cores each / {cpu_s * 1000:.3g} ms of CPU time "
            f"per request ({what}): the cores, not a GIL, bound it; no thread count goes "
            "past this"
        )
    ceiling = d.put("ceiling_rps", count * cores_each / cpu_s, ceiling_reason)
    if w.peak_rps is not None and w.peak_rps > ceiling:
        held = "GIL" if w.gil == "enabled" else "CPU"
        d.warn(
            f"peak_rps {w.peak_rps:g} is above the ceiling of {ceiling:.1f} req/s: add cores or "
            f"reduce the {held} time per request; threads cannot help"
        )
