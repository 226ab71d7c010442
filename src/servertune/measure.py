"""In-process measurement of an app's service time and GIL fraction (`servertune measure`).

Every sizing rule starts from two numbers users rarely know: how long a request takes inside
the app (`service_time_ms`) and which share of that time holds the GIL (`cpu_fraction`). This
module imports a WSGI or ASGI app, drives requests through it one at a time in this process (no
server, no socket), and for each request records

* the wall time,
* the CPU time of the thread that ran it (`time.thread_time()`; for ASGI `time.process_time()`,
  so work the app hands to executor threads is counted too), and
* the time the thread was ready to run but waited for a core (Linux `/proc/.../schedstat`).

The last one matters on a shared machine: while another process holds the core, the request
neither computes nor waits on I/O, and counting that time as "waiting" would make a CPU-bound
app look I/O-bound. It is subtracted from the wall time to give the request's *busy* time.

Requests run one at a time, so the CPU time of the thread is the CPU time of the request. CPU
time in C code that releases the GIL (zlib, hashlib on large buffers, numpy) is counted as GIL
time, so `cpu_fraction` errs high for such apps: a safe error, it sizes fewer threads.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import math
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

from servertune.workload import APP_PATTERN

if TYPE_CHECKING:  # asyncio costs ~35 ms to import; only ASGI measurement needs it
    import asyncio

__all__ = [
    "CPU_FRACTION_DECIMALS",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_REQUESTS",
    "DEFAULT_WARMUP",
    "MIN_CPU_FRACTION",
    "MeasureError",
    "Measurement",
    "Sample",
    "load_app",
    "measure_app",
]

# --- Tuned defaults, each with its justification -------------------------------------------------

#: Requests measured by default: enough for a stable median and a p10-p90 band (the spread of
#: bench `balance`'s app over 50 requests is under 2% of its median), few enough that a 100 ms app
#: finishes in about 5 s.
DEFAULT_REQUESTS = 50
#: Requests run first and discarded: the first requests import lazily, fill caches and compile
#: templates, none of which a warm worker pays again.
DEFAULT_WARMUP = 3
#: Stop measuring after this long, whatever `requests` says: a slow app never hangs the command.
DEFAULT_MAX_SECONDS = 60.0
#: The Workload model requires cpu_fraction > 0; a pure sleep measures ~0.005. Any floor below
#: 1/64 gives the same plan (sizing caps threads at MAX_THREADS_PER_PROCESS).
MIN_CPU_FRACTION = 0.01
#: Decimals of cpu_fraction written to the workload: the per-request p10-p90 band of bench `balance`'s
#: app is ~0.01 wide on a busy 2-core box, so a third decimal is noise, and noise that matters:
#: threads = ceil(1/cpu_fraction) makes 0.499 three threads where 0.50 is two.
CPU_FRACTION_DECIMALS = 2
#: How long an ASGI app may take to answer lifespan startup before measuring gives up.
LIFESPAN_TIMEOUT_S = 10.0

Interface = Literal["wsgi", "asgi"]


class MeasureError(ValueError):
    """The app cannot be imported or driven: one line saying what and why."""


@dataclass(frozen=True)
class Sample:
    """One request: wall time, CPU time, time spent waiting for a core, and the status code."""

    wall_s: float
    cpu_s: float
    runqueue_s: float
    status: int

    @property
    def busy_s(self) -> float:
        """Wall time minus the time the thread waited for a core (never below its CPU time)."""
        return max(self.wall_s - self.runqueue_s, self.cpu_s, 1e-9)

    @property
    def cpu_fraction(self) -> float:
        """Share of this request's busy time spent on the CPU."""
        return min(1.0, self.cpu_s / self.busy_s)


