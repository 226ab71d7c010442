"""The nginx in front: its processes and connections, the upstream pool, failure handling, logs."""

from __future__ import annotations

from servertune.machine import Machine
from servertune.sizing.defaults import (
    ACCESS_LOG_BUFFER_KB,
    ACCESS_LOG_FLUSH_S,
    FAIL_TIMEOUT_S,
    LOCAL_MAX_FAILS,
    MIN_NGINX_WORKER_CONNECTIONS,
    UPSTREAM_ZONE_BASE_KB,
    UPSTREAM_ZONE_PER_SERVER_KB,
)
from servertune.sizing.plan import Derivation
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """nginx workers, connections, zone, keep-alive pool, max_fails, body size, trust, log batching."""
    slots, pool_reason = _upstream_slots(d)
    _connections(w, d, slots, pool_reason)
    _failures_and_body(w, d)
    _log_batching(d)
    _trusted_proxy(w, d)


def _upstream_slots(d: Derivation) -> tuple[int, str]:
    """Every app slot behind nginx (threads, or admitted requests for ASGI), and why the
    keep-alive pool is that size."""
    hosts = d.values["upstream_weights"]
    # Processes behind nginx: this machine's, or every upstream host's (weight = its cores =
    # its processes, one per core).
    processes = sum(hosts) if hosts else d.get_int("processes")
    where = (
        f"{len(hosts)} upstream hosts' {processes} processes (their weights)"
        if hosts
        else f"{processes} processes"
    )
    threads = d.get_int("threads")
    slots = processes * threads
    pool_reason = (
        f"{where} x {threads} threads: gunicorn speaks HTTP/1.1 to nginx, so each app thread "
        "may keep one idle connection instead of a new one per request"
    )
    admitted = d.values["admission_limit"]
    if admitted is not None:  # an ASGI app (a baseline may force no admission: then as WSGI)
        # An event loop serves every admitted request at once: each may hold an upstream connection.
        per_process = d.values["admitted_per_process"]
        if hosts and per_process is not None:
            slots = processes * per_process
            counted = f"{where} x {per_process} admitted requests per process"
        else:
            slots, counted = admitted, f"the {admitted} admitted requests"
        pool_reason = (
            f"= {counted}: the ASGI server speaks HTTP/1.1 to nginx, so each admitted request "
            "may reuse an idle connection instead of opening one"
        )
    return slots, pool_reason


def _connections(w: Workload, d: Derivation, slots: int, pool_reason: str) -> None:
    """nginx's workers and connections, the shared upstream zone, the keep-alive pool."""
    assert isinstance(w.cores, int)
    hosts = d.values["upstream_weights"]
    d.put(
        "nginx_worker_processes",
        w.cores,
        f"one per core ({w.cores}); 'auto' would count the host's cores",
    )
    d.put(
        "nginx_worker_connections",
        max(MIN_NGINX_WORKER_CONNECTIONS, 2 * slots),
        f"max({MIN_NGINX_WORKER_CONNECTIONS}, 2 x every app slot ({slots})): each proxied request holds "
        "a client and an upstream connection",
    )
    d.put(
        "upstream_zone_kb",
        UPSTREAM_ZONE_BASE_KB + UPSTREAM_ZONE_PER_SERVER_KB * len(hosts or d.values["sockets"]),
        f"{UPSTREAM_ZONE_BASE_KB} KiB + {UPSTREAM_ZONE_PER_SERVER_KB} KiB per server: shared memory "
        "so every nginx worker sees one least_conn count",
    )
    d.put(
        "upstream_keepalive_connections",
        slots,
        pool_reason,
    )


def _failures_and_body(w: Workload, d: Derivation) -> None:
    """How nginx treats a failing socket, and the largest request body it takes."""
    d.put(
        "max_fails",
        LOCAL_MAX_FAILS,
        "never mark a local socket down: a stopped worker refuses at once and nginx tries the next "
        "socket, while sockets marked down together leave no live upstream (bench restart)",
    )
    d.put(
        "fail_timeout_s",
        FAIL_TIMEOUT_S,
        "unused while max_fails is 0; kept explicit (nginx's default is 10 s)",
    )
    d.put(
        "max_body_mb",
        w.max_body_mb,
        "client_max_body_size, from the workload (deliberate, not nginx's 1 MiB)",
    )


def _log_batching(d: Derivation) -> None:
    """The access log written in batches."""
    d.put(
        "access_log_buffer_kb",
        ACCESS_LOG_BUFFER_KB,
        "nginx writes the access log in batches: one write per request is a syscall on the hot path",
    )
    d.put(
        "access_log_flush_s",
        ACCESS_LOG_FLUSH_S,
        "a batch is written at least this often: a second of log delay costs nothing",
    )


def _trusted_proxy(w: Workload, d: Derivation) -> None:
    """Whose X-Forwarded-* headers gunicorn believes: the proxy in front, never everyone."""
    host = w.bind_host
    trusted = "127.0.0.1,::1" if host.is_loopback or w.socket_dir else str(host)
    d.put(
        "forwarded_allow_ips",
        trusted,
        "gunicorn trusts X-Forwarded-* only from the nginx in front (on loopback or a unix "
        "socket: 127.0.0.1 and ::1), never from everyone ('*')"
        + (
            f"; with k8s_layout '{w.k8s_layout}' the proxy is the "
            + ("ingress controller" if w.k8s_layout == "ingress" else "Gateway's data plane")
            + ", whose pod addresses are not known here: replace this with its pods' CIDR in "
            "the ConfigMap, or gunicorn ignores the scheme and client address it forwards"
            if w.k8s_layout != "sidecar"
            else ""
        ),
    )
