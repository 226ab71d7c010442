"""Deployments: an app server (uWSGI or gunicorn) and nginx in front, all rendered from a plan.

Configs are made exactly as a user makes them: `render_uwsgi(plan, layout)`,
`render_nginx(plan, backend, layout)`, `render_gunicorn(plan, layout)` from `plan_for(workload)`;
the harness only picks free ports (`place`) and points `app_dir` at the stack's directory, which
holds the benchmark's app.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from servertune.bench.harness.ports import LOOPBACK, free_port, free_port_block
from servertune.bench.harness.stats import group_members
from servertune.bench.harness.supervision import (
    READY_TIMEOUT_S,
    Server,
    ServerError,
    Stack,
    tool_path,
)
from servertune.render import TARGETS, render_gunicorn, render_nginx, render_uwsgi
from servertune.sizing import Plan
from servertune.targets.layout import Backend, Layout
from servertune.workload import Workload

__all__ = [
    "AsgiServer",
    "Deployment",
    "deploy_asgi",
    "deploy_command",
    "deploy_gunicorn",
    "deploy_uwsgi",
    "http_get",
    "place",
    "reload_nginx",
    "settle_note",
    "wait_answer",
    "wait_idle",
]


def place(workload: Workload, stack: Stack, sockets: int, **updates: Any) -> Workload:
    """The workload on free loopback ports, serving the app that lives in the stack's directory.

    `sockets` is how many consecutive per-worker ports to reserve (at least the plan's processes).
    """
    base = free_port_block(sockets)
    listen = free_port()
    while base <= listen < base + sockets:  # nothing is bound yet: the block may be handed out
        listen = free_port()
    # model_validate, not model_copy(update=...): the new values go through the allow-lists.
    return Workload.model_validate(
        {
            **workload.model_dump(),
            "bind_host": LOOPBACK,
            "listen_host": LOOPBACK,
            "base_port": base,
            "listen_port": listen,
            "app_dir": str(stack.dir),
            **updates,
        }
    )


#: How a load's leftovers are waited out: the app servers count as idle once they use less than
#: IDLE_CPU_S of CPU in an IDLE_WINDOW_S window (one clock tick is 0.01 s; a request in flight
#: on the balance app uses about half a core), for at most IDLE_LIMIT_S.
IDLE_WINDOW_S = 0.2
IDLE_CPU_S = 0.02
IDLE_LIMIT_S = 10.0


def wait_idle(cpu_seconds: Callable[[], float]) -> float:
    """Wait until the servers whose CPU seconds `cpu_seconds` sums have nothing left to serve
    (a whole IDLE_WINDOW_S using less than IDLE_CPU_S); the seconds it took.

    Every scenario that measures loads one after another on the same running servers calls
    this before each load (a `Deployment` through its own `wait_idle`), and records the wait as
    `settle_s` (`settle_note` sums them up). wrk closes its connections when its time is up, but
    the app still serves every request it had accepted or had queued in its listen backlog: up
    to one per connection of the load that just ended. Measured without this wait, the next
    load's first requests queue behind them, which puts a few hundred milliseconds into its p99
    (and only into the first level after a heavy one, so not alike for every layout). A server
    just started is still importing its app: that is waited out too.
    """
    start = time.monotonic()
    before = cpu_seconds()
    while time.monotonic() - start < IDLE_LIMIT_S:
        time.sleep(IDLE_WINDOW_S)
        now = cpu_seconds()
        if now - before < IDLE_CPU_S:
            break
        before = now
    return time.monotonic() - start


def settle_note(rows: Iterable[Mapping[str, Any]]) -> str:
    """The report's line on how long the loads waited for an idle app (their `settle_s`)."""
    waits = [float(row["settle_s"]) for row in rows if "settle_s" in row]
    if not waits:
        return "settle_s: no load waited for an idle app"
    return (
        f"settle_s: every load started on an idle app (less than {IDLE_CPU_S:g} s of app CPU "
        f"in {IDLE_WINDOW_S:g} s, waited at most {IDLE_LIMIT_S:g} s); the waits took "
        f"{min(waits):.2f}-{max(waits):.2f} s"
    )


@dataclass
class Deployment:
    """One configuration under test: app server process groups and the proxy in front."""

    name: str
    url: str
    app_servers: list[Server]
    #: The proxy in front of the app servers: nginx, or HAProxy where it takes nginx's place.
    nginx: Server
    files: dict[str, str]
    #: HAProxy in front of nginx, when the clients reach it first.
    front: Server | None = None
    #: The stats socket of a HAProxy that logs its requests (`haproxy_stats_name`).
    log_stats: str | None = None

    def app_cpu_seconds(self) -> float:
        """CPU seconds used so far by the app servers (not nginx)."""
        return sum(s.cpu_seconds() for s in self.app_servers)

    def proxy_cpu_seconds(self) -> float:
        """CPU seconds used so far by the proxies in front of the app servers."""
        return self.nginx.cpu_seconds() + (self.front.cpu_seconds() if self.front else 0.0)

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by every server of the deployment, nginx included."""
        return self.app_cpu_seconds() + self.proxy_cpu_seconds()

    def wait_idle(self) -> float:
        """Wait until the app servers have nothing left to serve (`wait_idle`); the seconds it took."""
        return wait_idle(self.app_cpu_seconds)

    def drain_fronts(self, stack: Stack, timeout_s: float) -> int | None:
        """Stop the proxies once each has answered every request it took in, the outer one
        first (`Stack.drain`): their request logs then hold every request the app servers
        answered (a proxy stopped at once drops the line of an answer still on its way). The
        log lines a logging HAProxy dropped meanwhile (`haproxy_dropped_logs`), if it has one."""
        dropped = None if self.log_stats is None else haproxy_dropped_logs(self.log_stats)
        for server in [*([self.front] if self.front else []), self.nginx]:
            stack.drain(server, timeout_s)
        return dropped

    def stop(self, stack: Stack) -> None:
        """Stop the proxies, then the app servers."""
        for server in [*([self.front] if self.front else []), self.nginx, *self.app_servers]:
            stack.stop(server)


def _start_nginx(stack: Stack, name: str, plan: Plan, conf_text: str, home: Path) -> Server:
    for temp in ("client_body_temp", "proxy_temp", "uwsgi_temp", "fastcgi_temp", "scgi_temp"):
        (home / temp).mkdir(exist_ok=True)
    conf = home / "nginx.conf"
    conf.write_text(conf_text)
    argv = [
        tool_path("nginx"),
        "-p", f"{home}/",
        "-c", str(conf),
        "-e", str(home / "error.log"),
        "-g", "daemon off;",
    ]  # fmt: skip
    return stack.start(f"{name}-nginx", "nginx", argv, ports=[plan.workload.listen_port])


def reload_nginx(nginx: Server, conf_text: str, timeout_s: float) -> None:
    """Write nginx's config and reload it (SIGHUP), as `nginx -s reload` does; return once every
    old worker has exited, i.e. has answered every request it had sent upstream.

    New workers start with the new config; old ones stop accepting, finish their requests in
    flight and exit. Raises ServerError when no new worker appears (a config nginx refused) or
    an old one outlives `timeout_s`.
    """
    conf = Path(nginx.argv[nginx.argv.index("-c") + 1])
    master = nginx.process.pid
    old = set(group_members(nginx.pgid)) - {master}
    tmp = conf.with_suffix(".tmp")
    tmp.write_text(conf_text)
    tmp.replace(conf)
    nginx.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        members = set(group_members(nginx.pgid)) - {master}
        if members - old and not members & old:
            return
        time.sleep(0.05)
    raise ServerError(
        f"{nginx.name}: reload did not finish within {timeout_s:g} s\n{nginx.log_tail()}"
    )


#: What nginx answers while the app server behind it is not serving yet.
GATEWAY_ERRORS = frozenset({502, 503, 504})


def http_get(url: str, path: str, timeout_s: float) -> tuple[int, bytes]:
    """One GET of `path` on the host and port of `url`: the status and the whole body."""
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout_s)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_answer(url: str, path: str = "/", timeout_s: float = READY_TIMEOUT_S) -> int:
    """GET `path` until the app behind nginx answers (not a gateway error); return its status."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            status, _ = http_get(url, path, timeout_s)
            if status not in GATEWAY_ERRORS:
                return status
            last = f"HTTP {status} from nginx"
        except OSError as error:
            last = str(error)
        time.sleep(0.1)
    raise ServerError(f"{url} did not answer GET {path} within {timeout_s:g} s ({last})")


def _wait_http(url: str, path: str | None = "/", timeout_s: float = READY_TIMEOUT_S) -> None:
    """GET `url` + `path` until it answers 200: the app behind nginx is imported and serving."""
    if path is None:
        return
    deadline = time.monotonic() + timeout_s
    status = 0
    while time.monotonic() < deadline:
        status = wait_answer(url, path, max(0.1, deadline - time.monotonic()))
        if status == 200:
            return
        time.sleep(0.1)
    raise ServerError(f"{url} did not answer 200 within {timeout_s:g} s (HTTP {status})")


def _behind_nginx(
    stack: Stack,
    name: str,
    plan: Plan,
    home: Path,
    nginx_text: str,
    app_servers: list[Server],
    files: dict[str, str],
    ready_path: str | None,
) -> Deployment:
    """Start nginx in front of the started app servers and wait until the app answers 200."""
    nginx = _start_nginx(stack, name, plan, nginx_text, home)
    deployment = Deployment(
        name=name,
        url=f"http://{LOOPBACK}:{plan.workload.listen_port}/",
        app_servers=app_servers,
        nginx=nginx,
        files=files,
    )
    _wait_http(deployment.url, ready_path)
    return deployment


def _gunicorn_env(home: Path, instance: str, env: Mapping[str, str]) -> dict[str, str]:
    # gunicorn 27 opens a control socket at $XDG_RUNTIME_DIR/gunicorn.ctl (else
    # ~/.gunicorn/gunicorn.ctl): one path for every instance on the machine. Give each
    # instance its own directory so they neither collide nor touch the user's home.
    runtime = home / f"{instance}-run"
    runtime.mkdir(mode=0o700)
    return {**env, "XDG_RUNTIME_DIR": str(runtime)}


#: A path nginx can be given unquoted in its config: nothing it would read as syntax.
SAFE_LOG_PATH = re.compile(r"\A/[A-Za-z0-9._/+@=,:-]{1,1000}\Z")
#: The access_log line servertune's nginx.conf has (templates/nginx.conf.j2).
_ACCESS_LOG = re.compile(r"^( *)access_log access\.log combined[^;\n]*;$", re.MULTILINE)


def _with_log(nginx_text: str, access_log: Path | None) -> str:
    """`nginx_text`, with `access_log` given: nginx logs to that file (absolute, of letters,
    digits and `._/+@=,:-` only: it is written into the config unquoted) in
    `logs.formats.nginx.TIMED`, unbuffered (a line is in the file once its answer is): what
    `measure --log` reads.

    A load generator hangs up on the requests in flight when its time is up; nginx would log
    each as a 499 with the app's time cut short where the client left (the app still serves it
    whole). With the timed log, nginx waits for the app's answer instead (`*_ignore_client_abort`),
    so every line holds the app's whole time: the benchmark's own hang-ups are not the traffic."""
    if access_log is None:
        return nginx_text
    from servertune.logs.formats.nginx import TIMED

    if not SAFE_LOG_PATH.match(str(access_log)):
        raise ValueError(f"access_log: {str(access_log)!r} is not a plain absolute path")

    def timed_line(match: re.Match[str]) -> str:
        pad = match.group(1)
        return (
            f"{pad}log_format timed '{TIMED}';\n{pad}access_log {access_log} timed;\n"
            f"{pad}proxy_ignore_client_abort on;\n{pad}uwsgi_ignore_client_abort on;"
        )

    text, count = _ACCESS_LOG.subn(timed_line, nginx_text)
    if count != 1:
        raise RuntimeError("gen nginx's access_log line changed: update deployments._ACCESS_LOG")
    return text


#: The frontend of servertune's HAProxy file (templates/haproxy.cfg.j2): its requests are logged.
_HAPROXY_FRONTEND = re.compile(r"^frontend servertune_lb\n", re.MULTILINE)
_HAPROXY_GLOBAL = re.compile(r"^global\n", re.MULTILINE)


def haproxy_stats_name(name: str) -> str:
    """The abstract Unix socket (Linux: no file, no path-length limit) on which the logged
    HAProxy of deployment `name` answers `show info`: unique to this harness process, and short
    whatever the name (an abstract name has the 107 bytes of a socket path at most)."""
    return f"servertune-{os.getpid()}-{zlib.crc32(name.encode()):08x}-stats"


def _haproxy_with_log(haproxy_text: str, stats: str) -> str:
    """`haproxy_text` with its frontend logging every request in HAProxy's HTTP log format
    (`option httplog`: the `haproxy` format `measure --log` reads; Tr is the app's time) to
    HAProxy's standard output, which the harness points at the --keep-log file. HAProxy writes
    no file of its own, only to syslog or a file descriptor, one unbuffered write per line (its
    configuration manual, `log`): as nginx's timed log, a line is in the file once its answer
    is. Without `option abortonclose` (off by default) a request the load generator hangs up on
    still goes to the app and is logged with the app's whole time, as nginx's
    `proxy_ignore_client_abort` does for the nginx rows. `dontlognull`: a connection that sent
    nothing (the harness's readiness probe) is no request, and nginx logs none either.

    With several threads, one that finds another writing to the file descriptor drops its line
    rather than wait (haproxy/haproxy#1861, "works as designed"), and counts it in `show info`'s
    DroppedLogs: the stats socket (`stats`, read-only level `user`) is how the run says how
    many (`haproxy_dropped_logs`)."""
    lines = "    log stdout format raw local0 info\n    option httplog\n    option dontlognull\n"
    text, count = _HAPROXY_FRONTEND.subn(lambda match: match.group(0) + lines, haproxy_text)
    if count != 1:
        raise RuntimeError("gen haproxy's frontend line changed: update _HAPROXY_FRONTEND")
    stats_line = f"    stats socket abns@{stats} level user\n"
    text, count = _HAPROXY_GLOBAL.subn(lambda match: match.group(0) + stats_line, text)
    if count != 1:
        raise RuntimeError("gen haproxy's global line changed: update _HAPROXY_GLOBAL")
    return text


def haproxy_dropped_logs(stats: str, timeout_s: float = 2.0) -> int | None:
    """The log lines HAProxy dropped so far (`show info`'s DroppedLogs on the abstract socket
    `stats`), or None when it does not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout_s)
            # HAProxy binds an abstract name padded with NULs to the whole sun_path (108
            # bytes; its `abnsz@`, 3.1 on, is the unpadded one): the client's must match.
            name = b"\0" + stats.encode()
            conn.connect(name.ljust(108, b"\0"))
            conn.sendall(b"show info\n")
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    except OSError:
        return None
    found = re.search(rb"^DroppedLogs: (\d+)$", answer, re.MULTILINE)
    return int(found.group(1)) if found else None


def deploy_command(
    stack: Stack,
    name: str,
    plan: Plan,
    backend: Backend,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    ready_path: str | None = "/",
    access_log: Path | None = None,
) -> Deployment:
    """An app server started by its own command line (gunicorn flags, a user's config file),
    bound to the plan's shared socket, behind `render_nginx(plan, backend, "shared")`: the same
    nginx servertune's shared-socket layout gets."""
    home = stack.dir / name
    home.mkdir()
    nginx_text = _with_log(render_nginx(plan, backend, "shared"), access_log)
    port = plan.shared_socket.port
    assert port is not None
    server_env = _gunicorn_env(home, name, env or {}) if backend == "gunicorn" else dict(env or {})
    app = stack.start(f"{name}-{backend}", backend, argv, ports=[port], env=server_env)
    return _behind_nginx(
        stack, name, plan, home, nginx_text, [app], {"nginx.conf": nginx_text}, ready_path
    )


def deploy_uwsgi(
    stack: Stack,
    name: str,
    plan: Plan,
    *,
    layout: Layout | None = None,
    thunder_lock: bool | None = None,
    env: Mapping[str, str] | None = None,
    ready_path: str | None = "/",
    access_log: Path | None = None,
) -> Deployment:
    """uWSGI from `render_uwsgi(plan, layout, thunder_lock=)`, nginx from `render_nginx(plan, "uwsgi", layout)`
    (both default to the plan's layout, as `servertune gen uwsgi` and `gen nginx` write it)."""
    home = stack.dir / name
    home.mkdir()
    layout = plan.socket_layout if layout is None else layout
    ini_text = render_uwsgi(plan, layout, thunder_lock=thunder_lock)
    nginx_text = _with_log(render_nginx(plan, "uwsgi", layout), access_log)
    ini = home / "uwsgi.ini"
    ini.write_text(ini_text)
    ports = [s.port for s in (plan.sockets if layout == "per-worker" else [plan.shared_socket])]
    app = stack.start(
        f"{name}-uwsgi", "uwsgi", [tool_path("uwsgi"), "--ini", str(ini)],
        ports=[p for p in ports if p is not None], env=env,
    )  # fmt: skip
    return _behind_nginx(
        stack,
        name,
        plan,
        home,
        nginx_text,
        [app],
        {"uwsgi.ini": ini_text, "nginx.conf": nginx_text},
        ready_path,
    )


def deploy_gunicorn(
    stack: Stack,
    name: str,
    plan: Plan,
    *,
    layout: Layout = "shared",
    env: Mapping[str, str] | None = None,
    python: str | None = None,
    ready_path: str | None = "/",
    access_log: Path | None = None,
) -> Deployment:
    """gunicorn from `render_gunicorn(plan, layout)` (one instance per socket when per-worker),
    nginx from `render_nginx(plan, "gunicorn", layout)`."""
    home = stack.dir / name
    home.mkdir()
    conf_text = render_gunicorn(plan, layout)
    nginx_text = _with_log(render_nginx(plan, "gunicorn", layout), access_log)
    conf = home / "gunicorn.conf.py"
    conf.write_text(conf_text)
    argv = [python or sys.executable, "-m", "gunicorn", "-c", str(conf)]
    app_servers = []
    instances = (
        [(f"{name}-gunicorn", plan.shared_socket, {})]
        if layout == "shared"
        else [
            (f"{name}-gunicorn-{i}", sock, {"SERVERTUNE_WORKER": str(i)})
            for i, sock in enumerate(plan.sockets)
        ]
    )
    for instance, sock, extra in instances:
        assert sock.port is not None
        instance_env = _gunicorn_env(home, instance, {**(env or {}), **extra})
        app_servers.append(
            stack.start(instance, "gunicorn", argv, ports=[sock.port], env=instance_env)
        )
    return _behind_nginx(
        stack,
        name,
        plan,
        home,
        nginx_text,
        app_servers,
        {"gunicorn.conf.py": conf_text, "nginx.conf": nginx_text},
        ready_path,
    )


#: The ASGI servers `deploy_asgi` starts from servertune's files, and how each is started.
AsgiServer = Literal["uvicorn", "gunicorn-asgi", "granian"]

#: What the clients reach in front of the ASGI servers: nginx with its `limit_conn` admission;
#: HAProxy in nginx's place (`gen haproxy-asgi-per-worker`: per-server maxconn and a queue
#: bounded by time); or HAProxy (`gen haproxy`) in front of that nginx.
AsgiFront = Literal["nginx", "haproxy", "haproxy-nginx"]

#: Each server's targets: (shared socket, per worker).
_ASGI_TARGETS: dict[AsgiServer, tuple[str, str]] = {
    "uvicorn": ("uvicorn", "uvicorn-per-worker"),
    "granian": ("granian", "granian-per-worker"),
    "gunicorn-asgi": ("gunicorn-asgi", "gunicorn-asgi-per-worker"),
}


def _asgi_file(plan: Plan, server: AsgiServer, per_worker: bool) -> tuple[str, str]:
    """The text and file name `servertune gen` writes for `server` in the layout."""
    target = TARGETS[_ASGI_TARGETS[server][per_worker]]
    return target.render(plan), target.filename


def deploy_asgi(
    stack: Stack,
    name: str,
    plan: Plan,
    server: AsgiServer,
    *,
    argv: Sequence[str] | None = None,
    per_worker: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    ready_path: str | None = "/",
    access_log: Path | None = None,
    front: AsgiFront = "nginx",
) -> Deployment:
    """An ASGI server from servertune's file for it (`uvicorn.sh`, `granian.sh`,
    `gunicorn-asgi.conf.py`) on the plan's shared socket, nginx from `render_nginx(plan, "asgi")`.

    `argv` replaces the rendered file by a command line (a baseline's defaults). `per_worker`
    starts the server's per-worker file (`uvicorn-per-worker.sh`, `granian-per-worker.sh`,
    `gunicorn-asgi-per-worker.conf.py`) once per socket (SERVERTUNE_WORKER=i) behind nginx's
    per-worker layout instead. `cwd` is where the servers start (a user's command line may name
    files relative to its project); `ready_path` None leaves the readiness check to the caller.
    `front` is what the clients reach (`AsgiFront`); `access_log` is its request log (nginx's
    timed log, or HAProxy's HTTP log where HAProxy is in nginx's place; with HAProxy in front of
    nginx, nginx's).
    """
    home = stack.dir / name
    home.mkdir()
    layout: Literal["per-worker", "shared"] = "per-worker" if per_worker else "shared"
    files = _front_files(name, plan, layout, front, access_log)
    # The launch scripts exec the server by name: this interpreter's environment comes first.
    path_env = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    starts: list[tuple[str, list[str], int | None, dict[str, str]]] = []
    if argv is not None:
        instance = f"{name}-{server}"
        extra = _gunicorn_env(home, instance, {}) if server == "gunicorn-asgi" else {}
        starts.append((instance, list(argv), plan.shared_socket.port, extra))
    else:
        text, filename = _asgi_file(plan, server, per_worker)
        conf = home / filename
        conf.write_text(text)
        files[conf.name] = text
        command = (
            [sys.executable, "-m", "gunicorn", "-c", str(conf)]
            if server == "gunicorn-asgi"
            else ["sh", str(conf)]
        )
        instances = (
            [(f"{name}-{server}-{i}", s, {"SERVERTUNE_WORKER": str(i)})
             for i, s in enumerate(plan.sockets)]
            if per_worker
            else [(f"{name}-{server}", plan.shared_socket, {})]
        )  # fmt: skip
        for instance, sock, extra in instances:
            if server == "gunicorn-asgi":
                extra = _gunicorn_env(home, instance, extra)
            starts.append((instance, command, sock.port, extra))
    kind = "gunicorn" if server == "gunicorn-asgi" else server
    app_servers = []
    for instance, command, port, extra in starts:
        assert port is not None
        app_servers.append(
            stack.start(
                instance,
                kind,
                command,
                ports=[port],
                env={**path_env, **(env or {}), **extra},
                cwd=cwd,
            )
        )
    if front == "nginx":
        return _behind_nginx(
            stack, name, plan, home, files["nginx.conf"], app_servers, files, ready_path
        )
    return _behind_haproxy(stack, name, plan, home, app_servers, files, ready_path, access_log)


def _front_files(
    name: str, plan: Plan, layout: Layout, front: AsgiFront, access_log: Path | None
) -> dict[str, str]:
    """The proxies' files for `front`: nginx.conf and/or haproxy.cfg, as `servertune gen`
    renders them for the plan."""
    from servertune.targets.haproxy import render_haproxy

    if front == "haproxy":
        if layout != "per-worker":
            raise ServerError("HAProxy in nginx's place fronts the per-worker servers only")
        text = render_haproxy(plan, "app")
        if access_log is not None:
            text = _haproxy_with_log(text, haproxy_stats_name(name))
        return {"haproxy.cfg": text}
    files = {"nginx.conf": _with_log(render_nginx(plan, "asgi", layout), access_log)}
    if front == "haproxy-nginx":
        files["haproxy.cfg"] = render_haproxy(plan)
    return files


def _behind_haproxy(
    stack: Stack,
    name: str,
    plan: Plan,
    home: Path,
    app_servers: list[Server],
    files: dict[str, str],
    ready_path: str | None,
    access_log: Path | None = None,
) -> Deployment:
    """Start HAProxy (and nginx behind it, when its file is there) in front of the started app
    servers and wait until the app answers 200 through it; HAProxy in nginx's place writes its
    request log (`_haproxy_with_log`) to `access_log`."""
    w = plan.workload
    conf = home / "haproxy.cfg"
    conf.write_text(files["haproxy.cfg"])
    nginx = (
        _start_nginx(stack, name, plan, files["nginx.conf"], home)
        if "nginx.conf" in files
        else None
    )
    port = w.lb_listen_port if nginx else w.listen_port
    haproxy = stack.start(
        f"{name}-haproxy", "haproxy", [tool_path("haproxy"), "-db", "-f", str(conf)], ports=[port],
        stdout=access_log if nginx is None else None,
    )  # fmt: skip
    deployment = Deployment(
        name=name,
        url=f"http://{LOOPBACK}:{port}/",
        app_servers=app_servers,
        nginx=nginx or haproxy,
        files=files,
        front=haproxy if nginx else None,
        log_stats=haproxy_stats_name(name) if access_log is not None and nginx is None else None,
    )
    _wait_http(deployment.url, ready_path)
    return deployment
