"""haproxy.cfg: HAProxy in front of nginx, set up like a cloud load balancer.

The balancer listens on `lb_listen_host:lb_listen_port` and sends every request to the nginx
of the same plan, at nginx's listen address. nginx listening on every interface (0.0.0.0 or
::) has no one address to name: the balancer then reaches it on the loopback address of that
family, which is right for a HAProxy on nginx's host; for one on another host, set
`listen_host` to nginx's own address.
"""

from __future__ import annotations

import ipaddress

from servertune.sizing import Plan
from servertune.sizing.plan import host_port
from servertune.templating import render_template

__all__ = ["render_haproxy"]


def render_haproxy(plan: Plan) -> str:
    """The frontend, the nginx backend and the timeouts of a cloud load balancer."""
    w = plan.workload
    nginx_host = w.listen_host
    if nginx_host.is_unspecified:
        loopback = "::1" if isinstance(nginx_host, ipaddress.IPv6Address) else "127.0.0.1"
        nginx_host = ipaddress.ip_address(loopback)
    return render_template(
        "haproxy.cfg.j2",
        plan=plan,
        w=w,
        listen=host_port(w.lb_listen_host, w.lb_listen_port),
        nginx=host_port(nginx_host, w.listen_port),
    )
