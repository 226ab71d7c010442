"""Workload -> Plan: every derived number with the reason it has.

No I/O happens here, except reading the machine's core limits when `cores` is 'auto' (the caller
passes somaxconn in, so a plan for a given core count depends on its inputs only).

The model, in short (docs/sizing.md has the full derivation and sources):

* One process per core: under the GIL a process can use at most one core.
* Threads that saturate a process: 1 / cpu_fraction (Goetz, `1 + wait/compute`). Seed 000: a
  request holding the GIL half the time scales to exactly 2 threads; more threads only queue.
* Headroom for threads parked on slow calls: by Little's law a process receiving `x` req/s of
  which a share `r` waits `S` seconds keeps `x*r*S` threads busy on average. We reserve the
  99.9th percentile of a Poisson with that mean, and at least one thread whenever slow calls
  exist, so one slow call never makes quick requests queue (seed 001).
* One socket per worker, balanced by nginx `least_conn` (seed 000), so a busy worker is not
  handed a request a free one could take.
* Timeouts ordered across layers: LB idle < nginx keep-alive; slow call < harakiri < nginx read.
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from servertune.workload import Workload

__all__ = [
    "DEFAULT_SOMAXCONN",
    "Plan",
    "PlanError",
    "Socket",
    "make_plan",
    "poisson_quantile",
]

# --- Tuned defaults, each with its justification -------------------------------------------------

#: Quantile of busy slow-call threads to provision for. 99.9% leaves one interval in a thousand in
#: which a quick request may wait for a thread (RESEARCH.md "Little's law"; bench `hol`).
SLOW_CALL_QUANTILE = 0.999
#: Upper bound on threads per process: beyond this the GIL switch interval and per-thread stacks
#: cost more than they buy; a workload that needs more should use asyncio (servertune advise).
MAX_THREADS_PER_PROCESS = 64
#: Smallest listen backlog: the Linux default somaxconn before 5.4, and plenty for a loopback hop.
MIN_BACKLOG = 128
#: Seconds of peak arrivals the kernel queue of one socket should absorb while a worker restarts.
BACKLOG_BURST_S = 2.0
#: Assumed when /proc/sys/net/core/somaxconn cannot be read (the Linux default since 5.4).
DEFAULT_SOMAXCONN = 4096
#: nginx keep-alive outlives the load balancer's idle timeout by this much, so the LB always
#: closes first and never sends a request on a connection nginx is closing (RESEARCH.md).
KEEPALIVE_MARGIN_S = 5
#: A request may run this many times its expected length before harakiri kills it.
REQUEST_TIMEOUT_FACTOR = 2.0
#: Never kill a request sooner than this: gunicorn's default `timeout`, and long enough for cold starts.
MIN_REQUEST_TIMEOUT_S = 30
#: nginx waits this much longer than the app server's own timeout, so the server's clean kill
#: (harakiri, a 502 with a log line) happens before nginx gives up with a 504 on a live worker.
READ_TIMEOUT_MARGIN_S = 5
#: Recycle each worker after this many requests to bound slow leaks; the jitter/delta spreads
#: restarts so workers do not all restart together (gunicorn `max_requests_jitter`).
MAX_REQUESTS = 5000
MAX_REQUESTS_JITTER_RATIO = 0.1
#: Fail a per-worker socket only after 3 errors in 5 s: one worker restarting (max-requests)
#: must not take 1/N of the capacity out for nginx's default 10 s (max_fails=1).
MAX_FAILS = 3
FAIL_TIMEOUT_S = 5
#: Share of the container memory limit the workers may use; the rest is for the master, nginx
#: and the page cache.
MEMORY_HEADROOM_RATIO = 0.9
#: Without a memory limit, restart a worker whose RSS doubles its warm size (a leak, not load).
RSS_GROWTH_FACTOR = 2.0
#: nginx connections per worker process: each proxied request holds two (client + upstream).
MIN_NGINX_WORKER_CONNECTIONS = 1024
#: Shared memory for the upstream `zone` (least_conn counts shared by all nginx workers): a base
#: plus 1 KiB per server. Measured with nginx -t: 64 servers do not fit in 64 KiB, 96 KiB holds them.
UPSTREAM_ZONE_BASE_KB = 64
UPSTREAM_ZONE_PER_SERVER_KB = 1
#: nginx writes its access log in batches of this size (or every ACCESS_LOG_FLUSH_S): one write
#: per request costs a syscall per request on the hot path; a second of log delay costs nothing.
ACCESS_LOG_BUFFER_KB = 64
ACCESS_LOG_FLUSH_S = 1
#: uWSGI's request header buffer; the 4 KiB default answers large cookies with a 502.
UWSGI_BUFFER_SIZE = 32768
#: Unix socket permissions: owner and group read/write, nobody else. A socket anyone may open is
#: a way around nginx (gunicorn's default umask 0 leaves its sockets at 0777).
SOCKET_MODE = 0o660
#: gunicorn has no socket-mode setting, only a process umask: 0o007 removes every right of other
#: users (sockets become 0770; x means nothing on a socket) and leaves app-created directories usable.
SOCKET_UMASK = 0o007
#: gunicorn's own request limits, kept explicit so a config review sees them.
LIMIT_REQUEST_LINE = 4094
LIMIT_REQUEST_FIELDS = 100
LIMIT_REQUEST_FIELD_SIZE = 8190


class PlanError(ValueError):
    """The workload is valid field by field but cannot be served (e.g. memory for no worker)."""


class Socket(BaseModel):
    """One app-server socket: a loopback/private TCP port or a unix socket path."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["tcp", "unix"]
    host: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    port: int | None = None
    path: str | None = None

    @property
    def address(self) -> str:
        """As uWSGI and gunicorn spell it: `127.0.0.1:8001`, `[::1]:8001` or `/run/app/w0.sock`."""
        if self.kind == "unix":
            assert self.path is not None
            return self.path
        host = f"[{self.host}]" if isinstance(self.host, ipaddress.IPv6Address) else str(self.host)
        return f"{host}:{self.port}"

    @property
    def nginx(self) -> str:
        """As nginx spells it in `server` and `*_pass`: `unix:` in front of a path."""
        return f"unix:{self.path}" if self.kind == "unix" else self.address

    @property
    def gunicorn(self) -> str:
        """As gunicorn's `bind` spells it."""
        return f"unix:{self.path}" if self.kind == "unix" else self.address


