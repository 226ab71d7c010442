"""Where requests wait: in the balancer's queue, in front of a server whose own limit it
respects, not inside an app server that refuses (or stalls) what the balancer sent past it.

HAProxy's per-server `maxconn` keeps the requests past it in HAProxy's queue, where `timeout
queue` bounds how long they wait and leastconn sees them. An app server with a limit of its own
below the connections HAProxy sends it acts first: uvicorn's `--limit-concurrency` answers the
excess at once with 503 (idle keep-alive connections count), granian's `--backpressure` leaves
the excess connections unaccepted, out of HAProxy's sight and its queue timeout.

In HTTP mode `maxconn` counts requests, not connections: the connections HAProxy keeps open
after their answers (its idle pool, or one per client under `http-reuse never`) count against
uvicorn's limit too, so the pool must be bounded to what maxconn leaves.
"""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.chain import BalancerLink
from servertune.check.model import AppServer, Finding, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule

_HAPROXY = "https://docs.haproxy.org/3.0/configuration.html"

#: What an app server does with the connections past its own limit.
_PAST_LIMIT = {
    "uvicorn": "answers the requests past it with 503 at once (idle keep-alive connections "
    "count), so the requests HAProxy should have queued fail instead of waiting",
    "granian": "leaves the connections past it unaccepted, so requests wait inside granian "
    "where HAProxy's `timeout queue` and leastconn cannot see them",
}


#: How many connections an app server serves at once under a limit of N: uvicorn counts the
#: request's own connection (`len(self.connections) >= self.limit_concurrency` when a request
#: arrives, uvicorn/protocols/http), so it answers 503 at its N-th open connection.
_SERVED_UNDER = {"uvicorn": -1, "granian": 0}


