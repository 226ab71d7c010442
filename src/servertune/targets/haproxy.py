"""haproxy.cfg: HAProxy set up like a cloud load balancer, in front of nginx, of the app hosts,
or (an ASGI app) of the per-worker app servers themselves.

Without `upstream` the balancer listens on `lb_listen_host:lb_listen_port` and sends every
request to the nginx of the same plan, at nginx's listen address. nginx listening on every
interface (0.0.0.0 or ::) has no one address to name: the balancer then reaches it on the
loopback address of that family, which is right for a HAProxy on nginx's host; for one on
another host, set `listen_host` to nginx's own address.

With `upstream` it balances the app hosts named there itself, weighted by their cores, as
`gen nginx-gunicorn --upstream` does: HAProxy in nginx's place.

With `front="app"` (`gen haproxy-asgi-per-worker`) it takes nginx's place on this host, on
nginx's listen address, in front of the per-worker ASGI servers (`gen uvicorn-per-worker`,
`granian-per-worker`, `gunicorn-asgi-per-worker`): least connections, each server's `maxconn` =
the requests one process admits, and past them HAProxy's queue bounded by the plan's wait (with
`upstream`, the app servers are the hosts': the file is `gen haproxy --upstream`'s). One
hop where nginx's `limit_conn` can only count: measured in `bench app` (docs/benchmarks.md,
"HAProxy in front of the per-worker ASGI servers"), a 503 then goes out only once a request has
waited its budget, instead of at once to a client that resends at once.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from servertune.sizing import Plan
from servertune.sizing.plan import PlanError, host_port
from servertune.templating import render_template

__all__ = ["render_haproxy"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: What HAProxy forwards to: nginx (or the app hosts named by `upstream`), or the app servers.
Front = Literal["nginx", "app"]


@dataclass(frozen=True)
class _Server:
    name: str
    address: str
    weight: int
    #: The requests it takes at once (an ASGI app's admission); the rest wait in HAProxy's queue.
    maxconn: int | None = None


def render_haproxy(plan: Plan, front: Front = "nginx") -> str:
    """The frontend, the backends (idempotent requests; the rest) and the timeouts."""
    if front == "app":
        return _render_app_front(plan)
    w = plan.workload
    hosts = bool(plan.upstream_hosts)
    if hosts:
        servers = [
            _Server(f"host{index}", address, weight)
            for index, (address, weight) in enumerate(
                zip(plan.upstream_hosts, plan.lb_weights, strict=True), start=1
            )
        ]
    else:
        nginx_host = w.listen_host
        if nginx_host.is_unspecified:
            loopback = "::1" if isinstance(nginx_host, ipaddress.IPv6Address) else "127.0.0.1"
            nginx_host = ipaddress.ip_address(loopback)
        servers = [_Server("nginx", host_port(nginx_host, w.listen_port), 1)]
    if plan.lb_server_maxconn is not None:
        servers = [
            _Server(server.name, server.address, server.weight, maxconn)
            for server, maxconn in zip(servers, plan.lb_server_maxconn, strict=True)
        ]
    _refuse_own_port(plan)
    return render_template(
        "haproxy.cfg.j2",
        plan=plan,
        w=w,
        hosts=hosts,
        backend="servertune_hosts" if hosts else "servertune_nginx",
        listen=host_port(w.lb_listen_host, w.lb_listen_port),
        servers=servers,
        direct=False,
    )


def _render_app_front(plan: Plan) -> str:
    """HAProxy in nginx's place in front of the per-worker ASGI servers (one per socket)."""
    w = plan.workload
    if plan.upstream_hosts:  # the app servers are on the hosts: HAProxy balances those
        return render_haproxy(plan)
    if plan.in_service_per_process is None or plan.lb_queue_timeout_ms is None:
        raise PlanError(
            "admission_limit: haproxy-asgi-per-worker queues past each server's admission, and "
            "this plan admits without a limit"
        )
    servers = [
        _Server(f"worker{index}", socket.address, 1, plan.in_service_per_process)
        for index, socket in enumerate(plan.sockets)
    ]
    return render_template(
        "haproxy.cfg.j2",
        plan=plan,
        w=w,
        hosts=True,
        backend="servertune_workers",
        listen=host_port(w.listen_host, w.listen_port),
        servers=servers,
        direct=True,
    )


def _covers(lb: IPAddress, host: IPAddress, *, here: bool) -> bool:
    """Whether HAProxy listening on `lb` would take connections meant for `host` (`here`: the
    host is known to be this machine)."""
    return lb == host or host.is_unspecified or (lb.is_unspecified and here)


def _refuse_own_port(plan: Plan) -> None:
    """PlanError when HAProxy's listen address is one it would forward to, or an app socket's."""
    w = plan.workload
    lb, port = w.lb_listen_host, w.lb_listen_port
    nginx = w.listen_host
    if (
        not plan.upstream_hosts
        and port == w.listen_port
        and _covers(lb, nginx, here=nginx.is_loopback or nginx.is_unspecified)
    ):
        raise PlanError(
            f"lb_listen_port: {port} is nginx's listen port too ({host_port(nginx, port)}): "
            "HAProxy would forward every request to itself; use another port"
        )
    app_ports = [
        (socket.host, socket.port)
        for socket in (*plan.sockets, plan.shared_socket)
        if socket.kind == "tcp" and socket.host is not None and socket.port is not None
    ]
    for host, app_port in app_ports:  # the app server's sockets are on this machine
        if app_port == port and _covers(lb, host, here=True):
            ports = sorted({p for _, p in app_ports})
            raise PlanError(
                f"lb_listen_port: {port} is an app server socket's port ({host_port(host, port)}); "
                f"use a port outside {ports[0]}-{ports[-1]}"
            )
    for address in plan.upstream_hosts:
        name, _, upstream_port = address.rpartition(":")
        try:
            upstream_host = ipaddress.ip_address(name.strip("[]"))
        except ValueError:  # a name: only localhost is known to be this machine
            taken = name == "localhost"
        else:
            taken = _covers(lb, upstream_host, here=upstream_host.is_loopback)
        if int(upstream_port) == port and taken:
            raise PlanError(
                f"lb_listen_port: {port} is the port of upstream host {address} on this machine: "
                "HAProxy would forward every request to itself; use another port"
            )