class Plan(BaseModel):
    """Every number servertune derives, each with a unit and a reason (`reasons[name]`)."""

    model_config = ConfigDict(frozen=True)

    workload: Workload
    processes: int
    threads: int
    cpu_threads: int
    slow_call_threads: int
    ceiling_rps: float
    sockets: tuple[Socket, ...]
    shared_socket: Socket
    backlog: int
    shared_backlog: int
    somaxconn: int
    nginx_keepalive_timeout_s: int
    request_timeout_s: int
    graceful_timeout_s: int
    nginx_read_timeout_s: int
    upstream_keepalive_timeout_s: int
    gunicorn_keepalive_s: int
    max_requests: int
    max_requests_jitter: int
    reload_on_rss_mb: int | None
    nginx_worker_processes: int
    nginx_worker_connections: int
    upstream_zone_kb: int
    max_fails: int
    fail_timeout_s: int
    max_body_mb: int
    buffer_size: int
    limit_request_line: int
    limit_request_fields: int
    limit_request_field_size: int
    socket_mode: str | None
    socket_umask: str | None
    reasons: dict[str, str]
    units: dict[str, str]
    warnings: tuple[str, ...] = ()

    def value(self, name: str) -> Any:
        """A derived number as JSON-ready data: sockets become their addresses."""
        value: Any = getattr(self, name)
        if name == "sockets":
            return [s.address for s in self.sockets]
        return value.address if isinstance(value, Socket) else value

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(name, value, unit, reason) for every derived number, in declaration order."""
        rows = []
        for name in self.reasons:
            value = self.value(name)
            if isinstance(value, list):
                shown = ", ".join(value)
            elif isinstance(value, float):
                shown = f"{value:.1f}"
            else:
                shown = "-" if value is None else str(value)
            rows.append((name, shown, self.units.get(name, ""), self.reasons[name]))
        return rows

    def to_json(self) -> dict[str, Any]:
        """The plan for machines: the resolved workload and each number with its unit and reason."""
        numbers = {
            name: {"value": self.value(name), "unit": self.units.get(name, ""), "reason": reason}
            for name, reason in self.reasons.items()
        }
        return {
            "workload": self.workload.model_dump(mode="json"),
            "plan": numbers,
            "warnings": list(self.warnings),
        }


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


#: The longest unix socket path Linux accepts (sun_path holds 108 bytes with the final NUL).
UNIX_PATH_MAX = 107


def _sockets(w: Workload, count: int) -> tuple[tuple[Socket, ...], Socket]:
    if w.socket_dir is not None:
        base = w.socket_dir.rstrip("/")
        longest = f"{base}/worker-{count - 1}.sock"
        if len(longest.encode()) > UNIX_PATH_MAX:
            raise PlanError(
                f"socket_dir: {longest!r} is {len(longest.encode())} bytes; unix socket paths "
                f"must be at most {UNIX_PATH_MAX}: choose a shorter directory"
            )
        per_worker = tuple(
            Socket(kind="unix", path=f"{base}/worker-{i}.sock") for i in range(count)
        )
        return per_worker, Socket(kind="unix", path=f"{base}/shared.sock")
    if w.base_port + count > 65535:
        raise PlanError(
            f"base_port: {w.base_port} + {count} workers runs past port 65535; choose a lower base_port"
        )
    per_worker = tuple(
        Socket(kind="tcp", host=w.bind_host, port=w.base_port + i) for i in range(count)
    )
    return per_worker, Socket(kind="tcp", host=w.bind_host, port=w.base_port)


def make_plan(workload: Workload, *, somaxconn: int = DEFAULT_SOMAXCONN) -> Plan:
    """Derive the plan. `somaxconn` is the kernel's listen-queue cap (read by the caller)."""
    cores_source = "given"
    if workload.cores == "auto":
        from servertune.cores import read_limits

        limits = read_limits()
        workload = workload.model_copy(update={"cores": limits.cores})
        cores_source = f"'auto': {limits.source}"
    w = workload
    assert isinstance(w.cores, int)
    reasons: dict[str, str] = {}
    units: dict[str, str] = {}
    warnings: list[str] = []

    def why(name: str, unit: str, reason: str) -> None:
        reasons[name] = reason
        units[name] = unit

    service_s = w.service_time_ms / 1000
    cpu_s = service_s * w.cpu_fraction
    slow_s = w.slow_call_ms / 1000

    # Processes: one per core, unless the memory limit cannot hold that many.
    processes = w.cores
    process_reason = (
        f"one per core ({w.cores}, {cores_source}): under the GIL a process uses at most one core"
    )
    if w.memory_per_worker_mb is not None and w.memory_limit_mb is not None:
        fits = math.floor(w.memory_limit_mb * MEMORY_HEADROOM_RATIO / w.memory_per_worker_mb)
        if fits < 1:
            raise PlanError(
                f"memory_limit_mb: {w.memory_limit_mb} MiB cannot hold one worker of "
                f"{w.memory_per_worker_mb} MiB (with {1 - MEMORY_HEADROOM_RATIO:.0%} headroom)"
            )
        if fits < processes:
            processes = fits
            process_reason = (
                f"{fits}, fewer than the {w.cores} cores: {MEMORY_HEADROOM_RATIO:.0%} of "
                f"{w.memory_limit_mb} MiB holds {fits} workers of {w.memory_per_worker_mb} MiB"
            )
    why("processes", "processes", process_reason)

    ceiling = processes / cpu_s
    why(
        "ceiling_rps",
        "req/s",
        f"{processes} processes / {cpu_s * 1000:.1f} ms of GIL time per request "
        f"({w.service_time_ms:g} ms x {w.cpu_fraction:g}): no thread count goes past this",
    )
    if w.peak_rps is not None and w.peak_rps > ceiling:
        warnings.append(
            f"peak_rps {w.peak_rps:g} is above the ceiling of {ceiling:.1f} req/s: add cores or "
            "reduce the GIL time per request; threads cannot help"
        )

    cpu_threads = max(1, math.ceil(1 / w.cpu_fraction - 1e-9))
    why(
        "cpu_threads",
        "threads",
        f"ceil(1 / cpu_fraction {w.cpu_fraction:g}): threads that together keep the GIL busy; "
        "more would only queue for it (seed 000: 50% => 2)",
    )

    rate = w.peak_rps if w.peak_rps is not None else ceiling
    rate_name = "peak_rps" if w.peak_rps is not None else "the ceiling"
    per_process_rate = rate / processes
    if w.slow_call_ratio > 0:
        busy_mean = per_process_rate * w.slow_call_ratio * slow_s
        slow_threads = max(
            1, poisson_quantile(busy_mean, SLOW_CALL_QUANTILE, cap=MAX_THREADS_PER_PROCESS)
        )
        slow_reason = (
            f"Little's law: {per_process_rate:.1f} req/s per process ({rate_name}) x "
            f"{w.slow_call_ratio:g} slow x {slow_s:g} s = {busy_mean:.2f} threads parked on average; "
            f"p{SLOW_CALL_QUANTILE * 100:g} of Poisson => {slow_threads} (at least 1, so a slow call "
            "never blocks quick requests, seed 001)"
        )
    else:
        slow_threads = 0
        slow_reason = "no slow calls (slow_call_ratio = 0)"
    why("slow_call_threads", "threads", slow_reason)

    threads = cpu_threads + slow_threads
    thread_reason = f"{cpu_threads} for the GIL + {slow_threads} for slow calls"
    if threads > MAX_THREADS_PER_PROCESS:
        warnings.append(
            f"{threads} threads per process wanted; capped at {MAX_THREADS_PER_PROCESS}. "
            "Slow calls dominate: consider asyncio for them"
        )
        threads = MAX_THREADS_PER_PROCESS
        thread_reason += f", capped at {MAX_THREADS_PER_PROCESS}"
    why("threads", "threads per process", thread_reason)

    sockets, shared = _sockets(w, processes)
    why(
        "sockets",
        "sockets",
        "one per worker (uWSGI map-socket / one gunicorn per socket) behind nginx least_conn: a "
        "shared socket lets a busy process take requests an idle one could serve (seed 000, p99 x1.5)",
    )
    # The shared socket is the naive layout's address, used by the gunicorn shared-socket config.
    why("shared_socket", "socket", "the single socket of the shared-socket gunicorn layout")

    wanted_backlog = max(MIN_BACKLOG, math.ceil(per_process_rate * BACKLOG_BURST_S))
    backlog = min(somaxconn, wanted_backlog)
    why(
        "backlog",
        "connections",
        f"max({MIN_BACKLOG}, {BACKLOG_BURST_S:g} s of {per_process_rate:.1f} req/s per socket) "
        f"capped at somaxconn {somaxconn}: the kernel truncates larger values and uWSGI refuses them",
    )
    shared_backlog = min(somaxconn, max(MIN_BACKLOG, math.ceil(rate * BACKLOG_BURST_S)))
    why(
        "shared_backlog",
        "connections",
        f"the same rule for the one shared socket of the naive layout ({rate:.1f} req/s in all)",
    )
    why("somaxconn", "connections", "the kernel's cap on any listen backlog (net.core.somaxconn)")

    nginx_keepalive = w.lb_idle_timeout_s + KEEPALIVE_MARGIN_S
    why(
        "nginx_keepalive_timeout_s",
        "s",
        f"load balancer idle {w.lb_idle_timeout_s} s + {KEEPALIVE_MARGIN_S} s: the LB must close an "
        "idle connection before nginx does, or it may send a request into a closing socket",
    )
    longest_s = service_s + slow_s
    request_timeout = max(MIN_REQUEST_TIMEOUT_S, math.ceil(longest_s * REQUEST_TIMEOUT_FACTOR))
    why(
        "request_timeout_s",
        "s",
        f"max({MIN_REQUEST_TIMEOUT_S}, {REQUEST_TIMEOUT_FACTOR:g} x the longest legitimate request "
        f"service + slow call = {longest_s:g} s): uWSGI harakiri / gunicorn timeout, above slow_call_ms",
    )
    graceful = request_timeout
    why(
        "graceful_timeout_s",
        "s",
        "= request timeout: a reload lets the slowest legitimate request finish",
    )
    read_timeout = request_timeout + READ_TIMEOUT_MARGIN_S
    why(
        "nginx_read_timeout_s",
        "s",
        f"request timeout + {READ_TIMEOUT_MARGIN_S} s: the app server kills a runaway request "
        "first, so nginx never abandons a worker that is still busy",
    )
    upstream_keepalive = w.lb_idle_timeout_s
    why(
        "upstream_keepalive_timeout_s",
        "s",
        "nginx's idle limit on kept-alive connections to gunicorn, below gunicorn's keepalive so "
        "nginx closes first",
    )
    gunicorn_keepalive = nginx_keepalive
    why(
        "gunicorn_keepalive_s",
        "s",
        f"= nginx keep-alive ({nginx_keepalive} s): above nginx's upstream idle limit and the "
        "LB's idle timeout should gunicorn face the LB directly (gunicorn's 2 s default is below both)",
    )

    jitter = math.ceil(MAX_REQUESTS * MAX_REQUESTS_JITTER_RATIO)
    why(
        "max_requests",
        "requests",
        f"recycle a worker every {MAX_REQUESTS} requests to bound slow leaks",
    )
    why(
        "max_requests_jitter",
        "requests",
        f"{MAX_REQUESTS_JITTER_RATIO:.0%} of max_requests: workers restart at different times",
    )

    reload_on_rss: int | None = None
    if w.memory_per_worker_mb is not None and w.memory_limit_mb is not None:
        reload_on_rss = math.floor(w.memory_limit_mb * MEMORY_HEADROOM_RATIO / processes)
        rss_reason = (
            f"{MEMORY_HEADROOM_RATIO:.0%} of {w.memory_limit_mb} MiB / {processes} workers: a "
            "worker over its share restarts before the container is OOM-killed"
        )
    elif w.memory_per_worker_mb is not None:
        reload_on_rss = math.ceil(w.memory_per_worker_mb * RSS_GROWTH_FACTOR)
        rss_reason = f"{RSS_GROWTH_FACTOR:g} x the warm worker size: growth that large is a leak"
    elif w.memory_limit_mb is not None:
        reload_on_rss = math.floor(w.memory_limit_mb * MEMORY_HEADROOM_RATIO / processes)
        rss_reason = (
            f"{MEMORY_HEADROOM_RATIO:.0%} of {w.memory_limit_mb} MiB shared by {processes} workers"
        )
    else:
        rss_reason = "no memory given: no RSS cap (set memory_per_worker_mb or memory_limit_mb)"
    why("reload_on_rss_mb", "MiB", rss_reason)

    nginx_workers = w.cores
    why(
        "nginx_worker_processes",
        "processes",
        f"one per core ({w.cores}); 'auto' would count the host's cores",
    )
    nginx_connections = max(MIN_NGINX_WORKER_CONNECTIONS, 2 * processes * threads)
    why(
        "nginx_worker_connections",
        "connections",
        f"max({MIN_NGINX_WORKER_CONNECTIONS}, 2 x every app thread): each proxied request holds "
        "a client and an upstream connection",
    )
    zone_kb = UPSTREAM_ZONE_BASE_KB + UPSTREAM_ZONE_PER_SERVER_KB * processes
    why(
        "upstream_zone_kb",
        "KiB",
        f"{UPSTREAM_ZONE_BASE_KB} KiB + {UPSTREAM_ZONE_PER_SERVER_KB} KiB per server: shared memory "
        "so every nginx worker sees one least_conn count",
    )
    why(
        "max_fails",
        "errors",
        f"{MAX_FAILS} errors in {FAIL_TIMEOUT_S} s before a socket is skipped: one worker restarting "
        "must not cost 1/N of the capacity for nginx's default 10 s",
    )
    why("fail_timeout_s", "s", "the window for max_fails and how long a failed socket is skipped")
    why(
        "max_body_mb",
        "MiB",
        "client_max_body_size, from the workload (deliberate, not nginx's 1 MiB)",
    )
    why(
        "buffer_size",
        "bytes",
        "uWSGI header buffer: the 4 KiB default turns large cookies into 502s",
    )
    why("limit_request_line", "bytes", "gunicorn's limit on the request line, kept explicit")
    why("limit_request_fields", "headers", "gunicorn's limit on header count, kept explicit")
    why("limit_request_field_size", "bytes", "gunicorn's limit on one header, kept explicit")
    unix = w.socket_dir is not None
    socket_mode = f"{SOCKET_MODE:o}" if unix else None
    socket_umask = f"0o{SOCKET_UMASK:03o}" if unix else None
    owner = (
        f"owned by {w.nginx_user}:{w.nginx_user}"
        if w.nginx_user
        else "nginx must share the server's user or group"
    )
    why(
        "socket_mode",
        "mode",
        f"unix sockets {socket_mode}, {owner}: no other local user may bypass nginx"
        if unix
        else "TCP sockets on bind_host: no file mode",
    )
    why(
        "socket_umask",
        "umask",
        f"gunicorn's umask {socket_umask}: no rights for other users on its sockets (its default "
        "0 leaves them 0777)"
        if unix
        else "TCP sockets: gunicorn's umask is left alone",
    )

    return Plan(
        workload=w,
        processes=processes,
        threads=threads,
        cpu_threads=cpu_threads,
        slow_call_threads=slow_threads,
        ceiling_rps=ceiling,
        sockets=sockets,
        shared_socket=shared,
        backlog=backlog,
        shared_backlog=shared_backlog,
        somaxconn=somaxconn,
        nginx_keepalive_timeout_s=nginx_keepalive,
        request_timeout_s=request_timeout,
        graceful_timeout_s=graceful,
        nginx_read_timeout_s=read_timeout,
        upstream_keepalive_timeout_s=upstream_keepalive,
        gunicorn_keepalive_s=gunicorn_keepalive,
        max_requests=MAX_REQUESTS,
        max_requests_jitter=jitter,
        reload_on_rss_mb=reload_on_rss,
        nginx_worker_processes=nginx_workers,
        nginx_worker_connections=nginx_connections,
        upstream_zone_kb=zone_kb,
        max_fails=MAX_FAILS,
        fail_timeout_s=FAIL_TIMEOUT_S,
        max_body_mb=w.max_body_mb,
        buffer_size=UWSGI_BUFFER_SIZE,
        limit_request_line=LIMIT_REQUEST_LINE,
        limit_request_fields=LIMIT_REQUEST_FIELDS,
        limit_request_field_size=LIMIT_REQUEST_FIELD_SIZE,
        socket_mode=socket_mode,
        socket_umask=socket_umask,
        reasons=_ordered(reasons),
        units=units,
        warnings=tuple(warnings),
    )


_ORDER = [
    "processes", "threads", "cpu_threads", "slow_call_threads", "ceiling_rps", "sockets",
    "shared_socket", "backlog", "shared_backlog", "somaxconn", "nginx_keepalive_timeout_s", "request_timeout_s",
    "graceful_timeout_s", "nginx_read_timeout_s", "upstream_keepalive_timeout_s",
    "gunicorn_keepalive_s", "max_requests", "max_requests_jitter", "reload_on_rss_mb",
    "nginx_worker_processes", "nginx_worker_connections", "upstream_zone_kb", "max_fails",
    "fail_timeout_s", "max_body_mb", "buffer_size", "limit_request_line", "limit_request_fields",
    "limit_request_field_size", "socket_mode", "socket_umask",
]  # fmt: skip


def _ordered(reasons: dict[str, str]) -> dict[str, str]:
    return {name: reasons[name] for name in _ORDER if name in reasons}


def read_somaxconn(path: str = "/proc/sys/net/core/somaxconn") -> int:
    """The kernel's listen-queue cap, or DEFAULT_SOMAXCONN where it cannot be read."""
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return DEFAULT_SOMAXCONN
