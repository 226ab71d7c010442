"""The rules `servertune check` applies: one function each, registered with its id and proof.

Every threshold is a sizing constant (`servertune.sizing.defaults`) or a number of the plan, so
`check` flags exactly what `gen` would never write. Each rule says what goes wrong in
production, the directive that fixes it, and the benchmark or documentation behind it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from servertune.check.balancers import LoadBalancer
from servertune.check.chain import BalancerLink, Link, normalise
from servertune.check.model import (
    AppServer,
    Container,
    Finding,
    Location,
    NginxConfig,
    Setting,
    Severity,
)
from servertune.cores import round_cores
from servertune.sizing import (
    KEEPALIVE_MARGIN_S,
    MAX_REQUESTS_JITTER_RATIO,
    MEMORY_HEADROOM_RATIO,
    READ_TIMEOUT_MARGIN_S,
    Machine,
    Plan,
    make_plan,
)
from servertune.workload import Workload

__all__ = ["RULES", "Context", "Rule", "run_rules"]


#: AWS: a load balancer reuses its connection to a target until the idle timeout, so the
#: target's keep-alive must be longer (the Classic LB guide says so in these words).
_AWS_IDLE_DOCS = (
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/config-idle-timeout.html; "
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html"
)


@dataclass(frozen=True)
class Context:
    """Everything read, linked and known about the machine, the load balancer and the plan."""

    apps: list[AppServer]
    nginx: list[NginxConfig]
    links: list[Link]
    lb: LoadBalancer | None
    machine: Machine
    plan: Plan | None
    #: Resident memory of one warm worker (MiB) and where that number came from (`--rss-mb`,
    #: the workload's memory_per_worker_mb); None: the memory rule has nothing to multiply.
    rss_mb: float | None = None
    rss_source: str = ""
    #: Load balancer configs that were read (HAProxy), linked to the nginx or app server behind.
    balancer_links: list[BalancerLink] = dataclasses.field(default_factory=list)

    def balancers_in_front(self) -> list[tuple[LoadBalancer, Location | None, object]]:
        """(load balancer, where its idle time is set, the nginx or app server behind it):
        the configs read, each in front of what it links to; `--lb` (or the workload's) in
        front of every nginx no config read fronts (every app server when there is no nginx)."""
        pairs: list[tuple[LoadBalancer, Location | None, object]] = []
        fronted: set[int] = set()
        for link in self.balancer_links:
            idle = link.balancer.idle
            if idle is None:
                continue
            behind = link.nginx if link.nginx is not None else link.app
            fronted.add(id(behind))
            balancer = LoadBalancer(
                f"HAProxy backend `{link.balancer.name}`",
                idle.value if math.isinf(idle.value) else math.ceil(idle.value),
                link.balancer.idle_source,
                str(link.balancer.at),
            )
            pairs.append((balancer, idle.at, behind))
        for app in self.apps:
            # A cloud load balancer a manifest's annotations put in front of the pod.
            for name, idle in app.container.load_balancers if app.container else ():
                fronted.add(id(app))
                summary = name + (" (default)" if idle.default else "")
                pairs.append(
                    (
                        LoadBalancer(name, idle.value, summary, _AWS_IDLE_DOCS),
                        idle.at,
                        app,
                    )
                )
        if self.lb is not None:
            behind_lb: list[object] = list(self.nginx) or list(self.apps)
            pairs.extend((self.lb, None, b) for b in behind_lb if id(b) not in fronted)
        return pairs


@dataclass(frozen=True)
class Rule:
    """A rule: id, severity, one-line title and what backs it; `check` yields its findings."""

    id: str
    severity: Severity
    title: str
    backing: str
    check: Callable[[Rule, Context], Iterator[Finding]]

    def finding(
        self, at: Location, message: str, fix: str, related: tuple[Location, ...] = ()
    ) -> Finding:
        """A finding of this rule."""
        return Finding(self.id, self.severity, at, message, fix, self.backing, related)


RULES: dict[str, Rule] = {}


def _rule(
    rule_id: str, severity: Severity, title: str, backing: str
) -> Callable[[Callable[[Rule, Context], Iterator[Finding]]], None]:
    def register(check: Callable[[Rule, Context], Iterator[Finding]]) -> None:
        RULES[rule_id] = Rule(rule_id, severity, title, backing, check)

    return register


def run_rules(context: Context) -> list[Finding]:
    """Every rule's findings, sorted by file, line and rule id."""
    findings = [f for rule in RULES.values() for f in rule.check(rule, context)]
    return sorted(findings, key=lambda f: (str(f.at.file), f.at.line, f.rule))


def _n(value: float) -> str:
    return f"{value:g}"


def _shown(setting: Setting[float] | Setting[int], unit: str = "") -> str:
    """`2 s (default)`: the value, its unit, and whether the file left it at the default."""
    return f"{_n(setting.value)}{unit}" + (" (default)" if setting.default else "")


#: How each app server spells a setting, for messages and fixes. A name starting with `--` is a
#: command-line flag (`--flag VALUE`), any other a line of its config file (`name = VALUE`).
_SPELLING: dict[str, dict[str, str]] = {
    "gunicorn": {
        "workers": "workers",
        "threads": "threads",
        "graceful": "graceful_timeout",
        "keepalive": "keepalive",
        "timeout": "timeout",
        "backlog": "backlog",
        "max_requests": "max_requests",
        "jitter": "max_requests_jitter",
    },
    "uwsgi": {
        "workers": "processes",
        "threads": "threads",
        "timeout": "harakiri",
        "backlog": "listen",
        "max_requests": "max-requests",
        "jitter": "max-requests-delta",
    },
    "uvicorn": {
        "workers": "--workers",
        "keepalive": "--timeout-keep-alive",
        "backlog": "--backlog",
        "max_requests": "--limit-max-requests",
        "jitter": "--limit-max-requests-jitter",
    },
    "granian": {"workers": "--workers", "backlog": "--backlog"},
}


#: gunicorn's and uWSGI's command-line flags for the same settings, for an app server started
#: by a command line (a Dockerfile's CMD, a compose command, a Procfile, a manifest's args).
_FLAGS: dict[str, dict[str, str]] = {
    "gunicorn": {
        "workers": "--workers",
        "threads": "--threads",
        "keepalive": "--keep-alive",
        "timeout": "--timeout",
        "backlog": "--backlog",
        "max_requests": "--max-requests",
        "jitter": "--max-requests-jitter",
        "graceful": "--graceful-timeout",
    },
    "uwsgi": {
        "workers": "--processes",
        "threads": "--threads",
        "timeout": "--harakiri",
        "backlog": "--listen",
        "max_requests": "--max-requests",
        "jitter": "--max-requests-delta",
    },
}


#: Where each concept's setting lives on an AppServer, to find the file it was written in.
_WHERE: dict[str, Callable[[AppServer], Setting[float] | Setting[int] | None]] = {
    "workers": lambda a: a.workers,
    "threads": lambda a: a.threads,
    "keepalive": lambda a: a.keepalive,
    "timeout": lambda a: a.request_timeout,
    "graceful": lambda a: a.graceful_timeout,
    "backlog": lambda a: a.backlog,
    "max_requests": lambda a: a.max_requests,
    "jitter": lambda a: a.max_requests_jitter,
}


def _in_config_file(app: AppServer, concept: str) -> bool:
    """The setting was written in a config file (a gunicorn `.py`, a uWSGI `.ini`), even when a
    command line (a Dockerfile's CMD, `gunicorn -c`, `uwsgi --ini`) started the server: its fix
    is a line of that file, in that file's language."""
    setting = _WHERE[concept](app) if concept in _WHERE else None
    if setting is None or setting.default:
        return False
    return setting.at.file.suffix in (".py", ".ini")


def _name(app: AppServer, concept: str) -> str:
    """What `app`'s server calls a setting where it is written: `workers`, `processes`,
    `--workers`, ..."""
    if (
        app.command_line
        and concept in _FLAGS.get(app.kind, {})
        and not _in_config_file(app, concept)
    ):
        return _FLAGS[app.kind][concept]
    return _SPELLING[app.kind][concept]


def _assign(app: AppServer, concept: str, value: object) -> str:
    """The fix as the server's file spells it: `keepalive = 65` or `--timeout-keep-alive 65`."""
    name = _name(app, concept)
    return f"{name} {value}" if name.startswith("--") else f"{name} = {value}"


_GUNICORN_DOCS = "https://docs.gunicorn.org/en/stable/settings.html"
_NGINX_UPSTREAM = "https://nginx.org/en/docs/http/ngx_http_upstream_module.html#keepalive_timeout"


@_rule(
    "lb-idle-over-nginx-keepalive",
    Severity.error,
    "nginx closes idle client connections before the load balancer does",
    "servertune bench idle-race; the LB's documentation (e.g. "
    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html)",
)
def _lb_nginx(rule: Rule, c: Context) -> Iterator[Finding]:
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
                yield rule.finding(
                    keepalive.at,
                    f"{lb.name} never closes an idle connection to nginx ({lb.summary} unset), "
                    f"so nginx's keepalive_timeout {_shown(keepalive, ' s')} always closes it "
                    "first: the balancer may reuse a connection nginx is closing and answer 502",
                    "set HAProxy's `timeout client` / `timeout http-keep-alive` (and "
                    "`pool-purge-delay`) below nginx's keepalive_timeout",
                    related,
                )
                continue
            wanted = lb.idle_timeout_s + KEEPALIVE_MARGIN_S
            if 0 < keepalive.value < wanted:
                yield rule.finding(
                    keepalive.at,
                    f"nginx keepalive_timeout {_shown(keepalive, ' s')} is not above the {lb.name} "
                    f"idle timeout of {_n(lb.idle_timeout_s)} s by {KEEPALIVE_MARGIN_S} s: the load "
                    "balancer reuses a connection nginx is closing and answers 502",
                    f"keepalive_timeout {_n(wanted)}s;",
                    related,
                )


