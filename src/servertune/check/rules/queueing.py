"""Where requests wait: in the balancer's queue, in front of a server whose own limit it
respects, not inside an app server that refuses (or stalls) what the balancer sent past it.

HAProxy's per-server `maxconn` keeps the requests past it in HAProxy's queue, where `timeout
queue` bounds how long they wait and leastconn sees them. An app server with a limit of its own
below the connections HAProxy sends it acts first: uvicorn's `--limit-concurrency` answers the
excess at once with 503 (idle keep-alive connections count), granian's `--backpressure` leaves
the excess connections unaccepted, out of HAProxy's sight and its queue timeout.
"""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.model import AppServer, Finding, Setting, Severity
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
)
def balancer_maxconn_over_app_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    # Every backend's server lines that reach one app server add up: HAProxy counts each
    # backend's maxconn on its own (`track` shares health, not slots).
    by_app: dict[int, tuple[AppServer, list[Setting[str]], list[Setting[int] | None]]] = {}
    for link in c.balancer_links:
        app = link.app
        if app is None or app.concurrency_limit is None or app.kind not in _PAST_LIMIT:
            continue
        _, servers, limits = by_app.setdefault(id(app), (app, [], []))
        if link.server not in servers:
            servers.append(link.server)
            limits.append(link.maxconn)
    for app, servers, limits in by_app.values():
        limit = app.concurrency_limit
        assert limit is not None
        name = (
            f"{app.kind}'s {'--backpressure' if app.kind == 'granian' else '--limit-concurrency'}"
        )
        shown = f"{limit.value}" + (" (its default)" if limit.default else "")
        served = limit.value + _SERVED_UNDER[app.kind]
        if served != limit.value:
            shown += f", which serves {served} at once (the request's own connection counts)"
        unlimited = [s for s, m in zip(servers, limits, strict=True) if m is None]
        if unlimited:
            if limit.default:
                continue  # nobody chose either number: nothing to compare a choice against
            rest = served - sum(m.value for m in limits if m is not None)
            yield rule.finding(
                unlimited[0].at,
                f"this server line has no maxconn, so HAProxy sends {app.kind} on "
                f"{servers[0].value} every connection it has, past {name} {shown}: {app.kind} "
                f"{_PAST_LIMIT[app.kind]}",
                f"maxconn {max(1, rest // len(unlimited))}   (on the server line: HAProxy "
                "queues the rest)",
                (limit.at,),
            )
            continue
        total = sum(m.value for m in limits if m is not None)
        if total > served:
            each = ", ".join(f"{m.value}" for m in limits if m is not None)
            several = f" ({each} on {len(limits)} server lines)" if len(limits) > 1 else ""
            yield rule.finding(
                servers[0].at,
                f"HAProxy's maxconn {total}{several} to {app.kind} on {servers[0].value} is above "
                f"{name} {shown}: {app.kind} {_PAST_LIMIT[app.kind]}",
                f"maxconn {max(1, served // len(limits))} on each server line to it"
                if len(limits) > 1
                else f"maxconn {served}",
                (*(s.at for s in servers[1:]), limit.at),
            )