def _quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (q in [0, 1]) of a non-empty sequence."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class Measurement:
    """The requests measured for one app and route, and the workload numbers they imply."""

    app: str
    interface: Interface
    method: str
    path: str
    samples: tuple[Sample, ...]
    warmup: int
    stopped_early: bool = False
    runqueue_known: bool = True
    date: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S"))

    @property
    def statuses(self) -> dict[int, int]:
        """How many measured requests got each status code."""
        return dict(sorted(Counter(s.status for s in self.samples).items()))

    @property
    def service_time_ms(self) -> float:
        """The typical request: median busy time, in ms."""
        return statistics.median(s.busy_s for s in self.samples) * 1000

    @property
    def cpu_fraction(self) -> float:
        """Share of all busy time spent on the CPU (time-weighted, as the GIL sees it)."""
        busy = sum(s.busy_s for s in self.samples)
        return min(1.0, sum(s.cpu_s for s in self.samples) / busy)

    @property
    def raw_cpu_fraction(self) -> float:
        """CPU time over wall time, without removing the time spent waiting for a core."""
        wall = sum(s.wall_s for s in self.samples)
        return min(1.0, sum(s.cpu_s for s in self.samples) / wall)

    def spread(self) -> dict[str, tuple[float, float, float, float]]:
        """p10, p50, p90 and mean of each per-request number (times in ms)."""
        columns = {
            "service_time_ms": [s.busy_s * 1000 for s in self.samples],
            "wall_ms": [s.wall_s * 1000 for s in self.samples],
            "cpu_ms": [s.cpu_s * 1000 for s in self.samples],
            "runqueue_ms": [s.runqueue_s * 1000 for s in self.samples],
            "cpu_fraction": [s.cpu_fraction for s in self.samples],
        }
        return {
            name: (
                _quantile(v, 0.1),
                _quantile(v, 0.5),
                _quantile(v, 0.9),
                statistics.fmean(v),
            )
            for name, v in columns.items()
        }

    def workload_values(self) -> dict[str, Any]:
        """The Workload fields this measurement sets, rounded and within the model's ranges."""
        values: dict[str, Any] = {
            "service_time_ms": max(0.01, round(self.service_time_ms, 2)),
            "cpu_fraction": min(
                1.0, max(MIN_CPU_FRACTION, round(self.cpu_fraction, CPU_FRACTION_DECIMALS))
            ),
        }
        # Only a WSGI app can be served by the uWSGI / gunicorn configs `gen` writes.
        if self.interface == "wsgi" and re.match(APP_PATTERN, self.app):
            values["app"] = self.app
        return values

    def table(self) -> str:
        """What a person reads: the spread per number, then the estimate and its caveats."""
        spread = self.spread()
        statuses = ", ".join(f"{code} x {n}" for code, n in self.statuses.items())
        lines = [
            f"servertune measure {self.app} ({self.interface}) {self.method} {self.path}",
            f"requests: {len(self.samples)} measured after {self.warmup} warm-up; status {statuses}",
            "",
            f"{'per request':18}  {'p10':>9}  {'p50':>9}  {'p90':>9}  {'mean':>9}",
            f"{'-' * 18}  {'-' * 9}  {'-' * 9}  {'-' * 9}  {'-' * 9}",
        ]
        labels = {
            "service_time_ms": "service time (ms)",
            "wall_ms": "wall time (ms)",
            "cpu_ms": "CPU time (ms)",
            "runqueue_ms": "core wait (ms)",
            "cpu_fraction": "cpu fraction",
        }
        for name, label in labels.items():
            if name == "runqueue_ms" and not self.runqueue_known:
                continue
            p10, p50, p90, mean = spread[name]
            fmt = "{:9.3f}" if name == "cpu_fraction" else "{:9.2f}"
            cells = "  ".join(fmt.format(v) for v in (p10, p50, p90, mean))
            lines.append(f"{label:18}  {cells}")
        values = self.workload_values()
        lines += [
            "",
            f"service_time_ms = {values['service_time_ms']:g}  (median busy time)",
            (
                f"cpu_fraction    = {values['cpu_fraction']:g}  (CPU time / busy time; "
                f"p10-p90 per request {spread['cpu_fraction'][0]:.3f}-{spread['cpu_fraction'][2]:.3f})"
            ),
        ]
        lines.extend(f"note: {note}" for note in self.notes())
        return "\n".join(lines)

    def notes(self) -> list[str]:
        """Caveats a reader should know before trusting the numbers."""
        notes = []
        if self.stopped_early:
            notes.append(f"stopped after {len(self.samples)} requests: the time limit was reached")
        if not self.runqueue_known:
            notes.append(
                "no /proc/<pid>/task/<tid>/schedstat: time spent waiting for a core on a busy "
                "machine counts as I/O wait, so cpu_fraction may read low"
            )
        elif self.raw_cpu_fraction < self.cpu_fraction - 0.02:
            notes.append(
                f"the machine was busy: CPU time / wall time was {self.raw_cpu_fraction:.3f}; "
                "time spent waiting for a core is not counted as service time"
            )
        errors = sum(n for code, n in self.statuses.items() if code >= 400)
        if errors:
            notes.append(f"{errors} requests answered >= 400: the route may not do its real work")
        if self.cpu_fraction < MIN_CPU_FRACTION:
            notes.append(f"cpu_fraction raised to the model's floor {MIN_CPU_FRACTION}")
        return notes

    def to_toml(self) -> str:
        """A workload file `servertune gen --workload` reads; the spread goes in `[measured]`."""
        spread = self.spread()
        lines = [
            f"# servertune measure {self.app} {self.method} {self.path} ({self.date})",
            f"# {len(self.samples)} requests after {self.warmup} warm-up; Python {sys.version.split()[0]}",
            "",
            "[workload]",
        ]
        for name, value in self.workload_values().items():
            lines.append(f"{name} = {_toml_value(value)}")
        lines += [
            "",
            "# The spread behind the estimate (read by `servertune advise`; ignored by `gen`).",
            "[measured]",
            f"interface = {_toml_value(self.interface)}",
            f"method = {_toml_value(self.method)}",
            f"path = {_toml_value(self.path)}",
            f"requests = {len(self.samples)}",
            f"raw_cpu_fraction = {round(self.raw_cpu_fraction, 4)}",
        ]
        for name, (p10, p50, p90, mean) in spread.items():
            digits = 4 if name == "cpu_fraction" else 3
            lines.append(
                f"{name} = {{ p10 = {round(p10, digits)}, p50 = {round(p50, digits)}, "
                f"p90 = {round(p90, digits)}, mean = {round(mean, digits)} }}"
            )
        return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        # JSON string escaping is valid TOML basic-string escaping for everything we emit.
        import json

        return json.dumps(value)
    return repr(value)


