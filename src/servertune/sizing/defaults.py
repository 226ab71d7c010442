"""Every tuned default of the sizing rules, each with the measurement or source behind it.

The rules, `servertune check` and the docs read these names; none of them restates a number.
"""

from __future__ import annotations

from servertune.machine import DEFAULT_SOMAXCONN

__all__ = [
    "ACCESS_LOG_BUFFER_KB",
    "ACCESS_LOG_FLUSH_S",
    "ADMISSION_FLOOR_LOOP_MS",
    "ADMISSION_MIN_WAIT_MS",
    "ADMISSION_WAIT_SHARE",
    "ASGI_NORMAL_RPS",
    "ASGI_OVERLOAD_FACTOR",
    "ASGI_OVERLOAD_P99",
    "ASGI_OVERLOAD_P99_TARGET",
    "ASGI_SERVER_MS_PER_REQUEST",
    "ASGI_THREADED_PROCESSES_PER_CORE",
    "ASGI_THROUGHPUT_NOISE",
    "BACKLOG_BURST_S",
    "BALANCE_AT_CORES_P99",
    "BALANCE_AT_CORES_RPS",
    "BALANCE_SINGLE_SHARED_P99",
    "CONTAINER_METRIC_K8S_VERSION",
    "DEFAULT_SOMAXCONN",
    "FAIL_TIMEOUT_S",
    "GIL_SATURATION",
    "GRANIAN_SERVER_MS_PER_REQUEST",
    "HAPROXY_POOL_HIGH_FD_RATIO",
    "HAPROXY_POOL_LOW_FD_RATIO",
    "HAPROXY_SOCKETS_PER_CONN",
    "HPA_MAX_TARGET_PERCENT",
    "KEEPALIVE_MARGIN_S",
    "LB_MAX_WEIGHT",
    "LB_PER_TRY_FACTOR",
    "LB_POOLED_REUSE",
    "LB_POOL_FD_HEADROOM",
    "LB_RETRIES",
    "LB_RETRY_ON",
    "LB_REUSE",
    "LIMIT_REQUEST_FIELDS",
    "LIMIT_REQUEST_FIELD_SIZE",
    "LIMIT_REQUEST_LINE",
    "LIVENESS_PERIOD_S",
    "LOCAL_MAX_FAILS",
    "MAX_ADMITTED_PER_PROCESS",
    "MAX_FAILS",
    "MAX_PROCESSES_PER_CORE",
    "MAX_REQUESTS",
    "MAX_REQUESTS_CAP",
    "MAX_REQUESTS_JITTER_RATIO",
    "MAX_THREADS_PER_PROCESS",
    "MEMORY_GROWTH_ALLOWANCE",
    "MEMORY_HEADROOM_RATIO",
    "MIN_BACKLOG",
    "MIN_CPU_MS_PER_REQUEST",
    "MIN_NGINX_WORKER_CONNECTIONS",
    "MIN_REQUEST_TIMEOUT_S",
    "NATIVE_SLEEP_K8S_VERSION",
    "NGINX_CPU_MILLICORES",
    "NGINX_MEMORY_MB",
    "NGINX_MS_PER_REQUEST",
    "PRESTOP_MARGIN_S",
    "PROBE_TIMEOUT_S",
    "READINESS_FAILURE_THRESHOLD",
    "READINESS_PERIOD_S",
    "READ_TIMEOUT_MARGIN_S",
    "RECYCLE_MIN_INTERVAL_S",
    "REQUEST_TIMEOUT_FACTOR",
    "RSS_GROWTH_FACTOR",
    "SLOT_UTILISATION",
    "SLOW_CALL_QUANTILE",
    "SOCKET_MODE",
    "SOCKET_UMASK",
    "TERMINATION_MARGIN_S",
    "THUNDER_LOCK_MIN_PROCESSES",
    "UNIX_PATH_MAX",
    "UPSTREAM_CONNECT_TIMEOUT_S",
    "UPSTREAM_ZONE_BASE_KB",
    "UPSTREAM_ZONE_PER_SERVER_KB",
    "UWSGI_BUFFER_SIZE",
    "WSGI_SERVER_MS_PER_REQUEST",
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
#: The core utilisation the request slots must reach in the finite-source queue (machine
#: repairman, `servertune.sizing.queueing.core_utilisation`): slots whose CPU and waits do not
#: interleave perfectly leave a core idle whenever too many wait at once, so GIL_SATURATION's
#: `cores / cpu_fraction` slots keep the cores busy less than it says (2 cores, cpu_fraction 0.5:
#: 4 slots, U = 0.85; bench balance measured 0.82 of the CPU ceiling). The same 95% as
#: GIL_SATURATION, now reached in the model rather than assumed: bench balance on 2 cores at 8
#: connections measured the 6 slots it gives at 0.92-0.93 of the CPU ceiling against 0.80-0.83
#: for the old 4 (1.12 x the req/s, the model says 1.15 x; p99 1.21-1.29 x on per-worker sockets
#: past the slots: docs/benchmarks.md, "Request slots with headroom"). The ceiling is never 1.0
#: there (nginx and the load generator share the cores), and 0.9 would give 5 slots.
SLOT_UTILISATION = 0.95
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
#: ...but never more often than this at the plan's ceiling rate. A recycling worker answers nothing
#: while its replacement imports the app, and on a per-worker socket no other worker takes its
#: requests: `bench app` on httpbin (about 800 req/s a worker) recycled every 8 s at 5000 and
#: its p99 went from 82-99 ms to 397-1111 ms. A pause of one or two seconds in ten minutes stays
#: well under 1% of the time, so out of the p99.
RECYCLE_MIN_INTERVAL_S = 600
#: ...and never past a billion: ten minutes at 1.7 million req/s a worker, past anything one
#: Python worker serves (`bench app` measured about 800 req/s a worker on httpbin). Without a cap
#: a tiny service time derived a count hundreds of digits long, which uWSGI read as "never".
MAX_REQUESTS_CAP = 1_000_000_000
#: The least GIL (or CPU) time a request can take: one microsecond, a few dozen bytecodes, less
#: than any WSGI or ASGI call through a real server costs. A smaller service time x cpu_fraction
#: is not a measurement, and a ceiling derived from it would be a rate no server reaches.
MIN_CPU_MS_PER_REQUEST = 0.001
#: A remote app host is skipped after 3 errors in its fail_timeout: one lost connection is noise.
MAX_FAILS = 3
FAIL_TIMEOUT_S = 5
#: What `servertune bench balance` measured for one socket per worker behind nginx least_conn
#: against one shared socket (plain or with uWSGI's thunder-lock), 2 cores, requests holding the GIL
#: half the time, at concurrency = cores, over two full runs on a quiet machine with every load
#: starting on an idle app (docs/benchmarks.md, "Every load from an idle app"): the per-worker
#: layout's req/s over the shared layouts' (low, high), and their p99 over its own (low, high).
#: From 2 x cores up the layouts tie: every one spends the same CPU per request (about 50 ms),
#: req/s 0.95-1.03 x and p99 0.99-1.11 x, inside the repeats' spread, so the rule keeps
#: per-worker sockets at any load.
BALANCE_AT_CORES_RPS = (1.04, 1.06)
BALANCE_AT_CORES_P99 = (1.08, 1.21)
#: What `servertune bench balance` measured for the plan's 6 single-threaded processes on one
#: socket against a socket each behind least_conn, 2 cores, 8 connections, in the same run (two
#: quiet runs and one beside other work, docs/benchmarks.md "One socket for single-threaded
#: processes"): the per-worker layout's p99 over the shared one's (low, high), at 0.99-1.01 x its
#: req/s. At 2 and 4 connections the two mostly tie.
BALANCE_SINGLE_SHARED_P99 = (1.08, 1.16)
#: From this many processes on one socket, uWSGI's workers take turns in accept()
#: (`thunder-lock`): uWSGI's own article is about many idle processes waking for one connection,
#: a cost that grows with their number; bench balance's 2 processes measured no gain (3-8 % req/s,
#: within the machine's noise: docs/benchmarks.md, "thunder-lock against per-worker sockets").
THUNDER_LOCK_MIN_PROCESSES = 5
#: A per-worker socket on this machine is never marked down (max_fails=0): a stopped worker's
#: socket refuses in microseconds and nginx passes the request to the next socket, so marking it
#: down saves nothing, while two workers restarting within fail_timeout would leave no live
#: upstream and every request would get a 502 until it expires. bench restart measured exactly
#: that with max_fails=3: a restart and a killed worker 2 s apart failed every request for 3 s.
LOCAL_MAX_FAILS = 0
#: Share of the container memory limit the workers may use; the rest is for the master, nginx
#: and the page cache.
MEMORY_HEADROOM_RATIO = 0.9
#: Without a memory limit, restart a worker whose RSS doubles its warm size (a leak, not load).
RSS_GROWTH_FACTOR = 2.0
#: When memory grows with requests (memory_growth_kb_per_request > 0), each process is budgeted
#: at its warm size plus this share of it, and max_requests recycles it before it grows past
#: that: a quarter of a warm worker is room for caches and fragmentation, while budgeting the
#: doubling RSS_GROWTH_FACTOR allows would halve the processes the memory holds.
MEMORY_GROWTH_ALLOWANCE = 0.25
#: Most single-threaded processes per core when memory lets processes replace threads. bench
#: balance measured 2 per core (requests holding the GIL half the time) with a lower p99 than
#: 2 threads in each of 1 per core; past 4 a core (gunicorn's docs suggest 2 x cores + 1 sync
#: workers) every process is one more import, connection pool and socket for nginx to balance,
#: and threads take the rest of the concurrency.
MAX_PROCESSES_PER_CORE = 4
#: ASGI processes a core gets when a request's work runs in threads besides the loop's
#: (off_loop_fraction above 0, as `measure` writes it): within every request the GIL goes from
#: the loop's thread to another and back, each waiting for the other to let go, and one such
#: process a core leaves the cores short of work. `bench app` on a Django 5.2 async view (20 ms
#: awaited, 2 threads started a request) behind HAProxy, 2 cores, in one run: 4 processes served 1.83-1.91 x what 2 did at
#: 64 and 128 connections (1,250 and 1,274 against 656 and 696 req/s), 3 served 1.37-1.52 x; in
#: another, 6 and 8 served 0.96-1.16 x and 0.88-1.02 x what 4 did: no clear gain past 2 a core
#: (docs/benchmarks.md, "Django's threads: two processes a core").
ASGI_THREADED_PROCESSES_PER_CORE = 2
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

# --- Kubernetes and several hosts (docs/scaling-past-one-host.md) ---
#: The autoscaler's CPU target never goes above this even with many pods: it samples every 15 s
#: and a new pod takes tens of seconds to become ready, so load keeps rising meanwhile.
HPA_MAX_TARGET_PERCENT = 80
#: preStop sleeps this much past the endpoint propagation time, for the slowest proxy to catch up.
PRESTOP_MARGIN_S = 2
#: The first Kubernetes minor version with the HPA's ContainerResource metric GA (KEP-1610:
#: alpha 1.20, beta 1.27, stable 1.30): the autoscaler can then follow the app container's CPU
#: instead of the pod's, which averages in the nginx beside it.
CONTAINER_METRIC_K8S_VERSION = (1, 30)
#: terminationGracePeriodSeconds exceeds preStop + graceful timeout by this much before SIGKILL.
TERMINATION_MARGIN_S = 5
#: Readiness: checked every 5 s, out of the Service after 2 misses (10 s) - failing it removes
#: the pod from the endpoints and kills nothing, so it may be quick.
READINESS_PERIOD_S = 5
READINESS_FAILURE_THRESHOLD = 2
#: How long one probe request may take: it waits behind busy threads like any request.
PROBE_TIMEOUT_S = 5
#: Liveness: checked every 10 s; its failure threshold is derived from the request timeout.
LIVENESS_PERIOD_S = 10
#: The nginx container's CPU and memory: an allowance, not a measurement here (nginx proxies with
#: a fraction of the CPU the Python workers use); check its throttling after deploying.
NGINX_CPU_MILLICORES = 250
NGINX_MEMORY_MB = 128
#: A private network connects in milliseconds: a host that drops SYNs costs this per attempt.
UPSTREAM_CONNECT_TIMEOUT_S = 2
#: How `gen haproxy` keeps its connections to nginx: `http-reuse never`, each client's
#: connection to nginx kept for that client's next request. An nginx reload closes every idle
#: connection at once, and a GET HAProxy sends as one closes is resent (LB_RETRY_ON); under
#: `http-reuse always` HAProxy resent it over other clients' idle connections, closing too, and
#: past `retries` closed the client's connection with no answer (HAProxy 2.6 http_ana.c,
#: `abort_keep_alive`): 3 GETs lost in 1,126,516 through 5 x 150 reloads, a GET in `bench
#: hosts`. Under `never` the resend goes over a new connection, to the new workers: none lost,
#: none resent twice (docs/benchmarks.md, "HAProxy and a reload of the back"). The cost: a
#: client that opens a connection per request costs nginx one too (0.72 x its req/s there).
#: nginx's keep-alive outlives the client's idle timeout (KEEPALIVE_MARGIN_S), so HAProxy closes
#: a client's connection to nginx first, when the client's own ends.
LB_REUSE = "never"
#: How HAProxy shares its connections to app servers: `http-reuse always`, any request over any
#: idle connection. In front of the per-worker ASGI servers uvicorn counts idle connections
#: against --limit-concurrency, so a connection kept per client would hold a slot: the shared
#: pool is bounded by `pool-max-conn` instead. Balancing app hosts, a resend goes to another
#: host (`option redispatch 1`), whose connections a restart of the first does not close.
LB_POOLED_REUSE = "always"
#: How many times HAProxy resends an idempotent request (its `retries`, its own default, now
#: written): each resend after a response timeout costs the back a whole try, so a request stuck
#: past the per-try timeout runs at most 1 + 3 times. One counter counts every cause (HAProxy's
#: `retries` counts L7 retries too): raising it to outlast a reload's closing connections
#: (`retries 10` lost none) would resend a slow GET ten times; LB_REUSE makes one resend enough.
LB_RETRIES = 3
#: HAProxy resends an idempotent request (GET, HEAD, PUT, DELETE, OPTIONS) when the connection to
#: nginx failed or closed before any answer (`retry-on conn-failure empty-response`); POST and
#: PATCH are never resent (`http-request disable-l7-retry`). `bench hosts` measured the need: every
#: nginx reload (a drained host going down and back) closes the old workers' idle connections,
#: and a GET HAProxy sent into one as it closed failed (3 GETs in one full run, 0 POSTs) - the
#: keep-alive race the `retry-on` keyword was made for (HAProxy 2.0, "L7 retries").
LB_RETRY_ON = ("conn-failure", "empty-response", "response-timeout")
#: An idempotent request gets this many times the longest legitimate request (plus the connect
#: timeout of nginx's own retry) before HAProxy gives up on the try and sends it again: one that
#: takes twice the longest the app ever needs is stuck on a dead link, not slow. Envoy's
#: `per_try_timeout` is the same bound; `bench hosts` measured the need (a GET on a cut link
#: waited 13.8 s, until the link came back).
LB_PER_TRY_FACTOR = 2.0
#: HAProxy keeps answered connections to a server in its idle pool only while under
#: `tune.pool-low-fd-ratio` percent of its file descriptors are in use (default 20), and kills
#: idle ones to open new past `tune.pool-high-fd-ratio` (default 25); its `maxsock` is about 2 x
#: the global `maxconn`. In front of the per-worker ASGI servers, 128 clients a server already
#: pass 20 %: every answered connection was then closed and the next request opened one, and
#: uvicorn's CPU per request doubled on accepting and closing (`/io5`, 256 connections: 3,652
#: req/s against 7,302 with the ratios above the plan's bounds; docs/benchmarks.md, "HAProxy's
#: idle pool and its file descriptors"). The plan sets the low ratio to what its own bounds use
#: and the high one this many points above it.
LB_POOL_FD_HEADROOM = 5
#: HAProxy's own `tune.pool-low-fd-ratio` and `tune.pool-high-fd-ratio` (its configuration
#: manual), the floor of the plan's and what `explain` compares it with.
HAPROXY_POOL_LOW_FD_RATIO = 20
HAPROXY_POOL_HIGH_FD_RATIO = 25
#: HAProxy's `maxsock` per global `maxconn`: "each connection needs two sockets" (haproxy.c).
HAPROXY_SOCKETS_PER_CONN = 2
#: HAProxy's largest server `weight` (its configuration manual: "between 0 and 256").
LB_MAX_WEIGHT = 256
#: The requests a second one HAProxy thread forwards, HTTP keep-alive to the client and reused
#: connections to the servers: 1 / 0.033 ms of CPU per request, above the most one thread used
#: in `bench app` (FastAPI fast path, 2 shared cores, 8-128 connections: 0.022-0.031 ms with
#: `nbthread 1`, 0.031-0.046 with HAProxy's default 2 threads; docs/benchmarks.md, "HAProxy's
#: threads"). HAProxy's own figure is 97,000-243,000 req/s on one dedicated core (its
#: intro.txt, "Performance": server-close and end-to-end keep-alive). `nbthread` defaults to one
#: thread per CPU HAProxy may run on, and on the cores the app's processes use a thread the rate
#: does not need only costs them CPU: the plan gives HAProxy the threads its rate needs.
LB_THREAD_RPS = 30_000
#: The first Kubernetes minor version with the preStop `sleep` action GA (KEP-3960: alpha 1.29,
#: beta 1.30, stable 1.34); older versions get an exec of /bin/sleep.
NATIVE_SLEEP_K8S_VERSION = (1, 34)
#: What an ASGI server's own handling of a request costs its event loop, on top of the app's
#: time that `servertune measure` reports in process: reading and parsing the request, the ASGI
#: messages, writing the answer. Measured at saturation, where the capacity is decided:
#: `bench app` on a FastAPI path that measures 0.097-0.105 ms in process (2026-11-26, 2 cores,
#: CPU per request from /proc, so other work on the machine does not count), one uvicorn (h11)
#: per socket used 0.156-0.192 ms of app CPU per request at 8-128 connections, in two full runs
#: (docs/benchmarks.md, "The plan's ASGI capacity against the saturation `bench app`
#: measures"): 0.06-0.095 ms of its own. The earlier 0.15 came from rows at light load, where
#: every request pays a wake-up of the loop alone (0.32-0.35 ms a request at a tenth of the
#: capacity in the same runs), and put the path's capacity at 0.64-0.70 x what the CPU per
#: request at saturation gives. Also used for gunicorn's ASGI workers, which parse HTTP in
#: Python too. Since `measure` takes its CPU per request at concurrency (the sweep's busiest
#: level, with no clock read per request), its in-process figure left out part of what those
#: 0.06-0.095 ms counted: one uvicorn (h11) per socket, wrk at 8-128 connections (2026-11-28,
#: 2 cores, tests/test_cpu_ms.py's apps and FastAPI awaits of 5 and 50 ms and a bare route),
#: used 0.177-0.228 ms a request against 0.061-0.107 ms measured in process: 0.12-0.15 ms of
#: its own.
ASGI_SERVER_MS_PER_REQUEST = 0.14
#: granian's own work per request on its event loop: none measurable. `bench app --quick` on that
#: path, two runs (2026-11-26), at 8-128 connections: granian used 0.09-0.14 ms of app CPU per
#: request, at or below the 0.12-0.16 ms the in-process measure gives the app alone, while one
#: uvicorn per socket used 0.20-0.26 ms: granian parses and writes HTTP in Rust, off the GIL.
#: Held again at saturation in three full runs (2026-11-26, docs/benchmarks.md "The plan's ASGI
#: capacity against the saturation `bench app` measures"): 0.086-0.099 ms a request on a path
#: measuring 0.097-0.105 ms. So the plan gives granian its own capacity, not uvicorn's
#: (one number for both was 0.76 x granian's measured saturation and 1.87 x uvicorn's).
#: Those runs set it against the in-process figure taken one request at a time, which carried
#: the loop's wake-up (0.1-0.16 ms). Since `measure` takes its CPU per request at concurrency
#: (0.063 ms on FastAPI `/io`), granian's Rust work shows: its processes used 0.141-0.175 ms a
#: request at 256-512 connections and the open-loop top rate (default `bench app` run,
#: 2026-11-29, quiet 2 cores, granian-default and both servertune granian rows): 0.08-0.11 ms
#: of its own. Off the GIL, not off the cores: each process is one core's worth of capacity.
GRANIAN_SERVER_MS_PER_REQUEST = 0.09
#: A WSGI server's own CPU per request, beyond the app's: gunicorn's sync worker accepts,
#: parses, writes and closes each connection in Python. Measured with tests/test_cpu_ms.py's
#: WSGI apps, one sync worker under wrk at 2 connections (2026-11-28, quiet 2 cores): 4.667 ms a
#: request against 4.090 measured in process for 4 ms of CPU (0.58 ms of its own), 2.600 against
#: 2.111 for 2 ms + 10 ms asleep (0.49); beside the rest of the suite, 3.89 against 3.11 for 3 ms
#: (0.78). Without it the CPU ceiling of a few-millisecond app was 1.15-1.25 x what the worker
#: serves. uWSGI parses in C and costs less, so for it the ceiling errs low, on the safe side.
WSGI_SERVER_MS_PER_REQUEST = 0.5
#: What nginx in front costs a core per proxied request (same run: 0.03-0.07 ms): it runs on
#: the same cores as the app's loops, so the plan's capacity counts it.
NGINX_MS_PER_REQUEST = 0.05
#: Under overload the p99 of the admitted requests should stay within this many times the
#: unloaded p99 (the excess gets a quick 503 instead of a place in a queue).
ASGI_OVERLOAD_P99_TARGET = 2.0
#: nginx admits what the loops serve at capacity for as long as a request is held plus this
#: share of that time again waiting for its turn (Little's law: capacity x (held + wait)).
#: Once the loops are saturated an admitted request takes held + wait, so the share is what the
#: overload target leaves: 2 x its own time. The earlier 0.5 (1.5 x) with its 25 ms floor
#: admitted 9 a loop on a 3 ms CPU route, and nine requests queued on a loop is 29 ms before the
#: scheduler's tail: admitted p99 at overload 5.5-7.1 x the unloaded one (default `bench app`
#: runs, 2026-11-29, FastAPI /cpu). A capacity the plan underestimates by up to 2 x still
#: admits enough to reach the real one. (The rule before both, exactly Little's law with no
#: wait, shed load the copied layouts served: FastAPI /io at 128 connections served 1037-1786
#: req/s where gunicorn + uvicorn served 2372 req/s at p99 70 ms.)
ADMISSION_WAIT_SHARE = ASGI_OVERLOAD_P99_TARGET - 1.0
#: ...and, for a path that holds its loop less than ADMISSION_FLOOR_LOOP_MS a request, never
#: less than this wait: its own time is microseconds, below the scheduler's noise, and a count
#: that small sheds what every copied layout answers (nginx admitted 2 for a 0.16 ms path). A
#: count below the connections turns each refused one of a closed-loop client into a stream of
#: quick 503s that takes the front's CPU: with 3 ms instead, FastAPI's bare route (0.2 ms of
#: loop time, 2 processes, nginx admitting 34) answered 0.56-0.85 x granian's defaults at 64-256
#: connections while its best row shed 0.16-0.29 million requests; with 25 ms (250 admitted)
#: 1.37-1.72 x, no 503 up to 128 (`bench app --only ... --concurrency 64,128,256`, the two
#: floors one after the other, 2026-11-29).
ADMISSION_MIN_WAIT_MS = 25.0
#: The loop time per request (loop_ms) from which a path waits only its own held time, with no
#: floor: a loop that takes a millisecond or more a request turns every request queued on it into
#: milliseconds of everyone's wait, and the floor's 25 ms alone is then a multiple of the path's
#: unloaded p99. On FastAPI /cpu (3.2 ms of loop time, 2 processes) at 4 x capacity, open loop,
#: interleaved runs (`bench app --only ... --concurrency 32`, 2026-11-29, two repeats each), the
#: nginx rows' admitted p99 / unloaded p99 was 3.5-7.1 x with the 25 ms floor (share 0.5; 9
#: admitted a loop), 2.2-3.7 x with 8 ms (4 a loop), 1.7-2.3 x with 3 ms (2-3 a loop), answering
#: 442-548 req/s at 25 and 3 ms; HAProxy's row 0.65-1.22 x with 3 ms. Between the bare route's
#: 0.2 ms and the CPU route's 3.2 ms, the Django view's 1.1 ms is held 25 ms, so it waits its
#: held time on either side.
ADMISSION_FLOOR_LOOP_MS = 1.0
#: Most requests one ASGI process admits: each holds a connection from nginx, and a process's
#: default open-file limit is 1024 (ulimit -n). A workload that needs more in flight per process
#: needs more processes (or a raised limit and a deliberate choice).
MAX_ADMITTED_PER_PROCESS = 1000
#: Overload in `servertune bench asgi`: open-loop arrivals at this many times the plan's capacity.
ASGI_OVERLOAD_FACTOR = 4.0
#: What `servertune bench asgi` measured per ASGI target (the app server's file; each behind its
#: nginx): p99 of admitted requests under ASGI_OVERLOAD_FACTOR x capacity / unloaded p99, the
#: report's ratios of medians of 6 interleaved repeats (docs/benchmarks.md, `asgi`: 2 shared
#: cores; the run-to-run spread there is wide). The generated files and `servertune explain`
#: quote these to say which layout meets ASGI_OVERLOAD_P99_TARGET.
ASGI_OVERLOAD_P99: dict[str, float] = {
    "uvicorn": 1.19,
    "gunicorn-asgi": 1.45,
    "granian": 1.3,
    "uvicorn-per-worker": 1.45,
    "gunicorn-asgi-per-worker": 1.27,
    "granian-per-worker": 1.31,
}
#: The same run at normal load: each target's req/s / the best default's (`uvicorn --workers
#: (2 x cores) + 1`, one-worker uvicorn or granian).
ASGI_NORMAL_RPS: dict[str, float] = {
    "uvicorn": 0.913,
    "gunicorn-asgi": 0.991,
    "granian": 1.26,
    "uvicorn-per-worker": 1.26,
    "gunicorn-asgi-per-worker": 1.3,
    "granian-per-worker": 1.29,
}
#: Run-to-run spread of req/s on the shared 2 cores: a throughput ratio within it is no clear
#: difference (`servertune bench asgi` judges its normal-load target with the same margin).
ASGI_THROUGHPUT_NOISE = 0.10
