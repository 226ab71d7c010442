"""Admission for ASGI apps: what one event loop serves, and how many requests it lets in.

An ASGI process runs every request on one event loop. Awaiting costs the loop nothing; the time
a request blocks the loop (Python CPU, or a sync call made without `await`, plus the server's own
parsing and writing) is served one at a time, and CPU run off the loop still needs the GIL. So a
process serves at most 1 / (that time + nginx's share of a core) requests per second, and by
Little's law that rate keeps rate x (time a request is held) requests in flight. Admitting more
only queues them on the loop: each admitted request then waits for the others. nginx admits
what the loops serve for as long as a request is held plus a bounded wait for its turn
(`admission_wait_ms`), so a 503 goes out only for a request whose answer would come late; the
excess gets it at once. The servers differ in their own cost per request (uvicorn parses HTTP in
Python on the loop, granian in Rust off it), so each gets its capacity; the one nginx file fronts
any of them, so it admits for the fastest, and sheds nothing any of them would answer in time.
"""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import (
    ADMISSION_FLOOR_LOOP_MS,
    ADMISSION_MIN_WAIT_MS,
    ADMISSION_WAIT_SHARE,
    ASGI_OVERLOAD_P99_TARGET,
    ASGI_SERVER_MS_PER_REQUEST,
    GRANIAN_SERVER_MS_PER_REQUEST,
    MAX_ADMITTED_PER_PROCESS,
    MIN_CPU_MS_PER_REQUEST,
    NGINX_MS_PER_REQUEST,
)
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import arrival_rate, held_s, in_flight, pool_threads
from servertune.workload import Workload

#: The numbers this rule owns, None for a WSGI app (a thread per request: no loop to protect).
OWNED = (
    "loop_ms",
    "asgi_capacity_rps",
    "granian_capacity_rps",
    "admission_wait_ms",
    "admitted_per_process",
    "in_service_per_process",
    "admission_limit",
    "executor_threads",
)


def asgi_hold_s(w: Workload) -> float:
    """Seconds an ASGI request is held: its own time (`queueing.held_s`) and the ASGI server's
    parsing and writing, which measured in-process times leave out."""
    return held_s(w) + ASGI_SERVER_MS_PER_REQUEST / 1000


