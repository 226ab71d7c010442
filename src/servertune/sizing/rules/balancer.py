"""The load balancer in front of nginx, as `gen haproxy` writes it: a cloud load balancer's timeouts.

A cloud load balancer (AWS ALB, 60 s by default) has one idle timeout for both sides and reuses
its connections to the targets for every client. HAProxy spells that as `timeout client` and
`timeout http-keep-alive` on the client side, `http-reuse` and `pool-purge-delay` on the nginx
side. The keep-alive chain (rules/timeouts.py) already puts nginx's keep-alive above the
balancer's idle timeout; these numbers make the balancer the one the chain assumes.
"""

from __future__ import annotations

from servertune.machine import Machine
from servertune.sizing.defaults import (
    LB_RETRY_ON,
    LB_REUSE,
    READ_TIMEOUT_MARGIN_S,
    UPSTREAM_CONNECT_TIMEOUT_S,
)
from servertune.sizing.plan import Derivation
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Client idle, idle connections to nginx, connect and response timeouts, connection reuse."""
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
        f"= the idle timeout ({idle} s), as HAProxy's `pool-purge-delay`: HAProxy has no idle "
        "timeout on its connections to nginx; every this many seconds it closes some of the idle "
        f"ones (5 s by default), and nginx's keep-alive ({nginx_keepalive} s) closes the rest",
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
    d.put(
        "lb_reuse",
        LB_REUSE,
        f"`http-reuse {LB_REUSE}`: any request may go over any idle connection to nginx, as a "
        "cloud load balancer does; nginx's keep-alive is above the idle timeout, so nginx closes "
        "only connections the balancer has left unused past it",
    )
    d.put(
        "lb_retry_on",
        LB_RETRY_ON,
        f"`retry-on {' '.join(LB_RETRY_ON)}` for GET, HEAD, PUT, DELETE and OPTIONS only (POST and PATCH: "
        "`disable-l7-retry`): a reused connection nginx closes as the request crosses it (an "
        "nginx reload closes its idle ones) is answered by resending the request, not by a 502 "
        "(bench hosts: without it GETs failed at the reloads of a rolling restart); a POST may have run",
    )
