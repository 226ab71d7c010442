"""Backlog: seconds of peak arrivals the kernel queue absorbs, within somaxconn."""

from __future__ import annotations

import math

from servertune.machine import Machine
from servertune.sizing.defaults import BACKLOG_BURST_S, MIN_BACKLOG
from servertune.sizing.plan import Derivation
from servertune.sizing.queueing import arrival_rate
from servertune.workload import Workload


def listen_backlog(rate_per_s: float, somaxconn: int) -> int:
    """max(MIN_BACKLOG, BACKLOG_BURST_S of arrivals), capped at the kernel's somaxconn."""
    return min(somaxconn, max(MIN_BACKLOG, math.ceil(rate_per_s * BACKLOG_BURST_S)))


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """One backlog per worker socket, one for the shared socket, and the cap they share."""
    somaxconn = d.put(
        "somaxconn",
        m.somaxconn,
        "the kernel's cap on any listen backlog (net.core.somaxconn on this machine)",
    )
    rate, _ = arrival_rate(w, d.get_float("ceiling_rps"))
    per_socket = rate / d.get_int("processes")
    d.put(
        "backlog",
        listen_backlog(per_socket, somaxconn),
        f"max({MIN_BACKLOG}, {BACKLOG_BURST_S:g} s of {per_socket:.1f} req/s per socket) "
        f"capped at somaxconn {somaxconn}: the kernel truncates larger values and uWSGI refuses them",
    )
    d.put(
        "shared_backlog",
        listen_backlog(rate, somaxconn),
        f"the same rule for the one shared socket of the naive layout ({rate:.1f} req/s in all)",
    )
