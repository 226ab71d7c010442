"""Processes: one per core, unless memory holds fewer; the cores each one computes on (one
under the GIL, its share of them without); and the CPU ceiling they give."""

from __future__ import annotations

import math
import sys

from servertune.machine import Machine
from servertune.sizing.defaults import MEMORY_HEADROOM_RATIO, MIN_CPU_MS_PER_REQUEST
from servertune.sizing.plan import Derivation, PlanError
from servertune.workload import Workload


def workers_that_fit(w: Workload) -> int | None:
    """How many warm workers the memory limit holds with headroom, None if either is unknown."""
    if w.memory_per_worker_mb is None or w.memory_limit_mb is None:
        return None
    return math.floor(w.memory_limit_mb * MEMORY_HEADROOM_RATIO / w.memory_per_worker_mb)


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """One per core, memory permitting; the cores each one's threads run on; the CPU ceiling."""
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
    fits = workers_that_fit(w)
    if fits is not None:
        if fits < 1:
            raise PlanError(
                f"memory_limit_mb: {w.memory_limit_mb} MiB cannot hold one worker of "
                f"{w.memory_per_worker_mb} MiB (with {1 - MEMORY_HEADROOM_RATIO:.0%} headroom)"
            )
        if fits < count:
            count = fits
            reason = (
                f"{fits}, fewer than the {w.cores} cores: {MEMORY_HEADROOM_RATIO:.0%} of "
                f"{w.memory_limit_mb} MiB holds {fits} workers of {w.memory_per_worker_mb} MiB"
            )
    count = d.put("processes", count, reason)

    if w.gil == "enabled":
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
    cores_each = d.put("cores_per_process", cores_each, cores_reason)

    given_cpu_s = w.service_time_ms / 1000 * w.cpu_fraction
    cpu_s = max(given_cpu_s, MIN_CPU_MS_PER_REQUEST / 1000)
    if w.gil == "enabled":
        ceiling_reason = (
            f"{count} processes / {cpu_s * 1000:.1f} ms of GIL time per request "
            f"({w.service_time_ms:g} ms x {w.cpu_fraction:g}): no thread count goes past this"
        )
    else:
        ceiling_reason = (
            f"{count} processes x {cores_each:g} cores each / {cpu_s * 1000:.1f} ms of CPU time "
            f"per request ({w.service_time_ms:g} ms x {w.cpu_fraction:g}): the cores, not a GIL, "
            "bound it; no thread count goes past this"
        )
    if cpu_s > given_cpu_s:
        ceiling_reason += (
            f"; at least {MIN_CPU_MS_PER_REQUEST:g} ms per request, what a bare call through a "
            "Python server costs"
        )
    ceiling = d.put("ceiling_rps", count * cores_each / cpu_s, ceiling_reason)
    if w.peak_rps is not None and w.peak_rps > ceiling:
        held = "GIL" if w.gil == "enabled" else "CPU"
        d.warn(
            f"peak_rps {w.peak_rps:g} is above the ceiling of {ceiling:.1f} req/s: add cores or "
            f"reduce the {held} time per request; threads cannot help"
        )
