"""Processes: one per core, unless memory holds fewer; and the CPU ceiling they give."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import MEMORY_HEADROOM_RATIO
from servertune.sizing.plan import Derivation, PlanError
from servertune.workload import Workload


def workers_that_fit(w: Workload) -> int | None:
    """How many warm workers the memory limit holds with headroom, None if either is unknown."""
    if w.memory_per_worker_mb is None or w.memory_limit_mb is None:
        return None
    return math.floor(w.memory_limit_mb * MEMORY_HEADROOM_RATIO / w.memory_per_worker_mb)


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Under the GIL a process uses at most one core: one per core, memory permitting."""
    assert isinstance(w.cores, int)
    count = w.cores
    reason = (
        f"one per core ({w.cores}, {m.cores_source}): under the GIL a process uses at most one core"
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

    cpu_s = w.service_time_ms / 1000 * w.cpu_fraction
    ceiling = d.put(
        "ceiling_rps",
        count / cpu_s,
        f"{count} processes / {cpu_s * 1000:.1f} ms of GIL time per request "
        f"({w.service_time_ms:g} ms x {w.cpu_fraction:g}): no thread count goes past this",
    )
    if w.peak_rps is not None and w.peak_rps > ceiling:
        d.warn(
            f"peak_rps {w.peak_rps:g} is above the ceiling of {ceiling:.1f} req/s: add cores or "
            "reduce the GIL time per request; threads cannot help"
        )