@_rule(
    "lb-idle-over-app-keepalive",
    Severity.error,
    "the app server closes idle connections before the load balancer in front of it",
    "servertune bench idle-race; conbench/conbench#1156, PostHog/posthog#17897; "
    + _GUNICORN_DOCS
    + "#keepalive",
)
def _lb_app(rule: Rule, c: Context) -> Iterator[Finding]:
    for lb, idle_at, app in c.balancers_in_front():
        if not isinstance(app, AppServer) or app.keepalive is None:
            continue
        related = () if idle_at is None else (idle_at,)
        wanted = lb.idle_timeout_s + KEEPALIVE_MARGIN_S
        if app.keepalive.value < wanted:
            yield rule.finding(
                app.keepalive.at,
                f"{app.kind} {_name(app, 'keepalive')} {_shown(app.keepalive, ' s')} is below the "
                f"{lb.name} idle timeout of {_n(lb.idle_timeout_s)} s (+{KEEPALIVE_MARGIN_S} s): "
                f"the load balancer sends requests into connections {app.kind} is closing and "
                "answers 502",
                "raise the load balancer's idle limit past the app server's, or lower it"
                if math.isinf(wanted)
                else _assign(app, "keepalive", _n(wanted)),
                related,
            )


@_rule(
    "upstream-keepalive-over-app-keepalive",
    Severity.error,
    "nginx keeps idle upstream connections longer than the app server does",
    "servertune bench keepalive-chain; lsst-sqre/phalanx#5103; " + _NGINX_UPSTREAM,
)
def _upstream_app(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[tuple[str, str]] = set()
    for link in c.links:
        upstream, app = link.upstream, link.app
        if upstream is None or upstream.keepalive is None or app.keepalive is None:
            continue
        if link.passing.protocol != "http" or not link.passing.http11:
            continue  # nginx only pools HTTP/1.1 upstream connections
        wanted = upstream.keepalive_timeout.value + KEEPALIVE_MARGIN_S
        key = (upstream.name, f"{app.kind} {app.keepalive.value}")  # one server, several files
        if app.keepalive.value < wanted and key not in seen:
            seen.add(key)
            yield rule.finding(
                app.keepalive.at,
                f"{_name(app, 'keepalive')} {_shown(app.keepalive, ' s')} is below nginx's upstream "
                f"keepalive_timeout {_shown(upstream.keepalive_timeout, ' s')} for `{upstream.name}`: "
                "nginx sends requests on pooled connections the app server has closed, and the "
                "client gets a 502",
                _assign(app, "keepalive", _n(wanted)),
                (upstream.keepalive_timeout.at,),
            )


@_rule(
    "app-timeout-over-read-timeout",
    Severity.warning,
    "nginx gives up on a request the app server is still running",
    "the plan's timeout chain (`servertune explain`: request_timeout_s, nginx_read_timeout_s); "
    "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_read_timeout",
)
def _read_timeout(rule: Rule, c: Context) -> Iterator[Finding]:
    # One server read through several files (its config, the supervisord or Dockerfile line
    # that starts it) is one finding: keyed by the nginx location and the timeout's value.
    seen: set[tuple[Location, str, float]] = set()
    for link in c.links:
        timeout, read = link.app.request_timeout, link.passing.read_timeout
        if timeout is None or not _caps_requests(link.app):
            # A server without a request timeout (uvicorn, granian), or gunicorn's heartbeat
            # for gthread, gevent and ASGI workers: no request ends there, nothing to order.
            continue
        wanted = timeout.value + READ_TIMEOUT_MARGIN_S
        at = read.at if not read.default else link.passing.at
        key = (at, link.app.kind, timeout.value)
        if timeout.value > 0 and read.value < wanted and key not in seen:
            seen.add(key)
            name = _name(link.app, "timeout")
            directive = f"{link.passing.protocol.replace('http', 'proxy')}_read_timeout"
            if timeout.default and not read.default and read.value > READ_TIMEOUT_MARGIN_S:
                # nginx's timeout was chosen, the app server's was not: the app's default is
                # what to bring under it, not the chosen one to raise.
                shorter = math.floor(read.value - READ_TIMEOUT_MARGIN_S)
                fix = f"{_assign(link.app, 'timeout', shorter)}   (or {directive} {_n(wanted)}s;)"
            else:
                fix = f"{directive} {_n(wanted)}s;"
            yield rule.finding(
                at,
                f"{directive} {_shown(read, ' s')} is not above the app server's {name} "
                f"{_shown(timeout, ' s')} by {READ_TIMEOUT_MARGIN_S} s: nginx answers 504 while the "
                "worker keeps running the request, and the worker is busy for nothing",
                fix,
                (timeout.at,),
            )


@_rule(
    "gthread-one-thread",
    Severity.warning,
    "a gthread worker with one thread accepts requests while it is busy",
    "servertune bench hol; benoitc/gunicorn#2191",
)
def _one_thread(rule: Rule, c: Context) -> Iterator[Finding]:
    if c.plan is not None and c.plan.workload.slow_call_ratio == 0:
        return  # no slow calls: a request waits at most one quick request
    for app in c.apps:
        if app.worker_class is None or app.worker_class.value != "gthread":
            continue
        if app.threads.value == 1:
            fix = f"threads = {c.plan.threads}" if c.plan else 'worker_class = "sync"'
            yield rule.finding(
                app.threads.at,
                "gthread with threads = 1: a worker busy on a slow call still accepts "
                "connections and queues them behind it (head-of-line blocking: the hol "
                "benchmark's quick requests stall for the slow call's full length)",
                fix,
                (app.worker_class.at,),
            )


#: The measured cost of a shared socket against one socket per worker behind nginx least_conn,
#: at concurrency = cores, every load from an idle app (docs/benchmarks.md, "Every load from an
#: idle app"): what a finding may promise, and no more.
_BALANCE_MEASURED = "1.04-1.06x the req/s and 1.08-1.21x lower p99 at concurrency = cores"
_UWSGI_SERIALIZING_ACCEPT = (
    "https://uwsgi-docs.readthedocs.io/en/latest/articles/SerializingAccept.html"
)
#: The app bench balance measured: half of each request's service time holds the GIL. For a
#: workload that holds it less, the benchmark says nothing, and neither does the rule.
BALANCE_CPU_FRACTION = 0.5


@_rule(
    "shared-socket",
    Severity.info,
    "several multi-threaded processes behind nginx accept from one socket",
    "servertune bench balance (uWSGI behind nginx: per-worker sockets + least_conn measured "
    f"{_BALANCE_MEASURED}); {_UWSGI_SERIALIZING_ACCEPT}; "
    "https://nginx.org/en/docs/http/ngx_http_upstream_module.html#least_conn",
)
def _shared(rule: Rule, c: Context) -> Iterator[Finding]:
    # Said only where it was measured and where its fix fits: an nginx of the same run passes
    # to the shared socket, so one socket per worker behind that nginx's least_conn is a change
    # of two files the user gave. Without nginx (uWSGI serving HTTP itself or through its HTTP
    # router, gunicorn straight behind a cloud load balancer, servertune's gateway layout)
    # there is no least_conn to move the choice to: nothing is said.
    fronted = {id(link.app): link for link in c.links}
    for app in c.apps:
        if app.workers.value < 2 or app.threads.value < 2 or app.mapped_sockets:
            continue
        if app.interface == "asgi" or app.kind not in ("gunicorn", "uwsgi"):
            # an ASGI worker runs one event loop (gunicorn's `threads` is unused); granian's
            # blocking threads are its own pool, and gen-per-worker is no fix for it.
            continue
        link = fronted.get(id(app))
        if link is None:
            continue
        if c.plan is not None and c.plan.workload.cpu_fraction < BALANCE_CPU_FRACTION:
            continue  # two requests in one process cost each other the GIL they share
        nginx_at = link.upstream.at if link.upstream is not None else link.passing.at
        if app.kind == "uwsgi":
            how = (
                "uWSGI's threads accept only when idle, so a second request lands in a process "
                "whose other thread is busy, and the two take turns on its GIL while another "
                "process may idle"
            )
            fix = (
                "map-socket = 0:1 (one socket per worker, one `socket` line each), and nginx "
                "`least_conn` over those sockets (servertune gen uwsgi + gen nginx)"
            )
        else:
            how = (
                "a gthread worker accepts while its threads are busy (up to worker_connections), "
                "so a request can queue behind a busy process while another idles"
            )
            fix = (
                "one single-worker gunicorn per socket, and nginx `least_conn` over them "
                "(servertune gen gunicorn-per-worker + gen nginx-gunicorn)"
            )
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} processes x {app.threads.value} threads accept from the one "
            f"socket nginx passes to ({nginx_at}): {how}; per-worker sockets behind least_conn "
            f"measured {_BALANCE_MEASURED} (servertune bench balance), less at saturation",
            fix,
            (nginx_at,),
        )


