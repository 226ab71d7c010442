"""The keep-alive chain: each hop keeps an idle connection open longer than the hop in front of
it (load balancer < nginx < app server), or the one behind closes a connection the one in front
still reuses and the client gets a 502.

gunicorn's sync worker is no hop of that chain: it answers every request with `Connection:
close` and closes the connection itself, so the one in front never holds an idle connection to
it to reuse, and its `keepalive` does nothing (gunicorn's settings docs, `keepalive`: "sync
worker does not support persistent connections and will ignore this option").
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace

from servertune.check.balancers import LoadBalancer
from servertune.check.model import AppServer, Finding, Location, NginxConfig, Severity
from servertune.check.rules.backing import GUNICORN_DOCS
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import as_shown, figure, written_where
from servertune.sizing import KEEPALIVE_MARGIN_S

_NGINX_UPSTREAM = "https://nginx.org/en/docs/http/ngx_http_upstream_module.html#keepalive_timeout"

#: An idle keep-alive this long (nginx's default 75 s, a gunicorn `keepalive = 60`) meets the
#: load balancer's reuse only on a connection left idle that long, where the short defaults
#: (gunicorn's 2 s, uvicorn's 5 s) meet it on every lull of a few seconds: the race is rare,
#: and a balancer that retries a request on a connection it finds closed (Go's transport,
#: Traefik's) hides most of it. Still a fault, graded a warning, not an error.
LONG_IDLE_S = 30.0


def _graded(finding: Finding, seconds: float) -> Finding:
    """The finding as a warning, with the reason, when the side behind keeps idle connections
    `LONG_IDLE_S` or longer; as it is otherwise."""
    if seconds < LONG_IDLE_S:
        return finding
    return replace(
        finding,
        severity=Severity.warning,
        message=f"{finding.message} (a warning, not an error: kept idle {figure(seconds)} s, "
        "only a connection left idle that long meets the race, and a balancer that retries a "
        "request on a connection it finds closed hides most of it)",
    )


@check_rule(
    "lb-idle-over-nginx-keepalive",
    Severity.error,
    "nginx closes idle client connections before the load balancer does",
    "servertune bench idle-race; the LB's documentation (e.g. "
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html)",
    kind="fault",
)
def lb_idle_over_nginx_keepalive(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[tuple[str, Location]] = set()
    for lb, idle_at, nginx in c.balancers_in_front():
        if not isinstance(nginx, NginxConfig):
            continue
        related = () if idle_at is None else (idle_at,)
        for keepalive in nginx.keepalive_timeouts:
            if (lb.name, keepalive.at) in seen:
                continue
            seen.add((lb.name, keepalive.at))
            if math.isinf(lb.idle_timeout_s) and keepalive.value > 0:
                finding = rule.finding(
                    keepalive.at,
                    f"{lb.name} never closes an idle connection to nginx ({lb.summary} unset), "
                    f"so nginx's keepalive_timeout {as_shown(keepalive, ' s')} always closes it "
                    "first: the balancer may reuse a connection nginx is closing and answer 502",
                    "give the balancer an idle limit below nginx's keepalive_timeout (HAProxy: "
                    "`timeout client` / `timeout http-keep-alive` and `pool-purge-delay`; Caddy: "
                    "the http transport's `keepalive`; Traefik: `idleConnTimeout`)",
                    related,
                    lb.docs,
                )
                yield _files_only(lb, nginx, keepalive.at, finding) or finding
                continue
            wanted = lb.idle_timeout_s + KEEPALIVE_MARGIN_S
            if 0 < keepalive.value < wanted:
                finding = rule.finding(
                    keepalive.at,
                    f"nginx keepalive_timeout {as_shown(keepalive, ' s')} is not above the {lb.name} "
                    f"idle timeout of {figure(lb.idle_timeout_s)} s by {KEEPALIVE_MARGIN_S} s: the load "
                    "balancer reuses a connection nginx is closing and answers 502",
                    f"keepalive_timeout {figure(wanted)}s;",
                    related,
                    lb.docs,
                )
                yield _files_only(lb, nginx, keepalive.at, finding) or _checked(
                    lb, _replayed(lb, _graded(finding, keepalive.value))
                )


def _replayed(lb: LoadBalancer, finding: Finding) -> Finding:
    """The error as a warning when the balancer proxies through Go's transport (Traefik,
    Caddy), which sends an idempotent request again on a new connection when a reused one is
    closed before any answer (golang/go src/net/http/transport.go, `shouldRetryRequest`: a
    replayable request on a reused connection is sent again on `errServerClosedIdle`; Traefik's
    pkg/server/service/roundtripper.go builds its backend `http.Transport`): only a POST or
    another non-idempotent request that meets the race fails (SelfhostedPro/Yacht's nginx
    under Traefik, uccser/cs-unplugged's gunicorn under Traefik). A warning stays one: the
    POSTs it loses are still lost."""
    if not lb.replays_idempotent or finding.severity is not Severity.error:
        return finding
    return replace(
        finding,
        severity=Severity.warning,
        message=f"{finding.message} (a warning, not an error: {lb.name} proxies through Go's "
        "transport, which sends a GET or another idempotent request again on a new connection, so only "
        "a POST that meets the race fails)",
    )


def _checked(lb: LoadBalancer, finding: Finding) -> Finding:
    """The error as a warning when the balancer checks a pooled connection is still open
    before it reuses it (httpd's mod_proxy): the race is left only to a close landing between
    that check and the request, a narrow window (allura's and intelmq-api's Apache)."""
    if not lb.checks_before_reuse or finding.severity is not Severity.error:
        return finding
    return replace(
        finding,
        severity=Severity.warning,
        message=f"{finding.message} (a warning, not an error: {lb.name} checks a pooled "
        "connection is still open before it reuses it, so only a close landing between that "
        "check and the request meets the race)",
    )


def _files_only(
    lb: LoadBalancer, nginx: NginxConfig, at: Location, finding: Finding
) -> Finding | None:
    """The finding as a note when the nginx server behind the balancer only serves files (it
    passes nothing on) and the balancer replays an idempotent request on a connection it finds
    closed (Go's transport: Traefik, Caddy): the requests a file server gets are GETs, so the
    race costs no client anything. None otherwise."""
    if not lb.replays_idempotent or at not in nginx.static_keepalives:
        return None
    return replace(
        finding,
        severity=Severity.info,
        message=f"{finding.message} (a note, not a warning: this server passes nothing on and "
        "serves files, whose requests are GETs, and the balancer proxies through Go's transport, "
        "which sends an idempotent request again on a new connection when a reused one is "
        "closed before any answer)",
    )


@check_rule(
    "lb-idle-over-app-keepalive",
    Severity.error,
    "the app server closes idle connections before the load balancer in front of it",
    "servertune bench idle-race; conbench/conbench#1156, PostHog/posthog#17897; "
    + GUNICORN_DOCS
    + "#keepalive",
    kind="fault",
)
def lb_idle_over_app_keepalive(rule: Rule, c: Context) -> Iterator[Finding]:
    for lb, idle_at, app in c.balancers_in_front():
        if not isinstance(app, AppServer) or app.keepalive is None or app.sync_worker:
            continue
        if app.reloads is not None:
            continue  # a development launch, not judged (OS2mo's `--reload` branch)
        related = () if idle_at is None else (idle_at,)
        wanted = lb.idle_timeout_s + KEEPALIVE_MARGIN_S
        if math.isinf(wanted):
            at, name, _ = written_where(app, "keepalive", "N")
            yield _checked(
                lb,
                rule.finding(
                    at,
                    f"{lb.name} never closes an idle connection to {app.kind} ({lb.summary}), so "
                    f"{app.kind}'s {name} {as_shown(app.keepalive, ' s')} always closes it first: "
                    f"the load balancer may send a request into a connection {app.kind} is closing "
                    "and answer 502",
                    "give the balancer an idle limit and the app server's keep-alive a longer one "
                    f"(by {KEEPALIVE_MARGIN_S} s or more): Apache: `ttl=N` on the ProxyPass line; "
                    "Caddy: the http transport's `keepalive`; Traefik: `idleConnTimeout`; "
                    "HAProxy: `pool-purge-delay`",
                    related,
                    lb.docs,
                ),
            )
        elif app.keepalive.value < wanted:
            at, name, fix = written_where(app, "keepalive", figure(wanted))
            finding = rule.finding(
                at,
                f"{app.kind} {name} {as_shown(app.keepalive, ' s')} is below the "
                f"{lb.name} idle timeout of {figure(lb.idle_timeout_s)} s (+{KEEPALIVE_MARGIN_S} s): "
                f"the load balancer sends requests into connections {app.kind} is closing and "
                "answers 502",
                fix,
                related,
                lb.docs,
            )
            yield _checked(lb, _replayed(lb, _graded(finding, app.keepalive.value)))


@check_rule(
    "upstream-keepalive-over-app-keepalive",
    Severity.error,
    "nginx keeps idle upstream connections longer than the app server does",
    "servertune bench keepalive-chain; lsst-sqre/phalanx#5103; " + _NGINX_UPSTREAM,
    kind="fault",
)
def upstream_keepalive_over_app_keepalive(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[tuple[Location, str]] = set()
    for link in c.links:
        upstream, app = link.upstream, link.app
        if upstream is None or upstream.keepalive is None or app.keepalive is None:
            continue
        if app.sync_worker:
            continue  # it closes after each response: nginx pools no connection to it
        if app.reloads is not None:
            continue  # a development launch, not judged
        if link.passing.protocol != "http" or not link.passing.http11:
            continue  # nginx only pools HTTP/1.1 upstream connections
        wanted = upstream.keepalive_timeout.value + KEEPALIVE_MARGIN_S
        # One upstream block reached through several launches is one finding; two projects'
        # blocks of the same name (every project's `upstream app`) are two.
        key = (upstream.at, f"{app.kind} {app.keepalive.value}")
        if app.keepalive.value < wanted and key not in seen:
            seen.add(key)
            at, name, fix = written_where(app, "keepalive", figure(wanted))
            yield rule.finding(
                at,
                f"{name} {as_shown(app.keepalive, ' s')} is below nginx's upstream "
                f"keepalive_timeout {as_shown(upstream.keepalive_timeout, ' s')} for `{upstream.name}`: "
                "nginx sends requests on pooled connections the app server has closed, and the "
                "client gets a 502",
                fix,
                (upstream.keepalive_timeout.at,),
            )
