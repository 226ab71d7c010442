"""Sockets and accepting: how workers share (or each own) their listening socket, the listen queue
against the kernel's cap, and the accept lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from servertune.check.dependencies import uvloop_for
from servertune.check.model import AppServer, Finding, Location, Setting, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import SPELLING, as_shown, assignment, spelled
from servertune.sizing.defaults import THUNDER_LOCK_MIN_PROCESSES

#: The measured cost of a shared socket against one socket per worker behind nginx least_conn,
#: at concurrency = cores, every load from an idle app (docs/benchmarks.md, "Every load from an
#: idle app"): what a finding may promise, and no more.
_BALANCE_MEASURED = "1.04-1.06x the req/s and 1.08-1.21x lower p99 at concurrency = cores"


_UWSGI_SERIALIZING_ACCEPT = (
    "https://uwsgi-docs.readthedocs.io/en/latest/articles/SerializingAccept.html"
)


#: gunicorn's own measurement of the same choice (docs/benchmarks.md, `hol`): gthread behind
#: nginx, medians of 3 runs with a 10 s call in flight.
_HOL_MEASURED = "/quick p99 14.4 ms and max 18.1 ms, against 18.4 ms and 23.1 ms on one socket"

_NGINX_LEAST_CONN = "https://nginx.org/en/docs/http/ngx_http_upstream_module.html#least_conn"


#: The app bench balance measured: half of each request's service time holds the GIL. For a
#: workload that holds it less, the benchmark says nothing, and neither does the rule.
BALANCE_CPU_FRACTION = 0.5


@check_rule(
    "shared-socket",
    Severity.advice,
    "several multi-threaded processes behind nginx accept from one socket",
    "servertune bench balance for uWSGI (per-worker sockets + least_conn measured "
    f"{_BALANCE_MEASURED}), {_UWSGI_SERIALIZING_ACCEPT}; servertune bench hol for gunicorn "
    f"({_HOL_MEASURED}); {_NGINX_LEAST_CONN}",
    kind="advice",
)
def shared_socket(rule: Rule, c: Context) -> Iterator[Finding]:
    # Said only where it was measured and where its fix fits: an nginx of the same run passes
    # to the shared socket, so one socket per worker behind that nginx's least_conn is a change
    # of two files the user gave. Without nginx (uWSGI serving HTTP itself or through its HTTP
    # router, gunicorn straight behind a cloud load balancer, servertune's gateway layout)
    # there is no least_conn to move the choice to: nothing is said.
    # (An Ingress's nginx balances over pods, not over a pod's worker sockets: not it.)
    fronted = {id(link.app): link for link in c.links if not link.passing.annotations}
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
            measured = f"per-worker uWSGI sockets behind least_conn measured {_BALANCE_MEASURED}"
            backing = (
                f"servertune bench balance (uWSGI behind nginx: {_BALANCE_MEASURED}); "
                f"{_UWSGI_SERIALIZING_ACCEPT}; {_NGINX_LEAST_CONN}"
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
            measured = f"gunicorn per socket behind least_conn measured {_HOL_MEASURED}"
            backing = f"servertune bench hol ({_HOL_MEASURED}); {_NGINX_LEAST_CONN}"
        workload = (
            "the workload given"
            if c.plan is not None
            else "an app holding the GIL half of each request (the benchmark's)"
        )
        yield rule.finding(
            app.workers.at,
            f"for {workload} servertune's plan is one socket per process behind nginx "
            f"least_conn, not {app.workers.value} processes x {app.threads.value} threads "
            f"accepting from the one socket nginx passes to ({nginx_at}): {how}; {measured}",
            fix,
            (nginx_at,),
            backing=backing,
        )


@check_rule(
    "granian-workers-share-a-port",
    Severity.advice,
    "several granian workers accept from one port",
    "servertune bench asgi (busiest process's share of requests: 0.50-0.53 with a socket per "
    "worker, up to 0.80 with one shared socket); emmett-framework/granian#544, #843, #849 "
    "(uneven load between workers on one port, closed upstream as expected behaviour); since "
    "granian 2.8 each worker binds its own SO_REUSEPORT socket on Linux (granian#897), which "
    "the kernel fills by a hash of each connection's addresses, whatever the worker's load",
    kind="advice",
)
def granian_workers_share_a_port(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "granian" or app.workers.value < 2 or app.mapped_sockets:
            continue
        yield rule.finding(
            app.workers.at,
            "for any workload servertune's plan is one single-worker granian per socket behind "
            f"nginx least_conn, not {app.workers.value} workers on one port: the kernel, not "
            "their load, decides which worker gets a connection (servertune bench asgi: the "
            "busiest process took up to 0.80 of the requests on one port, 0.50-0.53 with a "
            "socket each)",
            "one single-worker granian per socket behind nginx least_conn "
            "(servertune gen granian-per-worker and gen nginx-asgi-per-worker)",
        )


@check_rule(
    "uvicorn-workers-nagle",
    # Latency (an answer's body waits up to 40 ms), not a lost request: a fault graded info.
    Severity.info,
    "uvicorn --workers N on a TCP port leaves Nagle's algorithm on",
    "a loopback capture (tcpdump) of uvicorn 0.54 --workers 2: each answer's body left 44 ms "
    "after its headers, when the client's delayed ACK came; with --workers 1 0.3 ms. "
    "Kludex/uvicorn#3149 (open): Config.bind_socket() leaves the socket's protocol at 0, and "
    "asyncio sets TCP_NODELAY only on sockets that read IPPROTO_TCP; `servertune bench app` "
    "(FastAPI /io: p50 96 ms against 55 ms)",
    kind="fault",
)
def uvicorn_workers_nagle(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "uvicorn" or app.workers.value < 2 or app.mapped_sockets:
            continue
        if app.event_loop is not None and app.event_loop.value == "uvloop":
            # uvloop sets TCP_NODELAY on each transport it makes (MagicStack/uvloop
            # uvloop/handles/tcp.pyx, TCPTransport.new: `handle._set_nodelay()`).
            continue
        tcp = [s for s in app.sockets if not s.value.startswith("unix:")]
        if not tcp or app.listener_nodelay or not _reused(app, c):
            continue
        packaging = _uvloop_absent(app, c)
        if packaging is None:
            continue
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} uvicorn workers on {tcp[0].value} with {packaging}: uvicorn "
            "binds the port in "
            "its supervisor and never turns TCP_NODELAY on for the connections its workers "
            "accept, so every answer's body waits up to 40 ms for the peer's delayed ACK after "
            "its headers (`fastapi run --workers N` and `uvicorn.run(workers=N)` do the same), "
            "on asyncio's loop: uvloop, which `--loop auto` picks when it is installed "
            "(`uvicorn[standard]`, `fastapi[standard]`), sets TCP_NODELAY on each connection",
            "a unix socket (--uds), one single-worker uvicorn per port "
            "(servertune gen uvicorn-per-worker), gunicorn with uvicorn's worker (gunicorn sets "
            "TCP_NODELAY on its listener), servertune gen uvicorn's launcher, or uvloop "
            "(`--loop uvloop`; uvicorn[standard] installs it)",
            (tcp[0].at,),
        )


def _uvloop_absent(app: AppServer, c: Context) -> str | None:
    """How `app` is shown to run on asyncio's loop, said for the finding; None when it may
    run on uvloop. `--loop asyncio` shows it. Otherwise `--loop auto` picks uvloop when it
    is installed, so asyncio is shown only by packaging in the folder of a file of the launch,
    or above it, that names uvicorn or fastapi while none there installs uvloop
    (`uvicorn[standard]`): with no packaging here naming the server (a requirements file
    copied from elsewhere, a lock not in the tree) uvloop may well be installed (seen on
    Opentrons/opentrons, pingcap/autoflow, whose lock files install it)."""
    if app.event_loop is not None and app.event_loop.value == "asyncio":
        return f"--loop asyncio ({app.event_loop.at})"
    files = [app.file, *(at.file for at in app.launched_by)]
    if app.container is not None:
        files.append(app.container.at.file)
    if uvloop_for(files, c.packaging.uvloop) is not None:
        return None
    named = uvloop_for(files, c.packaging.server)
    if named is None:
        return None
    return f"no uvloop installed ({named} names the server, and no packaging here uvloop)"


def _reused(app: AppServer, c: Context) -> bool:
    """A client may send `app` a second request on one connection, where the delayed ACK
    bites (the first answer on a connection is not delayed: Kludex/uvicorn#3149): no front
    was found (any client may), or a front that keeps connections to it (a load balancer's
    pool, ingress-nginx's upstream keep-alive, an nginx `upstream` with `keepalive` and
    `proxy_http_version 1.1`). Behind only nginx passes that open a connection per request,
    no answer waits."""
    passes = [link for link in c.links if link.app is app]
    if not passes or any(link.app is app for link in c.balancer_links):
        return True
    return any(
        link.passing.annotations
        or (
            link.upstream is not None
            and link.upstream.keepalive is not None
            and link.passing.http11
        )
        for link in passes
    )


@check_rule(
    "backlog-over-somaxconn",
    Severity.warning,
    "a listen backlog above net.core.somaxconn is silently truncated",
    "https://man7.org/linux/man-pages/man2/listen.2.html",
    kind="fault",
)
def backlog_over_somaxconn(rule: Rule, c: Context) -> Iterator[Finding]:
    machine = (c.plan.machine if c.plan else c.machine).somaxconn
    # (setting, its name, the fix, the somaxconn it runs under, the server's kind)
    settings: list[tuple[Setting[int], str, str, int, str]] = []
    for app in c.apps:
        if "backlog" not in SPELLING.get(app.kind, {}) or "backlog" in app.unknown:
            continue  # no option sets it (Daphne: Twisted's 50), or only the server knows it
        somaxconn = _somaxconn(app, machine).value
        fix = f"{assignment(app, 'backlog', somaxconn)}   (or raise net.core.somaxconn)"
        settings.append((app.backlog, spelled(app, "backlog"), fix, somaxconn, app.kind))
    for nginx in c.nginx:
        fix = f"listen ... backlog={machine};"
        settings.extend(
            (b, "listen ... backlog", fix, machine, "nginx") for b in nginx.listen_backlogs
        )
    for backlog, name, fix, somaxconn, kind in settings:
        if backlog.value <= somaxconn:
            continue
        said = f"{name} {as_shown(backlog)} is above net.core.somaxconn {somaxconn}: "
        if kind == "uwsgi":
            # uWSGI compares `listen` with somaxconn itself and exits (core/socket.c).
            yield rule.finding(
                backlog.at,
                said + "uWSGI refuses to start (`Listen queue size is greater than the system "
                "max net.core.somaxconn`)",
                fix,
            )
            continue
        # Every other server passes the number to listen(2), which caps it silently: the
        # server runs with the smaller queue, so the number only misleads (info, not a fault).
        finding = rule.finding(
            backlog.at,
            said + f"the kernel silently caps the queue at {somaxconn} (listen(2)), so the "
            "queue this number promises does not exist",
            fix,
        )
        yield replace(finding, severity=Severity.info)


@check_rule(
    "listen-queue-zero",
    Severity.warning,
    "a listen queue of 0 keeps no connection waiting for a busy worker",
    "https://uwsgi-docs.readthedocs.io/en/latest/Options.html#listen (applied as soon as it is "
    "read, before placeholders are expanded); https://man7.org/linux/man-pages/man2/listen.2.html",
    kind="fault",
)
def listen_queue_zero(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.backlog.value != 0 or app.backlog.default or "backlog" in app.unknown:
            continue
        yield rule.finding(
            app.backlog.at,
            f"{spelled(app, 'backlog')} is 0 as the server reads it"
            + (
                " (uWSGI reads `listen` before it expands $(VAR), %(option) and @(file), so a "
                "placeholder there is 0)"
                if app.kind == "uwsgi"
                else ""
            )
            + ": the kernel keeps almost no connection waiting, and a burst while every "
            "worker is busy is refused",
            _backlog_fix(app, _somaxconn(app, (c.plan.machine if c.plan else c.machine).somaxconn)),
        )


def _somaxconn(app: AppServer, machine: int) -> Setting[int]:
    """The somaxconn the server's listen backlog is capped by: its container's own
    (`sysctls`), else this machine's (default=True: the deployment's host may differ)."""
    box = app.container
    if box is not None and box.somaxconn is not None:
        return box.somaxconn
    return Setting(machine, Location(app.file), default=True)


def _backlog_fix(app: AppServer, somaxconn: Setting[int]) -> str:
    """A backlog to write: the container's declared somaxconn, or this machine's with the
    bound said (uWSGI refuses to start with `listen` above the host's somaxconn)."""
    fix = f"{assignment(app, 'backlog', somaxconn.value)}   (the number itself, not a placeholder"
    if not somaxconn.default:
        return f"{fix}; the container's net.core.somaxconn, {somaxconn.at})"
    refuses = ": uWSGI refuses to start above it" if app.kind == "uwsgi" else ""
    return (
        f"{fix}; at most net.core.somaxconn where it runs, as `sysctl net.core.somaxconn` "
        f"shows or the container's `sysctls` set it{refuses})"
    )


@check_rule(
    "thunder-lock",
    Severity.advice,
    "many uWSGI processes sharing a socket wake together on every connection",
    f"{_UWSGI_SERIALIZING_ACCEPT}; servertune bench balance (2 processes: no measurable gain)",
    kind="advice",
)
def thunder_lock(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.sized():
        if app.kind != "uwsgi" or app.workers.value < THUNDER_LOCK_MIN_PROCESSES:
            continue
        if app.mapped_sockets:
            continue
        if app.thunder_lock is not None and app.thunder_lock.value:
            continue
        if app.missing_config is not None:
            continue  # the config file the command names, not read, may set it
        # Processes set by an environment variable (`ENV UWSGI_PROCESSES 16`): the line goes
        # into the config file the command names, where uWSGI's other options are.
        at = app.config_file if app.workers_env and app.config_file else app.workers.at
        yield rule.finding(
            at,
            f"for {THUNDER_LOCK_MIN_PROCESSES} or more processes on one socket servertune's plan "
            f"is thunder-lock (with 2 bench balance measured no gain; uWSGI's article names "
            f"the cost): {_how_many(app)} accept from the same socket without it, "
            "so each connection wakes every process (thundering herd), which costs more the "
            "more processes wait",
            "thunder-lock = true",
        )


def _how_many(app: AppServer) -> str:
    """The processes that accept: `16 processes`, or with uWSGI's cheaper mode `up to 16
    processes (cheaper = 2 at idle, more under load)`."""
    if app.cheaper is None or app.cheaper.value >= app.workers.value:
        return f"{app.workers.value} processes"
    return (
        f"up to {app.workers.value} processes (cheaper mode: {app.cheaper.value} "
        "at idle, more under load)"
    )