@_rule(
    "granian-workers-share-a-port",
    Severity.info,
    "several granian workers accept from one port",
    "servertune bench asgi (busiest process's share of requests: 0.50-0.53 with a socket per "
    "worker, up to 0.80 with one shared socket); emmett-framework/granian#544, #843, #849 "
    "(uneven load between workers on one port, closed upstream as expected behaviour); since "
    "granian 2.8 each worker binds its own SO_REUSEPORT socket on Linux (granian#897), which "
    "the kernel fills by a hash of each connection's addresses, whatever the worker's load",
)
def _granian_shared(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "granian" or app.workers.value < 2 or app.mapped_sockets:
            continue
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} granian workers accept from one port: the kernel, not their "
            "load, decides which worker gets a connection, and granian's users report some "
            "workers busy while others idle",
            "one single-worker granian per socket behind nginx least_conn "
            "(servertune gen granian-per-worker and gen nginx-asgi-per-worker)",
        )


@_rule(
    "uvicorn-workers-nagle",
    Severity.warning,
    "uvicorn --workers N on a TCP port leaves Nagle's algorithm on",
    "a loopback capture (tcpdump) of uvicorn 0.54 --workers 2: each answer's body left 44 ms "
    "after its headers, when the client's delayed ACK came; with --workers 1 0.3 ms. "
    "Kludex/uvicorn#3149 (open): Config.bind_socket() leaves the socket's protocol at 0, and "
    "asyncio sets TCP_NODELAY only on sockets that read IPPROTO_TCP; `servertune bench app` "
    "(FastAPI /io: p50 96 ms against 55 ms)",
)
def _uvicorn_nagle(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "uvicorn" or app.workers.value < 2 or app.mapped_sockets:
            continue
        tcp = [s for s in app.sockets if not s.value.startswith("unix:")]
        if not tcp or app.listener_nodelay:
            continue
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} uvicorn workers on {tcp[0].value}: uvicorn binds the port in "
            "its supervisor and never turns TCP_NODELAY on for the connections its workers "
            "accept, so every answer's body waits up to 40 ms for the peer's delayed ACK after "
            "its headers (`fastapi run --workers N` and `uvicorn.run(workers=N)` do the same)",
            "a unix socket (--uds), one single-worker uvicorn per port "
            "(servertune gen uvicorn-per-worker), gunicorn with uvicorn's worker (gunicorn sets "
            "TCP_NODELAY on its listener), or servertune gen uvicorn's launcher",
            (tcp[0].at,),
        )


def _cores(c: Context) -> tuple[int, str]:
    machine = c.plan.machine if c.plan else c.machine
    where = "the workload's" if c.plan else f"the server's ({machine.cores_source}):"
    return machine.cores, where


def _planned_processes(app: AppServer, c: Context) -> bool:
    """The workload's plan itself runs this many single-threaded processes on its cores: its
    memory holds a process for each slot the GIL share asks for (docs/sizing.md)."""
    plan = c.plan
    if plan is None or plan.processes <= plan.machine.cores:
        return False
    return app.workers.value <= plan.processes and app.threads.value <= plan.threads


def _plan_for_cores(c: Context, cores: int) -> tuple[Plan, str]:
    """The plan the worker findings follow, and in words which workload it was made for: the
    workload given (`--workload`), or servertune's default one on these cores, named as an
    assumption (an I/O-bound app's plan has more threads, never more processes)."""
    if c.plan is not None:
        return c.plan, "the workload given"
    workload = Workload(cores=cores)
    assumed = (
        f"servertune's default workload ({_n(workload.service_time_ms)} ms per request, "
        f"{workload.cpu_fraction:.0%} of it holding the GIL; give --workload for yours)"
    )
    return make_plan(workload, c.machine.model_copy(update={"cores": cores})), assumed


def _workers_fix(app: AppServer, plan: Plan) -> str:
    """The plan's processes (and threads, where the server has WSGI threads) in the file's words."""
    fix = _assign(app, "workers", plan.processes)
    if app.kind in ("gunicorn", "uwsgi") and app.interface == "wsgi" and plan.threads > 1:
        fix += f" and {_assign(app, 'threads', plan.threads)}"
    return fix


@_rule(
    "workers-over-cores",
    Severity.warning,
    "more worker processes than the cores the server may use",
    "`servertune explain --cores N` (its `processes` and `threads` rows: one process per core "
    "under the GIL; threads, not processes, for the waits); servertune bench balance",
)
def _workers_cores(rule: Rule, c: Context) -> Iterator[Finding]:
    cores, where = _cores(c)
    for app in c.apps:
        box = app.container
        if box is not None and (box.platform != "compose" or box.cpu_limit is not None):
            continue  # in a container the limit is what counts (workers-over-cpu-limit)
        if app.workers_follow_cpu_count and _runs_in_container(app):
            continue  # one cause, one finding: workers-from-cpu-count says it at this line
        if app.workers.value > cores and not _planned_processes(app, c):
            plan, assumed = _plan_for_cores(c, cores)
            # A per-worker script starts one single-worker server per socket: its count is
            # the number of sockets, and so is the fix.
            per_socket = app.mapped_sockets and app.kind in ("uvicorn", "granian")
            subject = (
                f"{app.workers.value} single-worker servers (one per socket) are"
                if per_socket
                else f"{_assign(app, 'workers', app.workers.value)} is"
            )
            shape = f"{plan.processes} processes" + (
                f" x {plan.threads} threads"
                if app.interface == "wsgi" and app.kind in ("gunicorn", "uwsgi")
                else ""
            )
            waits = (
                "threads wait as well at a fraction of a process's memory"
                if app.interface == "wsgi"
                else "each process's event loop already waits on many at once"
            )
            yield rule.finding(
                app.workers.at,
                f"{subject} more than {where} {cores} core{'' if cores == 1 else 's'}: while requests hold the GIL the "
                "extra processes only take turns on the same cores and multiply memory; for "
                f"requests that wait on I/O, {waits}. servertune's plan for {assumed} is "
                f"{shape}",
                f"{plan.processes} sockets, one single-worker server each"
                if per_socket
                else _workers_fix(app, plan),
            )


