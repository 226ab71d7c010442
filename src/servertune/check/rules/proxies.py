"""nginx in front: enough worker connections for what it proxies."""

from __future__ import annotations

import math
from collections.abc import Iterator

from servertune.check.model import AppServer, Finding, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import as_shown
from servertune.check.rules.workers import ASYNC_WORKERS, judged_cores

_NGINX_WORKER_CONNECTIONS = "https://nginx.org/en/docs/ngx_core_module.html#worker_connections"


def _slots(app: AppServer) -> int | None:
    """Requests the app server runs at once, where that is its processes x threads (None for
    an event loop or green threads, whose concurrency the files do not bound)."""
    if app.interface != "wsgi" or app.kind not in ("gunicorn", "uwsgi"):
        return None
    if app.worker_class is not None and app.worker_class.value in ASYNC_WORKERS:
        return None
    return app.workers.value * app.threads.value


@check_rule(
    "worker-connections-below-proxied-load",
    Severity.warning,
    "nginx's connections cannot hold the requests the app servers behind it run at once",
    f"{_NGINX_WORKER_CONNECTIONS} (the limit counts every connection, those with proxied "
    "servers too); servertune explain (nginx_worker_connections: 2 x every app slot)",
    kind="fault",
)
def worker_connections_below_proxied_load(rule: Rule, c: Context) -> Iterator[Finding]:
    cores, _ = judged_cores(c)
    for nginx in c.nginx:
        limit = nginx.worker_connections
        if limit is None:
            continue
        apps = {id(link.app): link.app for link in c.links if link.nginx is nginx}
        counts = [_slots(a) for a in apps.values()]
        if not counts or any(n is None for n in counts):
            continue
        slots = sum(n for n in counts if n is not None)
        processes = nginx.worker_processes.value if nginx.worker_processes else cores
        if limit.value * processes >= 2 * slots:
            continue
        wanted = math.ceil(2 * slots / processes)
        yield rule.finding(
            limit.at,
            f"worker_connections {as_shown(limit)} x {processes} worker process(es) = "
            f"{limit.value * processes} connections, but the app servers behind it run {slots} "
            f"requests at once, and each proxied request holds two (the client's and the "
            f"upstream's): at full load nginx logs 'worker_connections are not enough' and "
            "drops connections while the app servers still have free slots",
            f"worker_connections {wanted};",
        )
