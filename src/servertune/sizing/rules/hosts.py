"""Several app hosts behind one nginx: weights from their cores, failure handling, retries.

With `upstream` unset nginx balances this machine's per-worker sockets (rules/proxy.py); with it
set it balances whole hosts, each running its own app server. What changes is the failure model:
a host can vanish mid-request, so which requests nginx may send again to the next host matters.
"""

from __future__ import annotations

import re

from servertune.machine import Machine
from servertune.sizing.defaults import MAX_FAILS, UPSTREAM_CONNECT_TIMEOUT_S
from servertune.sizing.plan import Derivation
from servertune.workload import UPSTREAM_PATTERN, Workload


def parse_upstream(item: str) -> tuple[str, int | None]:
    """`10.0.0.2:8001=4` -> ("10.0.0.2:8001", 4); the weight is None when not given."""
    match = re.match(UPSTREAM_PATTERN, item)
    assert match is not None, item  # the Workload model validated it
    weight = match["weight"]
    return f"{match['host']}:{match['port']}", None if weight is None else int(weight)


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """Hosts and weights, connect timeout, max_fails / fail_timeout, proxy_next_upstream bounds."""
    assert isinstance(w.cores, int)
    parsed = [parse_upstream(item) for item in w.upstream]
    d.put(
        "upstream_hosts",
        tuple(address for address, _ in parsed),
        "the app hosts from `upstream`, balanced by least_conn instead of this machine's sockets"
        if parsed
        else "none: nginx balances this machine's per-worker sockets",
    )
    d.put(
        "upstream_weights",
        tuple(weight if weight is not None else w.cores for _, weight in parsed),
        "each host's cores (= its processes, one per core), or `cores` when not given: weighted "
        "least_conn sends a 4-core host twice the connections of a 2-core one"
        if parsed
        else "none: every per-worker socket is one process, equal weights",
    )
    connect = d.put(
        "upstream_connect_timeout_s",
        UPSTREAM_CONNECT_TIMEOUT_S,
        f"{UPSTREAM_CONNECT_TIMEOUT_S} s to connect to a host on a private network (ms when it is "
        "up): a host that drops packets costs this per try, not nginx's default 60 s",
    )
    fails = d.put(
        "host_max_fails",
        MAX_FAILS,
        f"{MAX_FAILS} failed connections or timeouts before a host is skipped: one lost "
        "connection is noise, three in a row is a host going away",
    )
    read_s = d.get_int("nginx_read_timeout_s")
    d.put(
        "host_fail_timeout_s",
        max(fails * connect, d.get_int("graceful_timeout_s")),
        f"max({fails} x the {connect} s connect timeout, the graceful timeout "
        f"{d.get_int('graceful_timeout_s')} s): long enough to count {fails} timeouts against a "
        "silent host, and to skip a host for as long as a graceful restart of it may take",
    )
    hosts = max(1, len(parsed))
    d.put(
        "next_upstream_tries",
        min(hosts, fails),
        f"min(hosts {hosts}, max_fails {fails}): a GET whose host fails (connection refused, reset "
        "before an answer, timeout) is sent to the next host, never twice to one; POST, PATCH "
        "and LOCK are not retried once sent (no `non_idempotent`)",
    )
    d.put(
        "next_upstream_timeout_s",
        read_s,
        f"= nginx read timeout ({read_s} s): retries never stretch a request past what one try "
        "may take",
    )