def blocking_ms(w: Workload, cores_per_process: float = 1.0) -> tuple[float, str]:
    """The ms a request holds its process's loop or GIL, and why.

    Under the GIL, CPU run off the loop (a sync_to_async thread) still holds the process's one
    GIL. With the GIL disabled it holds one of the process's `cores_per_process` cores instead,
    so it counts for cpu_ms / cores_per_process of the process's time.
    """
    cpu = w.cpu_ms_per_request
    lbf = w.loop_blocking_fraction
    blocking = cpu if lbf is None else w.service_time_ms * lbf
    named = (
        w.cpu_named if lbf is None else f"{w.service_time_ms:g} ms x loop_blocking_fraction {lbf:g}"
    )
    if w.gil == "enabled":
        if cpu > blocking:
            return cpu, f"{w.cpu_named} (the GIL, above {named})"
        return blocking, named
    cpu /= cores_per_process
    if cpu > blocking:
        return (
            cpu,
            (
                f"{w.cpu_named} / {cores_per_process:g} cores per process "
                f"(gil = 'disabled': the process's cores, above {named})"
            ),
        )
    return blocking, f"{named} (gil = 'disabled': CPU off the loop needs no GIL)"


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Loop time per request, capacity, admitted requests, and the sync_to_async pool."""
    if w.interface != "asgi":
        for name in OWNED:
            d.put(name, None, "interface is 'wsgi': a thread per request, nothing to admit")
        return
    processes = d.get_int("processes")
    hold = asgi_hold_s(w)
    capacity, fastest = _capacities(w, d, processes, hold)
    _admit(w, d, processes, hold, capacity, fastest)
    if w.sync_views:
        rate, rate_name = arrival_rate(w, d.get_float("ceiling_rps"))
        calls = in_flight(rate / processes, hold)
        threads = pool_threads(calls, d.get_int("cpu_threads"))
        reason = (
            f"sync_to_async pool: {rate / processes:.1f} req/s per process ({rate_name}) x "
            f"{hold * 1000:.0f} ms = {calls:.1f} calls in flight, Poisson tail => {threads} "
            "(servertune.asgi.executor_threads gives the same number)"
        )
    else:
        threads, reason = None, "no sync views (sync_views = false): no sync_to_async pool"
    d.put("executor_threads", threads, reason)


def _capacities(w: Workload, d: Derivation, processes: int, hold: float) -> tuple[float, float]:
    """The time a request holds its loop, and uvicorn's and granian's capacity (req/s): what
    the loops serve, or what `in_flight_limit` requests held `hold` s each are, if fewer."""
    held_ms, held_reason_text = blocking_ms(w, d.get_float("cores_per_process"))
    lbf = w.loop_blocking_fraction
    given = {"cpu_fraction", "cpu_ms"} & w.model_fields_set
    if lbf is not None and held_ms > w.service_time_ms * lbf and not given:
        # The user set the loop's share, and the default cpu_fraction (never given) outranks it:
        # said aloud, since the plan then sizes for a number the user did not write.
        d.warn(
            f"loop_blocking_fraction {lbf:g} is below cpu_fraction {w.cpu_fraction:g} (the "
            "default: not given), and CPU run off the loop still holds the GIL, so the plan "
            f"sizes for {held_ms / w.service_time_ms:g}; give the app's cpu_ms too "
            "(`servertune measure` writes both)"
        )
    app_ms = max(held_ms, MIN_CPU_MS_PER_REQUEST)
    loop_reason = (
        f"{held_reason_text}: the time one request keeps its process's loop (or the GIL) from "
        "every other request"
    )
    if held_ms < MIN_CPU_MS_PER_REQUEST:
        loop_reason += (
            f"; at least {MIN_CPU_MS_PER_REQUEST:g} ms, what a bare call through a Python "
            "server costs"
        )
    loop_reason += (
        f"; + {ASGI_SERVER_MS_PER_REQUEST:g} ms the ASGI server's own parsing and writing "
        "(measured in-process times leave it out)"
    )
    served_ms = d.put("loop_ms", app_ms + ASGI_SERVER_MS_PER_REQUEST, loop_reason)
    held, held_reason = math.inf, ""
    if w.in_flight_limit is not None:
        held = processes * w.in_flight_limit / hold
        held_reason = (
            f"; at most {processes} x in_flight_limit {w.in_flight_limit} / {hold * 1000:.1f} ms "
            f"held = {held:.1f} req/s (past that many in flight the app's loop time per request "
            "climbs)"
        )
    cores_each = d.get_float("cores_per_process")
    served_ms, shared = on_shared_cores(w, served_ms, ASGI_SERVER_MS_PER_REQUEST, cores_each)
    served = processes * 1000 / (served_ms + NGINX_MS_PER_REQUEST)
    capacity = d.put(
        "asgi_capacity_rps",
        min(served, held),
        f"{processes} processes x 1000 / ({served_ms:.2f} ms{shared} + "
        f"{NGINX_MS_PER_REQUEST:g} ms of nginx on the same cores): awaiting costs the loop "
        "nothing, blocking time is served one request at a time (uvicorn's, and gunicorn's ASGI "
        "workers')" + (held_reason if held < served else ""),
    )
    granian_loop_ms, shared = on_shared_cores(
        w, app_ms + GRANIAN_SERVER_MS_PER_REQUEST, GRANIAN_SERVER_MS_PER_REQUEST, cores_each
    )
    served = processes * 1000 / (granian_loop_ms + NGINX_MS_PER_REQUEST)
    fastest = d.put(
        "granian_capacity_rps",
        min(served, held),
        f"{processes} processes x 1000 / ("
        + (
            f"{granian_loop_ms:.2f} ms{shared}"
            if shared
            else f"{app_ms:.2f} ms of the app + {GRANIAN_SERVER_MS_PER_REQUEST:g} ms of "
            "granian's own (it parses HTTP in Rust: off the GIL, on the same cores)"
        )
        + f" + {NGINX_MS_PER_REQUEST:g} ms of nginx): granian's loops serve more than "
        "uvicorn's, so it gets its own capacity" + (held_reason if held < served else ""),
    )
    return capacity, fastest


def on_shared_cores(
    w: Workload, loop_ms: float, server_ms: float, cores_each: float
) -> tuple[float, str]:
    """A process's time per request: its loop's, or, where processes outnumber the cores, its
    share of the cores' CPU time per request when that is longer; and the words for it."""
    if cores_each >= 1:
        return loop_ms, ""
    cpu_ms = (max(w.cpu_ms_per_request, MIN_CPU_MS_PER_REQUEST) + server_ms) / cores_each
    if cpu_ms <= loop_ms:
        return loop_ms, ""
    return cpu_ms, (
        f" ({w.cpu_named} + {server_ms:g} ms of the server's own CPU, on {cores_each:g} of a core "
        "a process: more processes than cores share them)"
    )


def wait_floor_ms(d: Derivation) -> tuple[float, str]:
    """The least wait an admitted request gets, and why: the scheduler's noise for a path that
    holds its loop under ADMISSION_FLOOR_LOOP_MS, none for one that holds it longer."""
    loop_ms = d.get_float("loop_ms")
    if loop_ms < ADMISSION_FLOOR_LOOP_MS:
        return ADMISSION_MIN_WAIT_MS, (
            f"at least {ADMISSION_MIN_WAIT_MS:g} ms for a loop time of {loop_ms:.2f} ms (under "
            f"{ADMISSION_FLOOR_LOOP_MS:g} ms: its own time is below the scheduler's noise, and a "
            "smaller count turns a closed-loop client's refused connections into a stream of "
            "quick 503s that takes the front's CPU)"
        )
    return 0.0, (
        f"no floor for a loop time of {loop_ms:.2f} ms (from {ADMISSION_FLOOR_LOOP_MS:g} ms, "
        "every request queued on the loop is milliseconds of everyone's wait)"
    )