@check_rule(
    "balancer-maxconn-over-app-limit",
    Severity.warning,
    "HAProxy sends an app server more connections than the app server's own concurrency limit",
    f"HAProxy's configuration manual, 5.2 `maxconn` ({_HAPROXY}#5.2-maxconn: past it requests "
    f"wait in HAProxy's queue) and 4.2 `timeout queue` ({_HAPROXY}#4.2-timeout%20queue); "
    "uvicorn's --limit-concurrency (https://www.uvicorn.org/settings/#resource-limits; "
    "encode/uvicorn#3029); granian's --backpressure (https://github.com/emmett-framework/granian)",
    kind="fault",
)
def balancer_maxconn_over_app_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    # Every backend's server lines that reach one app server add up: HAProxy counts each
    # backend's maxconn on its own (`track` shares health, not slots).
    by_app: dict[int, tuple[AppServer, list[BalancerLink]]] = {}
    for link in c.balancer_links:
        app = link.app
        if link.balancer.kind != "haproxy":
            continue  # maxconn and its queue are HAProxy's
        if app is None or app.concurrency_limit is None or app.kind not in _PAST_LIMIT:
            continue
        _, links = by_app.setdefault(id(app), (app, []))
        if all(link.server is not other.server for other in links):
            links.append(link)
    for app, links in by_app.values():
        limit = app.concurrency_limit
        assert limit is not None
        name = (
            f"{app.kind}'s {'--backpressure' if app.kind == 'granian' else '--limit-concurrency'}"
        )
        shown = f"{limit.value}" + (" (its default)" if limit.default else "")
        served = limit.value + _SERVED_UNDER[app.kind]
        if served != limit.value:
            shown += f", which serves {served} at once (the request's own connection counts)"
        servers = [link.server for link in links]
        counts_idle = app.kind in _COUNTS_IDLE
        unlimited = [link.server for link in links if link.maxconn is None]
        if unlimited:
            if limit.default:
                continue  # nobody chose either number: nothing to compare a choice against
            rest = served - sum(link.maxconn.value for link in links if link.maxconn is not None)
            each = max(1, rest // len(unlimited))
            yield rule.finding(
                unlimited[0].at,
                f"this server line has no maxconn, so HAProxy sends {app.kind} on "
                f"{servers[0].value} every connection it has, past {name} {shown}: {app.kind} "
                f"{_PAST_LIMIT[app.kind]}",
                f"maxconn {each}{_idle_fix(links, 0) if counts_idle else ''}   (on the server "
                "line: HAProxy queues the rest)",
                (limit.at,),
            )
            continue
        limits = [link.maxconn.value for link in links if link.maxconn is not None]
        total = sum(limits)
        if total > served:
            listed = ", ".join(f"{m}" for m in limits)
            several = f" ({listed} on {len(links)} server lines)" if len(links) > 1 else ""
            share = max(1, served // len(links))
            pool = _idle_fix(links, 0) if counts_idle else ""
            yield rule.finding(
                servers[0].at,
                f"HAProxy's maxconn {total}{several} to {app.kind} on {servers[0].value} is above "
                f"{name} {shown}: {app.kind} {_PAST_LIMIT[app.kind]}",
                f"maxconn {share}{pool} on each server line to it"
                if len(links) > 1
                else f"maxconn {served}{pool}",
                (*(s.at for s in servers[1:]), limit.at),
            )
            continue
        if counts_idle:
            yield from _idle_past_limit(rule, app, links, f"{name} {shown}", served)


def _idle_past_limit(
    rule: Rule, app: AppServer, links: list[BalancerLink], limit_said: str, served: int
) -> Iterator[Finding]:
    """A finding where maxconn is within what the app serves but the connections HAProxy keeps
    open after their answers may take it past (or nothing bounds them)."""
    held = [_held_open(link) for link in links]
    bounds = [bound for bound, _ in held]
    if all(b is not None for b in bounds) and sum(b or 0 for b in bounds) <= served:
        return
    total = sum(link.maxconn.value for link in links if link.maxconn is not None)
    why = next((reason for bound, reason in held if bound is None), held[0][1])
    at_most = (
        "no bound" if any(b is None for b in bounds) else f"up to {sum(b or 0 for b in bounds)}"
    )
    spare = max(0, (served - total) // len(links))
    servers = [link.server for link in links]
    assert app.concurrency_limit is not None
    yield rule.finding(
        servers[0].at,
        f"HAProxy's maxconn {total} to {app.kind} on {servers[0].value} counts requests, not "
        f"connections (HTTP mode): {why}, so it may hold {at_most} connections open there "
        f"against {limit_said}; {app.kind} {_PAST_LIMIT[app.kind]}",
        _idle_fix(links, spare).strip()
        + ("   (on each server line to it)" if len(links) > 1 else ""),
        (*(s.at for s in servers[1:]), app.concurrency_limit.at),
    )


#: The app servers that count idle connections against their limit: uvicorn counts every
#: open connection (`len(self.connections)`), so HAProxy's idle ones use up its limit too.
_COUNTS_IDLE = frozenset({"uvicorn"})


def _held_open(link: BalancerLink) -> tuple[int | None, str]:
    """The most connections HAProxy may hold open to an app server through one server line
    (None: no bound), and why. In HTTP mode `maxconn` limits concurrent requests, not
    connections (section 5.2), and an answered request's connection stays open: kept for the
    same client (`http-reuse never`), or in the server's idle pool, up to `pool-max-conn`."""
    assert link.maxconn is not None
    maxconn, keeps = link.maxconn.value, link.balancer.keeps
    if keeps == "closed":
        return maxconn, "HAProxy closes each connection once its request is answered"
    if keeps == "session":
        return None, (
            "`http-reuse never` keeps each answered request's connection open for the same "
            "client's next request, for as long as the client keeps its own"
        )
    if link.pool is not None:
        return maxconn + link.pool.value, (
            f"its idle pool keeps up to pool-max-conn {link.pool.value} answered connections "
            "open beside the maxconn in use"
        )
    if keeps == "always":
        return 2 * maxconn, (
            "`http-reuse always` opens a connection only when no idle one is left, but a "
            "queued request may take a slot before the connection that freed it is back in the "
            "idle pool (pool-max-conn unset)"
        )
    return None, (
        f"`http-reuse {keeps}` sends each client's first request over a new connection while "
        "answered ones wait in the idle pool, which pool-max-conn (unset) does not bound"
    )


def _idle_fix(links: list[BalancerLink], spare: int) -> str:
    """What bounds the idle connections HAProxy keeps beside maxconn to `spare` a line."""
    keeps = {link.balancer.keeps for link in links}
    if keeps == {"closed"}:
        return ""
    fix = f" pool-max-conn {spare}" if keeps - {"closed", "session"} else ""
    if "session" in keeps:
        fix += " (and `option http-server-close` in the http-reuse never backend)"
    return fix
