"""The load balancer in front of nginx, as `gen haproxy` writes it: a cloud load balancer's timeouts.

A cloud load balancer (AWS ALB, 60 s by default) has one idle timeout for both sides. HAProxy
spells that as `timeout client` and `timeout http-keep-alive` on the client side; on the nginx
side each client's connection to nginx lives as long as the client's own (`http-reuse never`),
so an nginx reload costs a GET one resend over a new connection, never a lost answer. The keep-alive
chain (rules/timeouts.py) already puts nginx's keep-alive above the balancer's idle timeout;
these numbers make the balancer the one the chain assumes.
"""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import (
    HAPROXY_POOL_HIGH_FD_RATIO,
    HAPROXY_POOL_LOW_FD_RATIO,
    HAPROXY_SOCKETS_PER_CONN,
    LB_MAX_WEIGHT,
    LB_PER_TRY_FACTOR,
    LB_POOL_FD_HEADROOM,
    LB_POOLED_REUSE,
    LB_RETRIES,
    LB_RETRY_ON,
    LB_REUSE,
    LB_THREAD_RPS,
    READ_TIMEOUT_MARGIN_S,
    UPSTREAM_CONNECT_TIMEOUT_S,
)
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import longest_s
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Client idle, idle connections to nginx, connect, response and per-try timeouts, connection
    reuse, retries, the connection limit, the time-bounded queue of an ASGI app."""
    _timeouts(w, d)
    _reuse_and_retries(w, d)
    _per_try_timeout(w, d)
    _limits_and_weights(d)
    _threads(w, d)


def _threads(w: Workload, d: Derivation) -> None:
    """HAProxy's threads: the ones the plan's request rate needs, not one per core it shares."""
    if d.values["upstream_hosts"]:
        d.put(
            "lb_threads",
            None,
            "HAProxy's default (one thread per CPU it may run on): balancing app hosts, it runs "
            "on a machine of its own, whose cores the plan does not know",
        )
        return
    ceiling = d.get_float("ceiling_rps")
    assert isinstance(w.cores, int)
    needed = max(1, math.ceil(ceiling / LB_THREAD_RPS))
    d.put(
        "lb_threads",
        min(w.cores, needed),
        f"ceil(the app's ceiling {ceiling:.0f} req/s / {LB_THREAD_RPS:,} req/s a thread), at most "
        f"the {w.cores} core(s) it shares with the app: HAProxy's `nbthread` (default: one per "
        "CPU); a thread more than the rate needs only takes CPU from the app's processes (bench "
        "app, FastAPI 0.1 ms on 2 cores: 1 thread used 0.022-0.031 ms of CPU per request against "
        "0.031-0.046 for 2; uvicorn behind it served 1.11-1.28 x, granian 0.95-1.10 x)",
    )


def _timeouts(w: Workload, d: Derivation) -> None:
    """The client idle timeout, the idle pool to nginx, the server and connect timeouts."""
    idle = w.lb_idle_timeout_s
    nginx_keepalive = d.get_int("nginx_keepalive_timeout_s")
    d.put(
        "lb_client_idle_s",
        idle,
        f"the load balancer's idle timeout ({idle} s): HAProxy's `timeout client` and `timeout "
        "http-keep-alive`, the one idle limit a cloud load balancer has on the client side",
    )
    d.put(
        "lb_pool_idle_s",
        idle,
        f"= the idle timeout ({idle} s), as HAProxy's `pool-purge-delay` where it pools idle "
        "connections (`http-reuse always`: to app hosts, to the per-worker ASGI servers): "
        "HAProxy has no idle timeout on them; every this many seconds it closes some of the idle ones (5 s by "
        f"default), and the server's keep-alive (nginx's: {nginx_keepalive} s) closes the rest",
    )
    read = d.get_int("nginx_read_timeout_s")
    d.put(
        "lb_server_timeout_s",
        max(idle, read + READ_TIMEOUT_MARGIN_S),
        f"max(the idle timeout {idle} s, nginx read timeout {read} s + {READ_TIMEOUT_MARGIN_S} "
        "s): the balancer waits for nginx's answer longer than nginx waits for the app, so a "
        "slow request ends with nginx's 504 and its log line, not the balancer's",
    )
    d.put(
        "lb_connect_timeout_s",
        UPSTREAM_CONNECT_TIMEOUT_S,
        f"{UPSTREAM_CONNECT_TIMEOUT_S} s to connect to nginx on a private network (ms when it is "
        "up); HAProxy then retries, as it does by default, on a connection that failed before "
        "the request was sent",
    )


def _reuse_and_retries(w: Workload, d: Derivation) -> None:
    """Each client's connection to nginx kept for it; idempotent requests resent, the others
    never."""
    hosts = bool(w.upstream)
    reuse = LB_POOLED_REUSE if hosts else LB_REUSE
    d.put(
        "lb_reuse",
        reuse,
        f"`http-reuse {reuse}`: "
        + (
            "any request over any idle connection to the hosts: a resend goes to another host "
            "(`option redispatch 1`), whose connections a restart of the first does not close"
            if hosts
            else "each client's connection to nginx is kept for that client's next request, "
            "not shared: an nginx reload closes every idle connection at once, and a GET sent "
            "as one closes is resent over a new connection, to the new workers; under "
            "`http-reuse always` the resend went over other clients' idle connections, closing "
            "too, and past `retries` HAProxy closed the client's connection with no answer (3 "
            "GETs in 1,126,516 through 5 x 150 reloads; under `never` none lost, none resent "
            'twice; docs/benchmarks.md, "HAProxy and a reload of the back"). A client that '
            "opens a connection per request costs nginx one too, as POSTs do (0.72 x the req/s "
            "there, on 2 shared cores)"
        ),
    )
    app_reuse = LB_POOLED_REUSE if d.values["admitted_per_process"] is not None else None
    d.put(
        "lb_app_reuse",
        app_reuse,
        f"`http-reuse {LB_POOLED_REUSE}` in front of the per-worker ASGI servers "
        "(haproxy-asgi-per-worker): uvicorn counts idle connections against --limit-concurrency, "
        "so HAProxy shares a pool bounded by `pool-max-conn` instead of keeping one per client"
        if app_reuse is not None
        else "none: HAProxy fronts the per-worker ASGI servers only for an app with admission",
    )
    d.put(
        "lb_retries",
        LB_RETRIES,
        f"`retries {LB_RETRIES}` (HAProxy's default, written): an idempotent request is sent at "
        f"most {LB_RETRIES + 1} times, so a GET stuck past the per-try timeout costs the back "
        f"at most {LB_RETRIES + 1} tries; HAProxy counts every cause in this one number, and "
        "`retries 10` (what outlasts a reload's closing connections under `http-reuse "
        "always`) would resend a slow GET ten times",
    )
    d.put(
        "lb_retry_on",
        LB_RETRY_ON,
        f"`retry-on {' '.join(LB_RETRY_ON)}` for GET, HEAD, PUT, DELETE and OPTIONS only: a "
        "connection nginx closes as the request crosses it (an nginx reload closes its "
        "idle ones) or a try past the per-try timeout is answered by sending the request again, "
        "not by a 502 (bench hosts: without it GETs failed at the reloads of a rolling restart). "
        "Every other method goes to a backend of its own (`..._once`): a new connection "
        "for each request, the long timeout, never resent, since it may have run; on a reused "
        "connection nginx closed at a reload HAProxy closed the client's connection without an "
        "answer (bench hosts: 1 POST in ~300 through a drained rolling restart)",
    )


def _per_try_timeout(w: Workload, d: Derivation) -> None:
    """How long one try of an idempotent request waits before it is sent again."""
    server_s = d.get_int("lb_server_timeout_s")
    connect_s = d.get_int("upstream_connect_timeout_s")
    longest, what = longest_s(w, slow_calls=w.slow_call_ratio > 0)
    d.put(
        "lb_per_try_timeout_s",
        min(server_s, connect_s + math.ceil(LB_PER_TRY_FACTOR * longest)),
        f"min(the server timeout {server_s} s, nginx's connect timeout {connect_s} s + "
        f"{LB_PER_TRY_FACTOR:g} x the longest legitimate request "
        + (
            f"({longest:g} s, no slow calls)"
            if what == "no slow calls"
            else f"({what} = {longest:g} s)"
        )
        + "): HAProxy's `http-request set-timeout server` for idempotent requests, then "
        "`retry-on response-timeout` sends them again; a request stuck on a cut link waits at "
        "most this twice, not until the link returns (bench hosts: 13.8 s without it); POSTs keep "
        "the server timeout and are never resent",
    )


def _limits_and_weights(d: Derivation) -> None:
    """The clients HAProxy takes at once, and each host's weight."""
    processes = d.get_int("nginx_worker_processes")
    connections = d.get_int("nginx_worker_connections")
    d.put(
        "lb_maxconn",
        processes * connections // 2,
        f"nginx's {processes} worker(s) x {connections} connections / 2 (each proxied request "
        "holds a client and an upstream connection): HAProxy's global and frontend `maxconn`, so "
        "it takes no more clients at once than the stack behind it can proxy and leaves the rest "
        "in the kernel's accept queue; HAProxy's own default follows `ulimit -n`, not the plan",
    )
    weights = d.values["upstream_weights"]
    assert isinstance(weights, tuple)
    _queue(d, weights)
    top = max(weights, default=0)
    if top <= LB_MAX_WEIGHT:
        d.put(
            "lb_weights",
            weights,
            "= the hosts' nginx weights (their cores): HAProxy's `weight`, balanced by least "
            "connections per weight"
            if weights
            else "none: HAProxy sends every request to nginx",
        )
    else:
        d.put(
            "lb_weights",
            tuple(max(1, round(weight * LB_MAX_WEIGHT / top)) for weight in weights),
            f"the hosts' cores scaled so the largest is {LB_MAX_WEIGHT}, HAProxy's largest "
            "`weight` (nginx takes them as they are)",
        )