def _admit(
    w: Workload, d: Derivation, processes: int, hold: float, capacity: float, fastest: float
) -> None:
    """The wait budget, and what nginx admits: Little's law at the fastest server's capacity."""
    in_flight_limit = w.in_flight_limit
    floor, floor_reason = wait_floor_ms(d)
    wait = (
        d.put(
            "admission_wait_ms",
            max(hold * 1000 * ADMISSION_WAIT_SHARE, floor),
            f"max({ADMISSION_WAIT_SHARE:g} x the {hold * 1000:.1f} ms a request is held, "
            f"{floor:g} ms): the longest an admitted request may wait for its turn before its "
            f"answer counts as late: held + wait is {1 + ADMISSION_WAIT_SHARE:g} x its own time, "
            f"the overload target of {ASGI_OVERLOAD_P99_TARGET:g} x the unloaded p99; "
            + floor_reason,
        )
        / 1000
    )
    mean = in_flight(fastest / processes, hold + wait)
    admitted = max(1, math.ceil(mean - 1e-9))
    slowest_wait_ms = (admitted / (capacity / processes) - hold) * 1000
    reason = (
        f"Little's law at the fastest server's capacity (granian's): {fastest / processes:.1f} "
        f"req/s x ({hold * 1000:.1f} ms held + {wait * 1000:.1f} ms of wait) = {mean:.1f} in "
        "flight, so nginx, which fronts any of the servers, sheds nothing a server behind it "
        f"answers in time; uvicorn's loops ({capacity / processes:.1f} req/s each) work "
        f"through that many with {slowest_wait_ms:.1f} ms of wait"
    )
    # (The 1e-9 above: float noise, 100.0 x 0.11 = 11.000000000000002, must not add a request.)
    if admitted > MAX_ADMITTED_PER_PROCESS:
        d.warn(
            f"{admitted} requests in flight per process at capacity; admitting "
            f"{MAX_ADMITTED_PER_PROCESS} (each holds a connection, and the default open-file limit "
            "is 1024): add processes or shorten the time a request is held"
        )
        admitted = MAX_ADMITTED_PER_PROCESS
        reason += f", capped at {MAX_ADMITTED_PER_PROCESS} (open files per process)"
    if in_flight_limit is not None and admitted > in_flight_limit:
        admitted = in_flight_limit
        reason += (
            f", capped at in_flight_limit {in_flight_limit}: past that many in flight the app's "
            "loop time per request climbs, so admitting more serves fewer, later"
        )
    admitted = d.put("admitted_per_process", admitted, reason)
    _in_service(w, d, processes, hold, fastest, admitted)
    d.put(
        "admission_limit",
        processes * admitted,
        f"{processes} processes x {admitted}: nginx's limit_conn answers request "
        f"{processes * admitted + 1} and beyond with a quick 503 instead of an unbounded queue"
        + _lets_through(w, d, processes, admitted, hold),
    )


def _in_service(
    w: Workload, d: Derivation, processes: int, hold: float, fastest: float, admitted: int
) -> None:
    """What a process takes at once when HAProxy, which queues, fronts it: Little's law at the
    time a request is held, without the wait, since the wait is spent in HAProxy's queue."""
    floor, _ = wait_floor_ms(d)
    window = max(hold * 1000, floor)
    mean = fastest / processes * window / 1000
    little = max(1, math.ceil(mean - 1e-9))
    serving = min(admitted, little)
    reason = (
        f"Little's law at the fastest server's capacity: {fastest / processes:.1f} req/s x "
        + (
            f"{hold * 1000:.1f} ms held"
            if hold * 1000 >= floor
            else f"{floor:g} ms (the wait floor: a request held "
            f"{hold * 1000:.2f} ms, under the scheduler's noise)"
        )
        + f" = {mean:.1f}"
        + (f", at most admitted_per_process {admitted}" if little > admitted else "")
        + ": HAProxy's `maxconn` on each app server. A request past it waits in HAProxy's "
        "queue, where `timeout queue` bounds the wait, instead of on the loop, where nothing "
        "does; admitting the wait's share onto the loop as well (nginx's count, which has no "
        "queue) only adds to every request's time" + _lets_through(w, d, processes, serving, hold)
    )
    d.put("in_service_per_process", serving, reason)


def _lets_through(w: Workload, d: Derivation, processes: int, per_process: int, hold: float) -> str:
    """What an admission count lets through against what the same uvicorn processes serve
    with nothing in front: the count must never shed what they would have answered."""
    through = processes * per_process / hold
    served_ms, shared = on_shared_cores(
        w, d.get_float("loop_ms"), ASGI_SERVER_MS_PER_REQUEST, d.get_float("cores_per_process")
    )
    alone = processes * 1000 / served_ms
    verdict = "at least" if through >= alone else "below"
    return (
        f". {processes} x {per_process} lets through {through:.0f} req/s ({per_process} / "
        f"{hold * 1000:.1f} ms held), {verdict} the {alone:.0f} req/s one uvicorn per process "
        f"serves without admission ({processes} x 1000 / "
        + (f"{served_ms:.2f} ms{shared})" if shared else "loop_ms)")
    )