def _runs_in_container(app: AppServer) -> bool:
    """The files say the server runs in a container or dyno: a manifest or compose service
    holds it, or a command line (a Dockerfile's CMD, a Procfile, a manifest's args) starts it."""
    return app.container is not None or app.command_line


@_rule(
    "workers-from-cpu-count",
    Severity.warning,
    "the worker count follows the host's CPU count, not the container's CPU limit",
    "tiangolo/uvicorn-gunicorn-docker#43; https://docs.python.org/3/library/os.html#os.cpu_count",
)
def _cpu_count(rule: Rule, c: Context) -> Iterator[Finding]:
    cores, _ = _cores(c)
    for app in c.apps:
        if not _runs_in_container(app):
            # A config file read on its own may be a host's (searxng's uWSGI template for a
            # systemd install): there the CPU count is the right one. Its count is judged
            # against the cores by workers-over-cores; the container case needs the files
            # that say it runs in one (a Dockerfile, compose file, manifest, Procfile).
            continue
        if app.workers_follow_cpu_count:
            name = _name(app, "workers")
            yield rule.finding(
                app.workers.at,
                f"{name} is computed from the CPU count, which reports the host's cores, not the "
                "cgroup's CPU quota: in a CPU-limited container this starts many times too many "
                "workers",
                f"{_workers_fix(app, _plan_for_cores(c, cores)[0])}   (or read the cgroup "
                "limit: `servertune explain` shows it)",
            )


@_rule(
    "backlog-over-somaxconn",
    Severity.warning,
    "a listen backlog above net.core.somaxconn is silently truncated",
    "https://man7.org/linux/man-pages/man2/listen.2.html",
)
def _backlog(rule: Rule, c: Context) -> Iterator[Finding]:
    somaxconn = (c.plan.machine if c.plan else c.machine).somaxconn
    # (setting, its name, the fix)
    settings: list[tuple[Setting[int], str, str]] = []
    for app in c.apps:
        fix = f"{_assign(app, 'backlog', somaxconn)}   (or raise net.core.somaxconn)"
        settings.append((app.backlog, _name(app, "backlog"), fix))
    for nginx in c.nginx:
        fix = f"listen ... backlog={somaxconn};"
        settings.extend((b, "listen ... backlog", fix) for b in nginx.listen_backlogs)
    for backlog, name, fix in settings:
        if backlog.value > somaxconn:
            yield rule.finding(
                backlog.at,
                f"{name} {_shown(backlog)} is above net.core.somaxconn {somaxconn}: the kernel "
                f"silently caps the queue at {somaxconn} (uWSGI refuses to start), so the queue "
                "this number promises does not exist",
                fix,
            )