def _queue(d: Derivation, weights: tuple[int, ...]) -> None:
    """For an ASGI app, each server's `maxconn` and HAProxy's `timeout queue`: admission by time.

    nginx open source can only count (`limit_conn`): past the count it answers 503 at once, or
    queues without bound. HAProxy keeps a request past a server's `maxconn` in a queue and
    answers 503 only once it has waited `timeout queue` (its configuration manual: "it is
    considered that the request will almost never be served"), so a burst the loops work
    through in time is answered, and only a request that would come late is shed.
    """
    admitted, per_process = d.values["admission_limit"], d.values["admitted_per_process"]
    if admitted is None or per_process is None:
        reason = "no admission (a WSGI app: a thread per request): no server maxconn, no queue"
        d.put("lb_server_maxconn", None, reason)
        d.put("lb_server_pool", None, reason)
        d.put("lb_pool_low_fd_ratio", None, reason)
        d.put("lb_pool_high_fd_ratio", None, reason)
        d.put("lb_queue_timeout_ms", None, reason)
        return
    assert isinstance(admitted, int)
    assert isinstance(per_process, int)
    if weights:
        d.put(
            "lb_server_maxconn",
            tuple(per_process * weight for weight in weights),
            f"{per_process} admitted requests per process x each host's processes (its weight, "
            "one process per core): each host's loops take what they serve in time",
        )
    else:
        d.put(
            "lb_server_maxconn",
            (admitted,),
            f"= nginx's admission ({admitted}): HAProxy sends nginx no more requests at once than "
            "nginx admits, so nginx's limit_conn trips only for traffic that bypasses HAProxy; "
            "the rest wait in HAProxy's queue",
        )
    serving = d.get_int("in_service_per_process")
    d.put(
        "lb_server_pool",
        serving,
        f"`pool-max-conn {serving}` on each app server line when HAProxy takes nginx's "
        "place (its `maxconn` there is in_service_per_process): in HTTP mode maxconn counts "
        "requests, not connections, and HAProxy keeps "
        "answered connections idle for reuse (unbounded by default); uvicorn counts idle "
        "connections against --limit-concurrency, so the pool keeps no more than a process "
        "serves at once",
    )
    _pool_fd_ratios(d, serving)
    wait_ms = d.get_float("admission_wait_ms")
    d.put(
        "lb_queue_timeout_ms",
        math.ceil(wait_ms),
        f"the plan's admission wait ({wait_ms:.1f} ms, rounded up): a request HAProxy holds "
        "that long without a free slot would answer late, so it gets HAProxy's 503 then; "
        "each backend (idempotent requests; the rest) counts its own maxconn",
    )


