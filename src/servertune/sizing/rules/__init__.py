"""One rule per concern. Each reads the workload, the machine and the numbers derived before it,
and puts each number it owns with its reason. `RULES` is the order they run in; adding a concern
(say, a cluster) is one module here and one line below.
"""

from __future__ import annotations

from collections.abc import Callable

from servertune.machine import Machine
from servertune.sizing.plan import Derivation
from servertune.sizing.rules import (
    admission,
    asgi_servers,
    backlog,
    balancer,
    cluster,
    hosts,
    limits,
    processes,
    proxy,
    recycling,
    sockets,
    threads,
    timeouts,
)
from servertune.workload import Workload

__all__ = ["RULES", "Rule"]

Rule = Callable[[Workload, Machine, Derivation], None]

RULES: tuple[Rule, ...] = (
    processes.rule,
    threads.rule,
    admission.rule,
    sockets.rule,
    backlog.rule,
    timeouts.rule,
    recycling.rule,
    hosts.rule,
    proxy.rule,
    balancer.rule,
    limits.rule,
    cluster.rule,
    asgi_servers.rule,
)
