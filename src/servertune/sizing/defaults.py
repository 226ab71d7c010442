"""Every tuned default of the sizing rules, each with the measurement or source behind it.

The rules, `servertune check` and the docs read these names; none of them restates a number.
"""

from __future__ import annotations

from servertune.machine import DEFAULT_SOMAXCONN

__all__ = [
    "ACCESS_LOG_BUFFER_KB",
    "ACCESS_LOG_FLUSH_S",
    "ADMISSION_HEADROOM",
    "BACKLOG_BURST_S",
    "DEFAULT_SOMAXCONN",
    "FAIL_TIMEOUT_S",
    "GIL_SATURATION",
    "KEEPALIVE_MARGIN_S",
    "LIMIT_REQUEST_FIELDS",
    "LIMIT_REQUEST_FIELD_SIZE",
    "LIMIT_REQUEST_LINE",
    "MAX_ADMITTED_PER_PROCESS",
    "MAX_FAILS",
    "MAX_REQUESTS",
    "MAX_REQUESTS_JITTER_RATIO",
    "MAX_THREADS_PER_PROCESS",
    "MEMORY_HEADROOM_RATIO",
    "MIN_BACKLOG",
    "MIN_NGINX_WORKER_CONNECTIONS",
    "MIN_REQUEST_TIMEOUT_S",
    "READ_TIMEOUT_MARGIN_S",
    "REQUEST_TIMEOUT_FACTOR",
    "RSS_GROWTH_FACTOR",
    "SLOW_CALL_QUANTILE",
    "SOCKET_MODE",
    "SOCKET_UMASK",
    "UNIX_PATH_MAX",
    "UPSTREAM_ZONE_BASE_KB",
    "UPSTREAM_ZONE_PER_SERVER_KB",
    "UWSGI_BUFFER_SIZE",
]

#: Quantile of busy slow-call threads to provision for. 99.9% leaves one interval in a thousand in
#: which a quick request may wait for a thread (Little's law with Poisson arrivals; bench `hol`).
SLOW_CALL_QUANTILE = 0.999
#: Upper bound on threads per process: beyond this the GIL switch interval and per-thread stacks
#: cost more than they buy; a workload that needs more should use asyncio (servertune advise).
MAX_THREADS_PER_PROCESS = 64
#: The share of the GIL the CPU threads must keep busy. One more thread to win back the last few
#: percent would mostly queue, and a measured cpu_fraction of 0.99 is a request that holds the GIL
#: throughout, not one that needs a second thread: `measure` reports cpu_fraction with a spread of
#: a few hundredths on a quiet machine, so 5% absorbs that noise (bench `balance`: 2 threads
#: saturate a process whose requests hold the GIL half the time).
GIL_SATURATION = 0.95
#: Smallest listen backlog: the Linux default somaxconn before 5.4, and plenty for a loopback hop.
MIN_BACKLOG = 128
#: Seconds of peak arrivals the kernel queue of one socket should absorb while a worker restarts.
BACKLOG_BURST_S = 2.0
#: nginx keep-alive outlives the load balancer's idle timeout by this much, so the LB always
#: closes first and never sends a request on a connection nginx is closing (bench `idle-race`).
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
#: The longest unix socket path Linux accepts (sun_path holds 108 bytes with the final NUL).
UNIX_PATH_MAX = 107
#: An ASGI process admits this many times the requests Little's law puts in flight at its
#: capacity (capacity x time each request is held). Once the loop is saturated every admitted
#: request waits for the others, so an admitted request takes about ADMISSION_HEADROOM x its
#: own time. Measured with `servertune bench asgi` (2 cores, requests awaiting 0-200 ms and
#: blocking 10 ms): at 1.0 the p99 of admitted requests under 4 x overload was 1.7 x the unloaded
#: p99 with uvicorn per worker behind least_conn (median of 3); at 2.0 it reached 2.6-3.3 x in a
#: shorter run, past the 2 x target. The excess gets a quick 503 from nginx instead of a place in
#: an unbounded queue.
ADMISSION_HEADROOM = 1.0
#: Most requests one ASGI process admits: each holds a connection from nginx, and a process's
#: default open-file limit is 1024 (ulimit -n). A workload that needs more in flight per process
#: needs more processes (or a raised limit and a deliberate choice).
MAX_ADMITTED_PER_PROCESS = 1000