def _pool_fd_ratios(d: Derivation, serving: int) -> None:
    """HAProxy's `tune.pool-low-fd-ratio` and `-high-fd-ratio` in front of the per-worker ASGI
    servers: its idle pool kept for as many connections as the plan's own bounds open."""
    clients = d.get_int("lb_maxconn")
    processes = d.get_int("processes")
    used = clients + processes * 2 * serving
    sockets = HAPROXY_SOCKETS_PER_CONN * clients
    low = min(
        100 - LB_POOL_FD_HEADROOM,
        max(HAPROXY_POOL_LOW_FD_RATIO, math.ceil(100 * used / sockets)),
    )
    d.put(
        "lb_pool_low_fd_ratio",
        low,
        f"{clients} clients + {processes} servers x ({serving} requests at once + {serving} idle "
        f"connections) = {used} file descriptors, of HAProxy's about {HAPROXY_SOCKETS_PER_CONN} "
        f"x {clients} (its `maxsock`, from the global maxconn): {low} % (HAProxy's default "
        f"{HAPROXY_POOL_LOW_FD_RATIO} %, about {sockets * HAPROXY_POOL_LOW_FD_RATIO // 100} here, "
        "stops pooling answered connections: each request then opens and closes one to a Python "
        "server, which costs it CPU on every request)",
    )
    d.put(
        "lb_pool_high_fd_ratio",
        low + LB_POOL_FD_HEADROOM,
        f"{low} % + {LB_POOL_FD_HEADROOM} points: past it HAProxy kills idle connections to "
        f"open new ones (its default {HAPROXY_POOL_HIGH_FD_RATIO} %)",
    )
