"""Timeouts ordered across layers: LB idle < nginx keep-alive; slow call < kill < nginx read."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import (
    KEEPALIVE_MARGIN_S,
    MIN_REQUEST_TIMEOUT_S,
    READ_TIMEOUT_MARGIN_S,
    REQUEST_TIMEOUT_FACTOR,
)
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import longest_s
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Keep-alive chain (whoever sends closes last) and request-time chain (inner kills first)."""
    nginx_keepalive = d.put(
        "nginx_keepalive_timeout_s",
        w.lb_idle_timeout_s + KEEPALIVE_MARGIN_S,
        f"load balancer idle {w.lb_idle_timeout_s} s + {KEEPALIVE_MARGIN_S} s: the LB must close an "
        "idle connection before nginx does, or it may send a request into a closing socket "
        "(bench idle-race)",
    )
    longest, what = longest_s(w)
    request_timeout = d.put(
        "request_timeout_s",
        max(MIN_REQUEST_TIMEOUT_S, math.ceil(longest * REQUEST_TIMEOUT_FACTOR)),
        f"max({MIN_REQUEST_TIMEOUT_S}, {REQUEST_TIMEOUT_FACTOR:g} x the longest legitimate request "
        f"{what} = {longest:g} s): uWSGI harakiri / gunicorn timeout, above "
        + ("the tail" if w.request_tail_ms is not None else "slow_call_ms"),
    )
    d.put(
        "graceful_timeout_s",
        request_timeout,
        "= request timeout: a reload lets the slowest legitimate request finish",
    )
    d.put(
        "nginx_read_timeout_s",
        request_timeout + READ_TIMEOUT_MARGIN_S,
        f"request timeout + {READ_TIMEOUT_MARGIN_S} s: the app server kills a runaway request "
        "first, so nginx never abandons a worker that is still busy"
        + (
            "; with k8s_layout 'gateway' the HTTPRoute's timeouts.request and "
            "timeouts.backendRequest both (the route sets no retries, so the one backend "
            "attempt is the whole request, and backendRequest <= request as the spec requires)"
            if w.k8s_layout == "gateway"
            else ""
        ),
    )
    d.put(
        "upstream_keepalive_timeout_s",
        w.lb_idle_timeout_s,
        "nginx's idle limit on kept-alive connections to gunicorn, below gunicorn's keepalive so "
        "nginx closes first",
    )
    if w.k8s_layout != "sidecar":
        ingress = w.ingress_keepalive_s + KEEPALIVE_MARGIN_S
        d.put(
            "gunicorn_keepalive_s",
            max(nginx_keepalive, ingress),
            f"max(nginx keep-alive {nginx_keepalive} s, ingress keep-alive "
            f"{w.ingress_keepalive_s} s + {KEEPALIVE_MARGIN_S} s): with k8s_layout '{w.k8s_layout}' the "
            + ("ingress controller's" if w.k8s_layout == "ingress" else "Gateway's")
            + " kept-alive connections reach gunicorn directly, so gunicorn "
            "must hold an idle one longer than the proxy does (gunicorn's 2 s default "
            "would close under it: bench idle-race)",
        )
        return
    d.put(
        "gunicorn_keepalive_s",
        nginx_keepalive,
        f"= nginx keep-alive ({nginx_keepalive} s): above nginx's upstream idle limit and the "
        "LB's idle timeout should gunicorn face the LB directly (gunicorn's 2 s default is below both)",
    )
