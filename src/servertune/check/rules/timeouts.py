"""The timeout chain: each hop waits longer than the one behind it (app server < nginx < Ingress),
so a request is given up where it runs, not in front of a worker still running it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from servertune.check.model import AppServer, Finding, Location, Severity
from servertune.check.rules.context import Context, Wait
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import as_shown, assignment, figure, spelled
from servertune.sizing import READ_TIMEOUT_MARGIN_S

#: Where each server's own check tick is written (`gives_up_first`).
_TICKS = (
    "the app server ends a request within its check tick: "
    "https://uwsgi-docs.readthedocs.io/en/latest/Options.html#check-interval (the master scans "
    "its workers every N seconds, 1 by default); gunicorn's arbiter checks its workers' "
    "timeout once a second (https://github.com/benoitc/gunicorn/blob/master/gunicorn/arbiter.py)"
)


@check_rule(
    "app-timeout-over-read-timeout",
    Severity.warning,
    "the proxy (nginx, HAProxy, Caddy, Traefik) gives up on a request the app server is still running",
    "the plan's timeout chain (`servertune explain`: request_timeout_s, nginx_read_timeout_s); "
    "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_read_timeout; HAProxy's "
    "configuration manual, 4.2 `timeout server` (the server's processing time for the request): "
    "https://docs.haproxy.org/3.0/configuration.html#4.2-timeout%20server; " + _TICKS,
    kind="fault",
)
def app_timeout_over_read_timeout(rule: Rule, c: Context) -> Iterator[Finding]:
    # One server read through several files (its config, the supervisord or Dockerfile line
    # that starts it) is one finding: keyed by the proxy's line and the timeout's value.
    seen: set[tuple[Location, str, float]] = set()
    waits = c.waits()
    inherited = _inheriting(waits)
    for wait in waits:
        timeout, read = wait.app.request_timeout, wait.timeout
        if timeout is None or not caps_requests(wait.app):
            # A server without a request timeout (uvicorn, granian), or gunicorn's heartbeat
            # for gthread, gevent and ASGI workers: no request ends there, nothing to order.
            continue
        wanted = timeout.value + READ_TIMEOUT_MARGIN_S
        key = (wait.at, wait.app.kind, timeout.value)
        if (
            timeout.value > 0
            and gives_up_first(read.value, wait.app, timeout.value)
            and key not in seen
        ):
            seen.add(key)
            gap = timeout.value - read.value
            name = spelled(wait.app, "timeout")
            directive = wait.directive
            if timeout.default and not read.default and read.value > READ_TIMEOUT_MARGIN_S:
                # The proxy's timeout was chosen, the app server's was not: the app's default
                # is what to bring under it, not the chosen one to raise.
                shorter = math.floor(read.value - READ_TIMEOUT_MARGIN_S)
                fix = (
                    f"{assignment(wait.app, 'timeout', shorter)}   "
                    f"(or {wait.written(figure(wanted))})"
                )
            else:
                fix = wait.written(figure(wanted))
                if (wait.at.file, wait.app.kind, timeout.value) in inherited:
                    fix += (
                        "   (once, in the `server` block these locations share: each of "
                        "them sets none and inherits it)"
                    )
            finding = rule.finding(
                wait.at,
                f"{directive} {as_shown(read, ' s')} gives up {figure(gap)} s before the app "
                f"server's {name} {as_shown(timeout, ' s')}: {wait.proxy} answers 504 while the "
                f"worker keeps running the request for up to {figure(gap)} s more, busy for "
                "nothing",
                fix,
                (timeout.at,),
                docs=wait.docs,
            )
            yield _chosen_for_route(finding, wait, waits)


def _chosen_for_route(finding: Finding, wait: Wait, waits: list[Wait]) -> Finding:
    """The finding as a note when the shorter wait is a choice for one route: written in a
    location that is not the catch-all, while another route of the same file waits on the
    same server as long as its timeout or longer (DOAJ/doaj's `/api` at 30 s under the
    server block's 600 s, "API endpoints should respond quickly"); the catch-all `/` too when
    it writes its own (intelowlproject/GreedyBear's `/` and `/admin` at 45 s beside
    `/api/feeds` at 600 s, judged alike). Its fix keeps the chosen
    value: the cost is a worker running on after the 504, not a client's answer."""
    location = wait.passing.location if wait.passing is not None else ""
    own = wait.passing is not None and wait.passing.own_read_timeout
    timeout = wait.app.request_timeout
    if wait.timeout.default or location == "" or timeout is None:
        return finding
    if location == "/" and not own:
        # The catch-all inheriting the server's wait is the site's wait, not one route's.
        return finding
    longer = next(
        (
            w
            for w in waits
            if w.at.file == wait.at.file and w.app is wait.app and w.timeout.value >= timeout.value
        ),
        None,
    )
    if longer is None:
        return finding
    return replace(
        finding,
        severity=Severity.info,
        message=f"{finding.message} (a note, not a warning: this route's own location chooses a "
        f"shorter wait than {longer.directive} {as_shown(longer.timeout, ' s')} at "
        f"{longer.timeout.at}, for the same server)",
        fix=f"nothing, if the shorter wait is this route's choice; else {finding.fix}",
    )


def _inheriting(waits: list[Wait]) -> set[tuple[Path, str, float]]:
    """The nginx files where several locations pass to one app server with the read timeout
    left at nginx's default (none writes it, nor their server or http block): one line at
    server level fixes them all (seen in akvo/akvo-rsr's nginx/default.conf)."""
    places: dict[tuple[Path, str, float], set[Location]] = {}
    for wait in waits:
        timeout = wait.app.request_timeout
        if wait.passing is None or wait.passing.annotations or timeout is None:
            continue
        if wait.timeout.default:
            key = (wait.at.file, wait.app.kind, timeout.value)
            places.setdefault(key, set()).add(wait.at)
    return {key for key, at in places.items() if len(at) > 1}


#: How often each server looks for a request past its timeout, in seconds: uWSGI's master
#: checks its workers' harakiri once per `check-interval` (1 s by default: "the master process
#: makes a scan of subprocesses, etc. every N seconds"), gunicorn's arbiter wakes once a
#: second to murder the workers past `timeout` (arbiter.py: `wait_for_signals(timeout=1.0)`,
#: then `murder_workers()`; `select(..., 1.0)` in older releases), and Daphne checks its
#: connections' timeouts every 2 s (server.py: `reactor.callLater(2, self.timeout_checker)`).
_TIMEOUT_TICK_S = {"uwsgi": 1.0, "gunicorn": 1.0, "daphne": 2.0}


def gives_up_first(front: float, app: AppServer, timeout: float) -> bool:
    """Whether a front waiting `front` seconds clearly gives up before the app server's
    `timeout` ends the request: by more than the server's own check tick. Equal values (both
    defaults at 60 s, or 45 = 45 set on purpose) end the request within that tick either way:
    the client gets a 504 instead of a 502 at the same moment, nothing runs on for long."""
    return front < timeout - _TIMEOUT_TICK_S.get(app.kind, 1.0)


def caps_requests(app: AppServer) -> bool:
    """Whether the app server's `timeout` ends a request that runs longer: uWSGI's harakiri
    does, and gunicorn's `timeout` for a sync worker (one request at a time, so a silent
    worker is a stuck request). For gthread, gevent, eventlet, tornado and ASGI workers it is
    a heartbeat the worker's main loop sends whatever its requests are doing: no cap. Daphne's
    `--http-timeout` answers a request still unanswered with a 503 and ends its response
    (daphne/http_protocol.py, `check_timeouts`): a cap."""
    return app.kind in ("uwsgi", "daphne") or app.sync_worker


#: A proxy timeout this long on the catch-all location is no timeout: a backend that hangs
#: holds the client (and an nginx connection) until it dies. An hour is far past any request
#: timeout servertune plans, and short of the day-long values meant for WebSockets.
NEVER_GIVES_UP_S = 3600.0


_NGINX_PROXY = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"


@check_rule(
    "proxy-timeout-never-gives-up",
    Severity.warning,
    "the catch-all location waits an hour or more on a backend that does not answer",
    f"{_NGINX_PROXY}#proxy_read_timeout, {_NGINX_PROXY}#proxy_send_timeout (the timeout is "
    "between two successive reads or writes); WebSocket proxying sets a long read timeout on "
    "its own location: https://nginx.org/en/docs/http/websocket.html",
    kind="fault",
)
def proxy_timeout_never_gives_up(rule: Rule, c: Context) -> Iterator[Finding]:
    allowed: dict[Location, float] = {}
    for link in c.links:
        timeout = link.app.request_timeout
        if timeout is not None and timeout.value > 0:
            allowed[link.passing.at] = max(allowed.get(link.passing.at, 0.0), timeout.value)
    seen: set[Location] = set()
    for nginx in c.nginx:
        for passing in nginx.passes:
            if passing.location != "/":
                continue
            timeouts = [("read", passing.read_timeout)]
            if passing.send_timeout is not None:
                timeouts.append(("send", passing.send_timeout))
            for which, timeout in timeouts:
                name = passing.timeout_name(which)  # type: ignore[arg-type]
                if timeout.default or timeout.value < NEVER_GIVES_UP_S or timeout.at in seen:
                    continue
                if timeout.value < allowed.get(passing.at, 0.0) + READ_TIMEOUT_MARGIN_S:
                    continue  # the app server given lets requests run that long
                seen.add(timeout.at)
                wanted = allowed.get(passing.at, 0.0) + READ_TIMEOUT_MARGIN_S
                value = figure(wanted) if wanted > READ_TIMEOUT_MARGIN_S else "60"
                yield rule.finding(
                    timeout.at,
                    f"{name} {figure(timeout.value)} s on `location /`: every request, not only "
                    "a WebSocket's, waits that long on a backend that has stopped answering, "
                    "so a hung worker is never given up on and its clients never get a 504",
                    f"{passing.timeout_written(which, value)} here, and the long value only "  # type: ignore[arg-type]
                    "in the WebSocket's own location (e.g. `location /ws/`)",
                    (passing.at,),
                )


@check_rule(
    "route-timeout-below-app-timeout",
    Severity.warning,
    "the HTTPRoute gives up on a request the app server is still running",
    "the plan's timeout chain (`servertune explain`); Gateway API HTTPRouteTimeouts (request, "
    "backendRequest; GEP-2257 durations): "
    "https://gateway-api.sigs.k8s.io/guides/http-timeouts/",
    kind="fault",
)
def route_timeout_below_app_timeout(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[tuple[Location, str]] = set()
    for app in c.apps:
        box, timeout = app.container, app.request_timeout
        if box is None or timeout is None or timeout.value <= 0 or not caps_requests(app):
            continue
        wanted = timeout.value + READ_TIMEOUT_MARGIN_S
        for name, route in box.route_timeouts:
            late = gives_up_first(route.value, app, timeout.value)
            if route.value > 0 and late and (route.at, name) not in seen:
                seen.add((route.at, name))
                value = f'"{figure(wanted)}"' if name.startswith("nginx.") else f"{figure(wanted)}s"
                yield rule.finding(
                    route.at,
                    f"{name} {figure(route.value)} s gives up "
                    f"{figure(timeout.value - route.value)} s before the app server's "
                    f"{spelled(app, 'timeout')} {as_shown(timeout, ' s')}: the client gets a 504 "
                    "while the worker keeps running the request",
                    f"{name.rpartition(' ')[2]}: {value}",
                    (timeout.at,),
                )