# --- Reading CPU and core-wait clocks ------------------------------------------------------------


def _schedstat_wait_s(tid: int | None) -> float | None:
    """Seconds a thread (or, with None, every thread of this process) waited on a run queue."""
    pid = os.getpid()
    tids = [tid] if tid is not None else _all_tids(pid)
    total = 0
    try:
        for t in tids:
            with open(f"/proc/{pid}/task/{t}/schedstat", encoding="ascii") as handle:
                total += int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return total / 1e9


def _all_tids(pid: int) -> list[int]:
    try:
        return [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


@dataclass
class _Clock:
    """CPU and core-wait readings before and after one request."""

    whole_process: bool
    tid: int = field(default_factory=threading.get_native_id)

    def read(self) -> tuple[float, float, float | None]:
        cpu = time.process_time() if self.whole_process else time.thread_time()
        wait = _schedstat_wait_s(None if self.whole_process else self.tid)
        return time.perf_counter(), cpu, wait


# --- Loading the app -----------------------------------------------------------------------------


def load_app(spec: str, app_dir: str | None = None) -> Callable[..., Any]:
    """Import `module:callable`, with `app_dir` (default: the current directory) on sys.path."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise MeasureError(
            f"APP: must be module:callable (e.g. 'mysite.wsgi:application'); got {spec!r}"
        )
    directory = os.path.abspath(app_dir or os.getcwd())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise MeasureError(f"APP: cannot import {module_name!r}: {error}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise MeasureError(f"APP: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise MeasureError(f"APP: {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]


def detect_interface(app: Callable[..., Any]) -> Interface:
    """ASGI if the app (or its __call__) is a coroutine function, else WSGI."""
    call = getattr(app, "__call__", None)  # noqa: B004 - we want the method, not callability
    if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(call):
        return "asgi"
    return "wsgi"


# --- Driving requests ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


def _wsgi_environ(req: _Request) -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": req.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote(req.path, encoding="latin-1"),
        "QUERY_STRING": req.query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(req.body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if req.body:
        environ["CONTENT_LENGTH"] = str(len(req.body))
    for name, value in req.headers:
        key = name.upper().replace("-", "_")
        if key in {"CONTENT_TYPE", "CONTENT_LENGTH"}:
            environ[key] = value
        else:
            environ[f"HTTP_{key}"] = value
    return environ


def _call_wsgi(app: Callable[..., Any], req: _Request) -> int:
    status: list[str] = []

    def start_response(
        status_line: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        status[:] = [status_line]
        return lambda data: None

    result: Iterable[bytes] = app(_wsgi_environ(req), start_response)
    try:
        for _ in result:  # the body is produced, and paid for, while iterating
            pass
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    if not status:
        raise MeasureError("the WSGI app returned without calling start_response")
    return int(status[0].split(" ", 1)[0])


def _asgi_scope(req: _Request, state: dict[str, Any]) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1")]
    headers += [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in req.headers]
    if req.body:
        headers.append((b"content-length", str(len(req.body)).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": req.method,
        "scheme": "http",
        "path": unquote(req.path),
        "raw_path": req.path.encode("latin-1", "replace"),
        "query_string": req.query.encode("latin-1", "replace"),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "state": dict(state),
    }


async def _call_asgi(app: Callable[..., Any], req: _Request, state: dict[str, Any]) -> int:
    import asyncio

    sent_body = False
    done = asyncio.Event()
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": req.body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message["status"]))
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await app(_asgi_scope(req, state), receive, send)
    done.set()
    if not status:
        raise MeasureError("the ASGI app returned without sending http.response.start")
    return status[0]


class _Lifespan:
    """Run an ASGI app's lifespan protocol around the measurement, if the app speaks it."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        import asyncio

        self.state: dict[str, Any] = {}
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": self.state}

        async def send(message: Mapping[str, Any]) -> None:
            await self._answers.put(dict(message))

        with contextlib.suppress(Exception):  # an app without lifespan support may raise
            await self.app(scope, self._queue.get, send)
        await self._answers.put({"type": "lifespan.unsupported"})

    async def startup(self) -> None:
        import asyncio

        self._task = asyncio.get_running_loop().create_task(self._run())
        await self._queue.put({"type": "lifespan.startup"})
        answer = await asyncio.wait_for(self._answers.get(), LIFESPAN_TIMEOUT_S)
        if answer["type"] == "lifespan.startup.failed":
            raise MeasureError(f"ASGI lifespan startup failed: {answer.get('message', '')}")
        if answer["type"] != "lifespan.startup.complete":
            self._task = None  # the app does not speak lifespan: nothing to shut down

    async def shutdown(self) -> None:
        if self._task is None:
            return
        import asyncio

        await self._queue.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._task, LIFESPAN_TIMEOUT_S)