@_rule(
    "max-requests-without-jitter",
    Severity.warning,
    "workers recycled after N requests all restart together",
    "benoitc/gunicorn#3427; " + _GUNICORN_DOCS + "#max-requests-jitter",
)
def _jitter(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.max_requests.value <= 0 or app.max_requests_jitter.value > 0:
            continue
        if app.missing_config is not None:
            continue  # the config file the command names, not read, may set the jitter
        replicas = app.container.replicas if app.container is not None else None
        if app.workers.value * (replicas.value if replicas is not None else 1) < 2:
            continue  # one process in all: no restarts to keep apart
        jitter = math.ceil(app.max_requests.value * MAX_REQUESTS_JITTER_RATIO)
        yield rule.finding(
            app.max_requests.at,
            f"max requests {app.max_requests.value} with no {_name(app, 'jitter')}: workers that "
            "share the load reach the limit at about the same time and restart together, leaving "
            "no worker to serve for the length of an application start",
            _assign(app, "jitter", jitter),
        )


def _caps_requests(app: AppServer) -> bool:
    """Whether the app server's `timeout` ends a request that runs longer: uWSGI's harakiri
    does, and gunicorn's `timeout` for a sync worker (one request at a time, so a silent
    worker is a stuck request). For gthread, gevent, eventlet, tornado and ASGI workers it is
    a heartbeat the worker's main loop sends whatever its requests are doing: no cap."""
    if app.kind == "uwsgi":
        return True
    if app.kind != "gunicorn" or app.interface == "asgi":
        return False
    worker = app.worker_class.value if app.worker_class is not None else "sync"
    # gunicorn runs a sync worker with threads > 1 as gthread (its `threads` setting's docs).
    return worker in ("sync", "gunicorn.workers.sync.SyncWorker") and app.threads.value == 1


def _stop_grace_name(box: Container) -> str:
    return "stop_grace_period" if box.platform == "compose" else "terminationGracePeriodSeconds"


@_rule(
    "graceful-below-timeout",
    Severity.warning,
    "a reload kills requests the timeout still allows",
    _GUNICORN_DOCS + "#graceful-timeout; " + _GUNICORN_DOCS + "#timeout (for sync workers "
    "only: other worker classes send a heartbeat while their requests run)",
)
def _graceful(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        graceful, timeout = app.graceful_timeout, app.request_timeout
        if graceful is None or timeout is None or not _caps_requests(app):
            continue
        if not 0 < graceful.value < timeout.value:
            continue
        fix = _assign(app, "graceful", _n(timeout.value))
        box = app.container
        grace = box.grace_period_s if box is not None else None
        bound = ""
        if box is not None and grace is not None and grace.value < timeout.value:
            # The platform's SIGKILL comes first whatever gunicorn waits: raise both.
            name = _stop_grace_name(box)
            bound = (
                f"; the container's {name} {_shown(grace, ' s')} ({grace.at}) ends the wait "
                "before either"
            )
            wanted = math.ceil(timeout.value) + 5
            fix += f", and {name}: " + (f"{wanted}s" if box.platform == "compose" else f"{wanted}")
        yield rule.finding(
            graceful.at,
            f"graceful_timeout {_shown(graceful, ' s')} is below the sync workers' timeout "
            f"{_shown(timeout, ' s')}{bound}: every reload or deploy kills requests that were "
            "allowed to run longer",
            fix,
            (timeout.at,) + ((grace.at,) if bound and grace is not None else ()),
        )


#: Up to this many processes on one socket, thunder-lock measured no gain worth a finding:
#: bench balance's 2 processes, 3-8 % req/s within the machine's noise (docs/benchmarks.md,
#: "thunder-lock against per-worker sockets"); uWSGI's own article is about many processes
#: waking for one connection, a cost that grows with their number.
THUNDER_LOCK_MIN_PROCESSES = 5


@_rule(
    "thunder-lock",
    Severity.info,
    "many uWSGI processes sharing a socket wake together on every connection",
    f"{_UWSGI_SERIALIZING_ACCEPT}; servertune bench balance (2 processes: no measurable gain)",
)
def _thunder(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "uwsgi" or app.workers.value < THUNDER_LOCK_MIN_PROCESSES:
            continue
        if app.mapped_sockets:
            continue
        if app.thunder_lock is not None and app.thunder_lock.value:
            continue
        if app.missing_config is not None:
            continue  # the config file the command names, not read, may set it
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} processes accept from the same socket without thunder-lock: "
            "each connection wakes every process (thundering herd), which costs more the more "
            "processes wait, and the kernel does not spread connections evenly",
            "thunder-lock = true",
        )


_ARGPARSE_STORE = "https://docs.python.org/3/library/argparse.html#action"


@_rule(
    "option-given-twice",
    Severity.warning,
    "a single-value option is given twice on the command line: the last one wins",
    "gunicorn's command line is argparse's `store` action (each occurrence replaces the value: "
    f"{_ARGPARSE_STORE}); uvicorn's and granian's are click options "
    "(https://click.palletsprojects.com/en/stable/options/), uWSGI keeps the last value of a "
    "scalar option (https://uwsgi-docs.readthedocs.io/en/latest/Configuration.html)",
)
def _twice(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for first, last in app.repeated_options:
            yield rule.finding(
                first.at,
                f"`{first.value}` is overridden by `{last.value}` later on the same command "
                f"line ({last.at}): {app.kind} keeps only the last, so whatever the first one "
                "was meant to set is silently ignored",
                f"keep one of them (if `{last.value}` was meant for another option, give it "
                "that option's flag)",
                (last.at,),
            )


_DOCKER_PID1 = (
    "https://docs.docker.com/reference/dockerfile/#entrypoint (a starter script ensures the "
    "final executable receives the Unix signals by using exec)"
)
_POD_TERMINATION = (
    "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"
)


@_rule(
    "entrypoint-without-exec",
    Severity.warning,
    "a shell script starts the server without `exec`: SIGTERM never reaches it",
    _DOCKER_PID1 + "; " + _POD_TERMINATION,
)
def _without_exec(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        line = app.without_exec
        if line is None:
            continue
        yield rule.finding(
            line.at,
            f"the script runs {app.kind} as a child of the shell ({line.value!r}): the shell "
            "stays PID 1, and a shell that is PID 1 neither dies of SIGTERM nor passes it on, "
            f"so `docker stop` or a rollout never reaches {app.kind}: no graceful shutdown, "
            "in-flight requests are cut by the SIGKILL at the end of the grace period",
            f"exec {line.value}",
        )


_UWSGI_THINGS_TO_KNOW = (
    "https://uwsgi-docs.readthedocs.io/en/latest/ThingsToKnow.html (till uWSGI 2.1, SIGTERM "
    "brutally reloads the stack; enable die-on-term); "
    "https://uwsgi-docs.readthedocs.io/en/latest/Management.html (the signal table)"
)


@_rule(
    "uwsgi-sigterm-reloads",
    Severity.warning,
    "uWSGI 2.0 under a container platform reloads on SIGTERM instead of stopping",
    _UWSGI_THINGS_TO_KNOW + "; " + _POD_TERMINATION,
)
def _die_on_term(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "uwsgi" or not (app.command_line or app.container is not None):
            continue  # an ini on its own: started by systemd or the Emperor, who send others
        if app.die_on_term is not None or app.missing_config is not None:
            continue  # set, or perhaps set in the config file the command names but was not read
        platform = (
            {"compose": "docker compose", "kubernetes": "Kubernetes"}[app.container.platform]
            if app.container is not None
            else "whatever runs this command (docker stop, Kubernetes, Heroku and "
            "supervisord's default stopsignal all send SIGTERM)"
        )
        yield rule.finding(
            app.workers.at,
            f"uWSGI started by a command line is stopped with SIGTERM by {platform}: in every "
            "uWSGI 2.0 release (2.1, unreleased, changes the default) SIGTERM brutally reloads "
            "the workers instead of stopping, so the stop waits out the grace period and ends "
            "in SIGKILL, with in-flight requests cut twice",
            "die-on-term = true"
            if app.workers.at.file.suffix == ".ini"
            else "--die-on-term   (or die-on-term = true in its ini file)",
        )


#: A proxy timeout this long on the catch-all location is no timeout: a backend that hangs
#: holds the client (and an nginx connection) until it dies. An hour is far past any request
#: timeout servertune plans, and short of the day-long values meant for WebSockets.
NEVER_GIVES_UP_S = 3600.0
_NGINX_PROXY = "https://nginx.org/en/docs/http/ngx_http_proxy_module.html"


@_rule(
    "proxy-timeout-never-gives-up",
    Severity.warning,
    "the catch-all location waits an hour or more on a backend that does not answer",
    f"{_NGINX_PROXY}#proxy_read_timeout, {_NGINX_PROXY}#proxy_send_timeout (the timeout is "
    "between two successive reads or writes); WebSocket proxying sets a long read timeout on "
    "its own location: https://nginx.org/en/docs/http/websocket.html",
)
def _never_gives_up(rule: Rule, c: Context) -> Iterator[Finding]:
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
            prefix = passing.protocol.replace("http", "proxy")
            timeouts = [(f"{prefix}_read_timeout", passing.read_timeout)]
            if passing.send_timeout is not None:
                timeouts.append((f"{prefix}_send_timeout", passing.send_timeout))
            for name, timeout in timeouts:
                if timeout.default or timeout.value < NEVER_GIVES_UP_S or timeout.at in seen:
                    continue
                if timeout.value < allowed.get(passing.at, 0.0) + READ_TIMEOUT_MARGIN_S:
                    continue  # the app server given lets requests run that long
                seen.add(timeout.at)
                wanted = allowed.get(passing.at, 0.0) + READ_TIMEOUT_MARGIN_S
                value = f"{_n(wanted)}s" if wanted > READ_TIMEOUT_MARGIN_S else "60s"
                yield rule.finding(
                    timeout.at,
                    f"{name} {_n(timeout.value)} s on `location /`: every request, not only "
                    "a WebSocket's, waits that long on a backend that has stopped answering, "
                    "so a hung worker is never given up on and its clients never get a 504",
                    f"{name} {value}; here, and the long value only in the WebSocket's own "
                    "location (e.g. `location /ws/`)",
                    (passing.at,),
                )


_NGINX_WORKER_CONNECTIONS = "https://nginx.org/en/docs/ngx_core_module.html#worker_connections"


def _slots(app: AppServer) -> int | None:
    """Requests the app server runs at once, where that is its processes x threads (None for
    an event loop or green threads, whose concurrency the files do not bound)."""
    if app.interface != "wsgi" or app.kind not in ("gunicorn", "uwsgi"):
        return None
    if app.worker_class is not None and app.worker_class.value in _ASYNC_WORKERS:
        return None
    return app.workers.value * app.threads.value


@_rule(
    "worker-connections-below-proxied-load",
    Severity.warning,
    "nginx's connections cannot hold the requests the app servers behind it run at once",
    f"{_NGINX_WORKER_CONNECTIONS} (the limit counts every connection, those with proxied "
    "servers too); servertune explain (nginx_worker_connections: 2 x every app slot)",
)
def _worker_connections(rule: Rule, c: Context) -> Iterator[Finding]:
    cores, _ = _cores(c)
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
            f"worker_connections {_shown(limit)} x {processes} worker process(es) = "
            f"{limit.value * processes} connections, but the app servers behind it run {slots} "
            f"requests at once, and each proxied request holds two (the client's and the "
            f"upstream's): at full load nginx logs 'worker_connections are not enough' and "
            "drops connections while the app servers still have free slots",
            f"worker_connections {wanted};",
        )


@_rule(
    "include-not-found",
    Severity.info,
    "an nginx include names a file that is not here, so its settings were not checked",
    "https://nginx.org/en/docs/ngx_core_module.html#include",
)
def _missing(rule: Rule, c: Context) -> Iterator[Finding]:
    for nginx in c.nginx:
        for include in nginx.missing_includes:
            yield rule.finding(
                include.at,
                f"include {include.value}: not in this config tree here; settings in it were "
                "not checked",
                f"servertune check {nginx.file} {include.value}   (from the server's own tree)",
            )


@_rule(
    "plan-interface-differs",
    Severity.info,
    "the app server calls the app through another interface than the workload's",
    "servertune explain (interface)",
)
def _plan_interface(rule: Rule, c: Context) -> Iterator[Finding]:
    plan = c.plan
    if plan is None:
        return
    wanted = plan.workload.interface
    for app in c.apps:
        if app.interface == wanted:
            continue
        at = app.worker_class.at if app.worker_class is not None else app.workers.at
        worker = "" if app.worker_class is None else f" (worker class {app.worker_class.value})"
        yield rule.finding(
            at,
            f"{app.file.name} serves a{'n' if app.interface == 'asgi' else ''} "
            f"{app.interface.upper()} app{worker}, but the workload's interface is "
            f"'{wanted}': the plan sizes another kind of server, so its thread count is not "
            "compared and its other numbers may not fit",
            f'interface = "{app.interface}"   (in the workload), or '
            + (
                "servertune gen gunicorn-asgi"
                if wanted == "asgi"
                else "servertune gen gunicorn-per-worker"
            ),
        )


def _keepalive_field(plan: Plan, app: AppServer) -> str:
    """The plan number an app server's keep-alive is written from: uvicorn's for an ASGI
    worker (when the plan has one), gunicorn's otherwise."""
    if app.interface == "asgi" and plan.asgi_keepalive_s is not None:
        return "asgi_keepalive_s"
    return "gunicorn_keepalive_s"


@_rule(
    "plan-differs",
    Severity.info,
    "a number differs from the plan for the given workload",
    "servertune explain (the plan's reason, quoted in each finding)",
)
def _plan(rule: Rule, c: Context) -> Iterator[Finding]:
    plan = c.plan
    if plan is None:
        return
    # (setting, plan field, directive as written in its file, whether the file is nginx)
    compared: list[tuple[Setting[float] | Setting[int] | None, str, str, bool]] = []
    for app in c.apps:
        if app.kind in ("uvicorn", "granian"):
            compared += _command_line_compared(app, plan)
            continue
        uwsgi = app.kind == "uwsgi"
        per_worker = app.workers.value == 1 and any(
            s.value in {p.endpoint for p in plan.sockets} for s in app.sockets
        )
        if not per_worker:  # one single-worker server per socket: its `workers = 1` is the plan
            compared.append((app.workers, "processes", "processes" if uwsgi else "workers", False))
        if app.interface == "wsgi" and plan.workload.interface == "wsgi":
            # An event loop per process has no thread count to compare (nor does a WSGI
            # server against an ASGI plan: plan-interface-differs says so).
            compared.append((app.threads, "threads", "threads", False))
        compared += [
            (app.request_timeout, "request_timeout_s", "harakiri" if uwsgi else "timeout", False),
            (app.graceful_timeout, "graceful_timeout_s", "graceful_timeout", False),
            (app.keepalive, _keepalive_field(plan, app), "keepalive", False),
            (app.max_requests, "max_requests", "max-requests" if uwsgi else "max_requests", False),
            (
                app.max_requests_jitter,
                "max_requests_jitter",
                "max-requests-delta" if uwsgi else "max_requests_jitter",
                False,
            ),
        ]
    for nginx in c.nginx:
        for keepalive in nginx.keepalive_timeouts:
            compared.append((keepalive, "nginx_keepalive_timeout_s", "keepalive_timeout", True))
        for passing in nginx.passes:
            directive = f"{passing.protocol.replace('http', 'proxy')}_read_timeout"
            compared.append((passing.read_timeout, "nginx_read_timeout_s", directive, True))
        for upstream in nginx.upstreams.values():
            if upstream.keepalive is not None:
                compared.append(
                    (
                        upstream.keepalive_timeout,
                        "upstream_keepalive_timeout_s",
                        "keepalive_timeout",
                        True,
                    )
                )
    seen: set[tuple[Location, str]] = set()
    for setting, field, directive, in_nginx in compared:
        if setting is None or (setting.at, field) in seen:
            continue
        seen.add((setting.at, field))
        wanted = plan.value(field)
        if wanted is None:
            wanted = _UNSET_AS.get(field)
        if setting.value != wanted:
            if in_nginx:
                fix = f"{directive} {wanted}s;"
            else:
                fix = (
                    f"{directive} {wanted}"
                    if directive.startswith("--")
                    else f"{directive} = {wanted}"
                )
            yield rule.finding(
                setting.at,
                f"{directive} is {_shown(setting)}; the plan says {wanted}: {plan.reasons[field]}",
                fix,
            )


#: Plan numbers that are None where the server writes "none" as 0: uvicorn without
#: --limit-max-requests recycles nothing, which the plan says as asgi_max_requests = None.
_UNSET_AS = {"asgi_max_requests": 0}


def _command_line_compared(
    app: AppServer, plan: Plan
) -> list[tuple[Setting[float] | Setting[int] | None, str, str, bool]]:
    """What a uvicorn or granian command line says, beside the plan number it was written from."""
    compared: list[tuple[Setting[float] | Setting[int] | None, str, str, bool]] = [
        (app.workers, "processes", "--workers", False)
    ]
    if app.kind == "uvicorn":
        compared += [
            (app.keepalive, _keepalive_field(plan, app), "--timeout-keep-alive", False),
            (app.graceful_timeout, "graceful_timeout_s", "--timeout-graceful-shutdown", False),
        ]
        if not app.mapped_sockets:  # a single-worker uvicorn per socket never recycles
            compared.append((app.max_requests, "asgi_max_requests", "--limit-max-requests", False))
            if plan.asgi_max_requests is not None:
                jitter = (app.max_requests_jitter, "max_requests_jitter")
                compared.append((*jitter, "--limit-max-requests-jitter", False))
        return compared
    if not app.threads.default:  # granian's own default depends on the interface
        compared.append((app.threads, "granian_blocking_threads", "--blocking-threads", False))
    compared.append((app.graceful_timeout, "graceful_timeout_s", "--workers-kill-timeout", False))
    return compared


_K8S_RESOURCES = "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/"
_K8S_PROBES = (
    "https://kubernetes.io/docs/tasks/configure-pod-container/"
    "configure-liveness-readiness-startup-probes/"
)
_K8S_TERMINATION = (
    "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"
)


_DOCKER_RESOURCES = "https://docs.docker.com/engine/containers/resource_constraints/#cpu"


def _limit_name(box: Container, what: str) -> str:
    """How the container's platform spells its CPU or memory limit."""
    if box.platform == "compose":
        return {"cpu": "cpus", "memory": "mem_limit", "cpu-request": "reservations.cpus"}[what]
    return {"cpu": "limits.cpu", "memory": "limits.memory", "cpu-request": "requests.cpu"}[what]


@_rule(
    "workers-over-cpu-limit",
    Severity.warning,
    "more worker processes than the container's CPU limit",
    "`servertune explain --cores N` (processes: one per core under the GIL); a CPU limit is a "
    "CFS quota: past it "
    f"the container is throttled for the rest of each 100 ms period: {_K8S_RESOURCES}, "
    f"{_DOCKER_RESOURCES}",
)
def _cpu_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.cpu_limit is None:
            continue
        cores = round_cores(box.cpu_limit.value)
        if app.workers.value > cores and not _planned_processes(app, c):
            yield rule.finding(
                app.workers.at,
                f"{_assign(app, 'workers', app.workers.value)} under a CPU limit of "
                f"{_n(box.cpu_limit.value)} core{'' if box.cpu_limit.value == 1 else 's'} "
                f"({box.cpu_limit.at}): {app.workers.value} "
                "processes share a quota of "
                f"{_n(box.cpu_limit.value)} CPU, so under load the container is throttled, each "
                "request's latency stretches by the throttled time, and every extra worker "
                "costs memory towards an OOM kill",
                f"{_workers_fix(app, _plan_for_cores(c, cores)[0])}   (or raise "
                f"{_limit_name(box, 'cpu')} to {app.workers.value})",
                (box.cpu_limit.at,),
            )


@_rule(
    "no-cpu-limit",
    Severity.info,
    "a container without a CPU limit: its worker count is not tied to any number of cores",
    f"{_K8S_RESOURCES}; {_DOCKER_RESOURCES}",
)
def _no_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.cpu_limit is not None:
            continue
        if box.platform == "kubernetes" and _exposed_bare(box):
            continue  # exposed-without-resources-or-probes says it, and more
        request = _limit_name(box, "cpu-request")
        if box.cpu_request is not None:
            cores = round_cores(box.cpu_request.value)
            if app.workers.value <= cores:
                continue
            yield rule.finding(
                box.cpu_request.at,
                f"{request} {_n(box.cpu_request.value)} without a limit: the scheduler "
                f"guarantees {_n(box.cpu_request.value)} CPU, but {app.workers.value} workers "
                "count on more; on a busy node they share the request",
                f'{_limit_name(box, "cpu")}: "{cores}" and {_assign(app, "workers", cores)}, or '
                f"{request} at the worker count ({app.workers.value})",
                (app.workers.at,),
            )
        elif box.platform == "compose":
            # A compose service without `cpus` runs on the host's cores, like a process
            # started by hand: workers-over-cores judges it against them. A limit nobody set
            # for a file every user runs on another host is not a finding to send.
            continue
        else:
            yield rule.finding(
                box.at,
                f"container {box.name!r} sets no CPU request or limit: it is scheduled as if it "
                f"needed no CPU, and its workers ({app.workers.value}) compete with every other pod "
                "on the node",
                f'resources: {{requests: {{cpu: "{app.workers.value}"}}, limits: '
                f'{{cpu: "{app.workers.value}"}}}}',
                (app.workers.at,),
            )


@_rule(
    "workers-over-memory-limit",
    Severity.warning,
    "the workers' resident memory does not fit the container's memory limit",
    "`servertune explain` (processes: memory_limit_mb x MEMORY_HEADROOM_RATIO / "
    "memory_per_worker_mb); "
    "past the limit the kernel's OOM killer ends a worker mid-request: "
    "https://docs.docker.com/engine/containers/resource_constraints/#memory, " + _K8S_RESOURCES,
)
def _memory_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    if c.rss_mb is None:
        return
    for app in c.apps:
        box = app.container
        if box is None or box.memory_limit_mb is None:
            continue
        limit = box.memory_limit_mb.value
        fits = math.floor(limit * MEMORY_HEADROOM_RATIO / c.rss_mb)
        if app.workers.value <= fits:
            continue
        needed = math.ceil(app.workers.value * c.rss_mb / MEMORY_HEADROOM_RATIO)
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} workers x {_n(c.rss_mb)} MiB ({c.rss_source}) = "
            f"{_n(app.workers.value * c.rss_mb)} MiB against a memory limit of {_n(limit)} MiB "
            f"({box.memory_limit_mb.at}), of which {MEMORY_HEADROOM_RATIO:.0%} is for workers "
            "(the rest for the master, buffers and growth): under load a worker is OOM-killed "
            "and its requests fail",
            f"{_assign(app, 'workers', max(1, fits))}   (or raise "
            f"{_limit_name(box, 'memory')} to {needed} MiB)",
            (box.memory_limit_mb.at,),
        )


@_rule(
    "no-recycling-while-memory-grows",
    Severity.warning,
    "the workers' memory grows with every request and nothing recycles them",
    "`servertune explain` (max_requests: memory_growth_kb_per_request, measured by "
    "`servertune measure`, sets it); a worker past the container's limit is OOM-killed "
    "mid-request: https://docs.docker.com/engine/containers/resource_constraints/#memory, "
    + _GUNICORN_DOCS
    + "#max-requests",
)
def _growth_unrecycled(rule: Rule, c: Context) -> Iterator[Finding]:
    plan = c.plan
    growth = plan.workload.memory_growth_kb_per_request if plan is not None else None
    if plan is None or not growth:
        return
    for app in c.apps:
        if app.max_requests.value > 0 or "max_requests" not in _SPELLING[app.kind]:
            continue
        recycle = plan.asgi_max_requests if app.kind == "uvicorn" else plan.max_requests
        if recycle is None or (app.kind == "uvicorn" and app.workers.value < 2):
            continue  # one uvicorn worker cannot be recycled: its exit ends the server
        per_million_mb = growth * 1_000_000 / 1024
        yield rule.finding(
            app.max_requests.at,
            f"the workload's workers grow {growth:g} KiB a request "
            f"(memory_growth_kb_per_request) and {_name(app, 'max_requests')} is unset: no "
            f"worker ever restarts, so each holds {per_million_mb:.0f} MiB more after a million "
            "requests, until the memory limit OOM-kills it mid-request",
            _assign(app, "max_requests", recycle)
            + f", {_assign(app, 'jitter', math.ceil(recycle * MAX_REQUESTS_JITTER_RATIO))}",
        )


@_rule(
    "max-requests-jitter-small",
    Severity.warning,
    "the recycling jitter is too small to keep the workers' restarts apart",
    "benoitc/gunicorn#3427 (max_requests 10240 with jitter 512: four workers restarted within "
    "four seconds); the plan's MAX_REQUESTS_JITTER_RATIO; "
    + _GUNICORN_DOCS
    + "#max-requests-jitter",
)
def _small_jitter(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        limit, jitter = app.max_requests.value, app.max_requests_jitter.value
        if (
            limit <= 0
            or jitter <= 0
            or app.kind not in _SPELLING
            or "jitter" not in _SPELLING[app.kind]
        ):
            continue  # no recycling, or no jitter at all (max-requests-without-jitter)
        replicas = app.container.replicas if app.container is not None else None
        copies = replicas.value if replicas is not None else 1
        total = app.workers.value * copies
        if total < 2:
            continue
        wanted = math.ceil(limit * MAX_REQUESTS_JITTER_RATIO)
        if jitter >= wanted:
            continue
        across = (
            f"; with {copies} replicas ({replicas.at}) {total} workers share the load and "
            f"draw from the same window, so the chance that some replica restarts all "
            f"{app.workers.value} of its workers at once is {copies} times one replica's"
            if replicas is not None and copies > 1
            else ""
        )
        yield rule.finding(
            app.max_requests_jitter.at,
            f"{_name(app, 'jitter')} {jitter} is {jitter / limit:.1%} of "
            f"{_name(app, 'max_requests')} {limit}: workers that share the load evenly reach "
            f"their limits within {jitter} requests of each other and restart almost together"
            f"{across}",
            _assign(app, "jitter", wanted),
            (app.max_requests.at,) + ((replicas.at,) if replicas is not None else ()),
        )


@_rule(
    "unresolved-variable",
    Severity.info,
    "a command-line word only the running container can expand: not checked",
    "the shell expands $VAR from the container's environment when it starts; "
    "check reads the files, never runs them (docs/check.md)",
)
def _unresolved(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for word in app.unresolved:
            kubelet = sorted(set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", word.value)))
            names = sorted(set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", word.value)))
            if kubelet:
                fix = (
                    f"check this manifest with the one that sets {', '.join(kubelet)} (the "
                    "overlay's ConfigMap or the container's env), or write the value"
                )
            elif names:
                fix = f"servertune check --env-file FILE ... (FILE holding {', '.join(n + '=...' for n in names)})"
            else:
                fix = "write the value in the command line, or check the file that supplies it"
            yield rule.finding(
                word.at,
                f"{word.value!r}: known only when it runs (the container's or platform's variables); {app.kind} was read "
                "without it, so whatever it sets was not checked",
                fix,
            )


@_rule(
    "config-not-found",
    Severity.info,
    "the command line names a config file that is not among the files read",
    "https://docs.gunicorn.org/en/stable/settings.html#config; "
    "https://uwsgi-docs.readthedocs.io/en/latest/Configuration.html",
)
def _config_missing(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        missing = app.missing_config
        if missing is None:
            continue
        if missing.value.startswith("python:"):
            # gunicorn's `-c python:package.module`: a module on the app's path, not a file.
            module = missing.value.removeprefix("python:").replace(".", "/")
            fix = f"servertune check {module}.py   (the module's file, from your repository)"
        else:
            fix = (
                f"servertune check {missing.value.rsplit('/', 1)[-1]}   (the file from your "
                "repository), or keep it where the Dockerfile's COPY puts it"
            )
        yield rule.finding(
            missing.at,
            f"{missing.value}: not in the build context or the files given, so its settings "
            f"were not checked; {app.kind} was read from its command line alone",
            fix,
        )


_COMPOSE_STOP = "https://docs.docker.com/reference/compose-file/services/#stop_grace_period"


@_rule(
    "grace-period-below-shutdown",
    Severity.warning,
    "the container is killed before preStop and the app server's graceful shutdown have finished",
    "terminationGracePeriodSeconds counts from the start of preStop; SIGKILL follows when it "
    f"ends: {_K8S_TERMINATION}; compose's stop_grace_period (10 s by default): {_COMPOSE_STOP}",
)
def _grace(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.grace_period_s is None or app.graceful_timeout is None:
            continue
        grace = box.grace_period_s
        if box.platform == "compose" and grace.default and app.graceful_timeout.default:
            continue  # both left at their defaults: nobody chose a shutdown time to keep
        prestop = box.prestop_s.value if box.prestop_s is not None else 0.0
        needed = prestop + app.graceful_timeout.value
        if grace.value < needed:
            related = (app.graceful_timeout.at,) + (
                (box.prestop_s.at,) if box.prestop_s is not None else ()
            )
            name = _stop_grace_name(box)
            wanted = math.ceil(needed) + 5
            before = f"preStop {_n(prestop)} s + " if box.platform == "kubernetes" else ""
            who = "the kubelet" if box.platform == "kubernetes" else "docker"
            yield rule.finding(
                grace.at,
                f"{name} {_shown(grace, ' s')} is below {before}the graceful timeout "
                f"{_shown(app.graceful_timeout, ' s')}: on every rollout {who} kills "
                "requests the server was still allowed to finish",
                f"{name}: {wanted}s" if box.platform == "compose" else f"{name}: {wanted}",
                related,
            )


#: gunicorn worker classes whose workers serve many requests at once on green threads.
_ASYNC_WORKERS = {"gevent", "eventlet", "tornado"}


@_rule(
    "liveness-kills-busy-pod",
    Severity.warning,
    "a liveness probe fails while every worker is busy on requests the timeout allows",
    "the probe is answered by the same workers; it fails after failureThreshold x periodSeconds: "
    + _K8S_PROBES,
)
def _liveness(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box, timeout = app.container, app.request_timeout
        if box is None or timeout is None or timeout.value <= 0:
            continue
        if app.interface == "asgi" or (
            app.worker_class is not None and app.worker_class.value in _ASYNC_WORKERS
        ):
            continue  # an event loop answers the probe beside slow requests
        for probe in box.probes:
            if probe.kind != "liveness" or not probe.target.startswith("httpGet"):
                continue
            window = probe.period_s * probe.failure_threshold
            if window < timeout.value:
                yield rule.finding(
                    probe.at,
                    f"the liveness probe gives up after {probe.failure_threshold} x "
                    f"{probe.period_s} s = {window} s, less than the request timeout "
                    f"{_shown(timeout, ' s')}: when every worker is busy on slow but legitimate "
                    "requests the kubelet restarts a healthy container and drops them all",
                    f"failureThreshold: {math.ceil(timeout.value / probe.period_s) + 1}",
                    (timeout.at,),
                )


@_rule(
    "liveness-same-as-readiness",
    Severity.info,
    "liveness and readiness probe the same endpoint with the same settings",
    "a busy pod should leave the Service (readiness) long before it is restarted (liveness): "
    + _K8S_PROBES,
)
def _same_probes(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None:
            continue
        by_kind = {p.kind: p for p in box.probes}
        live, ready = by_kind.get("liveness"), by_kind.get("readiness")
        if live is None or ready is None:
            continue
        fields = ("target", "period_s", "timeout_s", "failure_threshold", "initial_delay_s")
        if all(getattr(live, f) == getattr(ready, f) for f in fields):
            yield rule.finding(
                live.at,
                "the liveness probe is the readiness probe: the moment the pod is too busy to be "
                "ready it is also restarted, so an overload becomes a restart loop",
                "liveness: a higher failureThreshold (restart only after the request timeout)",
                (ready.at,),
            )


@_rule(
    "no-readiness-probe",
    Severity.info,
    "traffic reaches the container before the app server answers",
    "without a readiness probe a container is Ready as soon as it starts: " + _K8S_PROBES,
)
def _no_readiness(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.platform != "kubernetes" or not app.sockets or box.pod_ready_probe:
            continue  # a pod is Ready when all its containers are: a sidecar's probe counts
        if _exposed_bare(box):
            continue  # exposed-without-resources-or-probes says it, and more
        if not any(p.kind == "readiness" for p in box.probes):
            yield rule.finding(
                box.at,
                f"container {box.name!r} has no readiness probe: the Service sends it requests "
                "while the workers are still importing the app, and those connections wait or fail",
                f"readinessProbe: {{httpGet: {{path: /health, port: {_probe_port(app)}}}}}",
            )


def _probe_port(app: AppServer) -> str:
    """The port a probe of this app server should name: one it listens on (a container port
    named `http` may not exist)."""
    ports = [normalise(s.value)[1] for s in app.sockets if normalise(s.value)[0] != "unix"]
    return next((p for p in ports if p.isdigit()), "http")


def _exposed_bare(box: Container) -> bool:
    """A pod a LoadBalancer Service exposes, with no resources and no probe at all."""
    bare = (
        box.cpu_limit is None
        and box.cpu_request is None
        and box.memory_limit_mb is None
        and box.memory_request_mb is None
    )
    return box.exposed_by is not None and bare and not box.probes and not box.pod_ready_probe


_K8S_QOS = "https://kubernetes.io/docs/concepts/workloads/pods/pod-qos/#besteffort"


@_rule(
    "exposed-without-resources-or-probes",
    Severity.warning,
    "a pod behind a LoadBalancer Service has no resources and no probes",
    f"{_K8S_PROBES}; {_K8S_QOS} (a pod with no requests or limits is BestEffort: the first "
    "evicted under node pressure); " + _K8S_RESOURCES,
)
def _exposed(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[Location] = set()
    for app in c.apps:
        box = app.container
        if box is None or box.platform != "kubernetes" or not _exposed_bare(box):
            continue
        if box.at in seen or box.exposed_by is None:
            continue
        seen.add(box.at)
        port = _probe_port(app)
        yield rule.finding(
            box.at,
            f"container {box.name!r} is exposed by the LoadBalancer Service "
            f"`{box.exposed_by.value}` with no readiness or liveness probe and no CPU or memory "
            "request or limit: the balancer sends it requests while the workers are still "
            "starting and keeps sending them to a pod that hangs, and as a BestEffort pod it "
            f"is the first evicted when its node runs short, with its {app.workers.value} "
            "workers sized for no number of cores",
            f"readinessProbe: {{httpGet: {{path: /health, port: {port}}}}} and "
            f'resources: {{requests: {{cpu: "{app.workers.value}", memory: ...}}, limits: '
            f'{{cpu: "{app.workers.value}", memory: ...}}}}',
            (box.exposed_by.at,),
        )


_GUNICORN_ARBITER = (
    "gunicorn/arbiter.py (Arbiter.start() creates the listeners, which gunicorn/sock.py binds "
    "and listen()s in the master; run() then forks the workers, each of which imports the app "
    "in Worker.init_process() -> load_wsgi())"
)


@_rule(
    "readiness-tcp-before-workers",
    Severity.warning,
    "a tcpSocket readiness probe passes as soon as gunicorn's master listens, before any "
    "worker can answer",
    "a tcpSocket probe succeeds when the TCP connection is established, which the kernel does "
    "for a listening socket whatever its processes are doing; an httpGet probe needs a "
    f"response: {_K8S_PROBES}; {_GUNICORN_ARBITER}",
)
def _tcp_readiness(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.platform != "kubernetes" or not app.listens_before_app:
            continue
        if any(p.kind == "startup" and not p.target.startswith("tcpSocket") for p in box.probes):
            continue  # readiness runs only after a startup probe that needs an answer passed
        ports = {
            int(port)
            for host, port in (normalise(s.value) for s in app.sockets)
            if host != "unix" and port.isdigit()
        }
        for probe in box.probes:
            if probe.kind != "readiness" or not probe.target.startswith("tcpSocket"):
                continue
            if probe.port is None or probe.port not in ports:
                continue
            listens = next(s for s in app.sockets if normalise(s.value)[1] == str(probe.port))
            yield rule.finding(
                probe.at,
                f"the readiness probe opens a TCP connection to port {probe.port}, which "
                f"{app.kind}'s master listens on ({listens.at}) before its "
                f"{app.workers.value} worker(s) have "
                "imported the app: the kernel accepts the connection, the pod turns Ready and "
                "the Service sends it requests that wait in the listen queue for the workers "
                "to boot (or are reset if they fail to); later it stays Ready while every "
                "worker is stuck",
                f"readinessProbe: {{httpGet: {{path: /health, port: {probe.port}}}}}   (a path "
                "the app answers: only a booted worker responds)",
                (listens.at,),
            )


@_rule(
    "route-timeout-below-app-timeout",
    Severity.warning,
    "the Ingress or HTTPRoute gives up on a request the app server is still running",
    "the plan's timeout chain (`servertune explain`); ingress-nginx's annotations "
    "(proxy-read-timeout, "
    "seconds), Gateway API HTTPRouteTimeouts (request, backendRequest; GEP-2257 durations): "
    "https://gateway-api.sigs.k8s.io/guides/http-timeouts/",
)
def _route_timeout(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[tuple[Location, str]] = set()
    for app in c.apps:
        box, timeout = app.container, app.request_timeout
        if box is None or timeout is None or timeout.value <= 0 or not _caps_requests(app):
            continue
        wanted = timeout.value + READ_TIMEOUT_MARGIN_S
        for name, route in box.route_timeouts:
            if 0 < route.value < wanted and (route.at, name) not in seen:
                seen.add((route.at, name))
                value = f'"{_n(wanted)}"' if name.startswith("nginx.") else f"{_n(wanted)}s"
                yield rule.finding(
                    route.at,
                    f"{name} {_n(route.value)} s is not above the app server's "
                    f"{_name(app, 'timeout')} {_shown(timeout, ' s')} by {READ_TIMEOUT_MARGIN_S} s: "
                    "the client gets a 504 while the worker keeps running the request",
                    f"{name.rpartition(' ')[2]}: {value}",
                    (timeout.at,),
                )
