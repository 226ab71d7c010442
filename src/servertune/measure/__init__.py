"""In-process measurement of an app's service time and CPU per request (`servertune measure`).

Every sizing rule starts from two numbers users rarely know: how long a request takes inside
the app (`service_time_ms`) and how much of it holds the GIL (`cpu_ms`, from which the Workload
derives the share `cpu_fraction`). This
package imports a WSGI or ASGI app, drives requests through it one at a time in this process
(no server, no socket), and for each request records

* the wall time,
* the CPU time of the thread that ran it (`time.thread_time()`; for ASGI `time.process_time()`,
  so work the app hands to executor threads is counted too), and
* the time the thread was ready to run but waited for a core (Linux `/proc/.../schedstat`).

The last one matters on a shared machine: while another process holds the core, the request
neither computes nor waits on I/O, and counting that time as "waiting" would make a CPU-bound
app look I/O-bound. It is subtracted from the wall time to give the request's *busy* time.

Requests run one at a time, so the CPU time of the thread is the CPU time of the request. CPU
time in C code that releases the GIL (zlib, hashlib on large buffers, numpy) is counted as GIL
time, so `cpu_ms` errs high for such apps: a safe error, it sizes fewer threads.

An ASGI app is then driven at 1, 2, 4, ... requests in flight (`sweep`), and the CPU per
request written is the busiest level's: one request at a time pays the loop's whole wake-up
alone, several times what a loaded loop pays a request, and capacity is decided under load.

A real app is a mix of endpoints: `measure_mix` measures several weighted paths in turn and
weighs them into one estimate (`Mix`), keeping each path's own figures.

Modules: `loading` (import the app, WSGI or ASGI), `target` (what to request), `wsgi` / `asgi`
(calling the app), `clocks` (CPU and core-wait time), `driver` (the timed loop), `result`
(samples, spread, workload numbers), `errors`.
"""

from __future__ import annotations

from servertune.measure.driver import (
    DEFAULT_MAX_SECONDS,
    DEFAULT_REQUESTS,
    DEFAULT_WARMUP,
    measure_app,
    measure_mix,
)
from servertune.measure.errors import AppFailed, MeasureError
from servertune.measure.loading import Interface, detect_interface, load_app
from servertune.measure.result import (
    CPU_FRACTION_DECIMALS,
    MIN_CPU_FRACTION,
    Measurement,
    Mix,
    Sample,
)
from servertune.measure.target import WeightedPath, parse_weighted_path

__all__ = [
    "CPU_FRACTION_DECIMALS",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_REQUESTS",
    "DEFAULT_WARMUP",
    "MIN_CPU_FRACTION",
    "AppFailed",
    "Interface",
    "MeasureError",
    "Measurement",
    "Mix",
    "Sample",
    "WeightedPath",
    "detect_interface",
    "load_app",
    "measure_app",
    "measure_mix",
    "parse_weighted_path",
]