#: A request target as it appears on an HTTP request line: visible ASCII, no spaces or controls.
_TARGET = re.compile(r"\A/[!-~]*\Z")


def _split_target(path: str) -> tuple[str, str]:
    if not _TARGET.match(path):
        raise MeasureError(
            f"--path: must start with '/' and hold only visible ASCII (no spaces or control "
            f"characters); got {path!r}"
        )
    parts = urlsplit(path)
    return parts.path or "/", parts.query


def _timed(call: Callable[[], int], clock: _Clock) -> Sample:
    wall0, cpu0, wait0 = clock.read()
    status = call()
    wall1, cpu1, wait1 = clock.read()
    runqueue = 0.0 if wait0 is None or wait1 is None else max(0.0, wait1 - wait0)
    return Sample(wall_s=wall1 - wall0, cpu_s=cpu1 - cpu0, runqueue_s=runqueue, status=status)


def _drive(
    calls: Callable[[], int],
    clock: _Clock,
    requests: int,
    warmup: int,
    max_seconds: float,
    on_sample: Callable[[int], None] | None,
) -> tuple[list[Sample], bool]:
    deadline = time.monotonic() + max_seconds
    for _ in range(warmup):
        calls()
    samples: list[Sample] = []
    for i in range(requests):
        samples.append(_timed(calls, clock))
        if on_sample is not None:
            on_sample(i + 1)
        if time.monotonic() > deadline and i + 1 < requests:
            return samples, True
    return samples, False


def measure_app(
    app_spec: str,
    *,
    path: str = "/",
    method: str = "GET",
    requests: int = DEFAULT_REQUESTS,
    warmup: int = DEFAULT_WARMUP,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
    interface: Interface | None = None,
    app_dir: str | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    app: Callable[..., Any] | None = None,
    on_sample: Callable[[int], None] | None = None,
) -> Measurement:
    """Import `app_spec` (or use `app`), run `warmup` + `requests` requests, and measure each."""
    if requests < 1:
        raise MeasureError(f"--requests: must be at least 1; got {requests}")
    if warmup < 0:
        raise MeasureError(f"--warmup: must be 0 or more; got {warmup}")
    method = method.upper()
    if not re.fullmatch(r"[A-Z]{1,16}", method):
        raise MeasureError(f"--method: must be an HTTP method such as GET; got {method!r}")
    target, query = _split_target(path)
    req = _Request(method, target, query, tuple(headers), body)
    func = app if app is not None else load_app(app_spec, app_dir)
    kind = interface or detect_interface(func)
    clock = _Clock(whole_process=kind == "asgi")
    runqueue_known = clock.read()[2] is not None
    if kind == "wsgi":
        samples, early = _drive(
            lambda: _call_wsgi(func, req), clock, requests, warmup, max_seconds, on_sample
        )
    else:
        samples, early = _measure_asgi(func, req, clock, requests, warmup, max_seconds, on_sample)
    return Measurement(
        app=app_spec,
        interface=kind,
        method=method,
        path=path,
        samples=tuple(samples),
        warmup=warmup,
        stopped_early=early,
        runqueue_known=runqueue_known,
    )


def _measure_asgi(
    app: Callable[..., Any],
    req: _Request,
    clock: _Clock,
    requests: int,
    warmup: int,
    max_seconds: float,
    on_sample: Callable[[int], None] | None,
) -> tuple[list[Sample], bool]:
    import asyncio

    # One loop for the whole run, as a server has: connection pools and caches the app keeps on
    # the loop survive from request to request.
    with asyncio.Runner() as runner:
        lifespan = _Lifespan(app)
        runner.run(lifespan.startup())

        def one() -> int:
            return runner.run(_call_asgi(app, req, lifespan.state))

        try:
            return _drive(one, clock, requests, warmup, max_seconds, on_sample)
        finally:
            runner.run(lifespan.shutdown())
