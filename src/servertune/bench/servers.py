"""Start nginx, uWSGI and gunicorn from servertune's rendered configs, and always stop them.

A `Stack` owns a temporary directory and every server started in it. Each server runs in a
process group (a session) of its own, so stopping it reaches every worker it forked, and a
Ctrl-C in the terminal reaches only the harness, which then stops the servers itself. On exit,
error, Ctrl-C or SIGTERM the stack stops every server (politely, then SIGKILL to the whole
group) and checks that none of their ports is still listening.

Configs are made exactly as a user makes them: `render_uwsgi(plan)`, `render_nginx(plan, ...)`,
`render_gunicorn(plan, ...)` from a `make_plan(workload)`; the harness only picks free ports and
points `app_dir` at the temporary directory holding the benchmark's app.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from servertune.bench.stats import group_cpu_seconds
from servertune.render import (
    render_granian,
    render_gunicorn,
    render_gunicorn_asgi,
    render_nginx,
    render_uvicorn,
    render_uvicorn_per_worker,
    render_uwsgi,
)
from servertune.sizing import Plan, plan_for
from servertune.workload import Workload

__all__ = [
    "AsgiServer",
    "Deployment",
    "Server",
    "ServerError",
    "Stack",
    "deploy_asgi",
    "deploy_gunicorn",
    "deploy_uwsgi",
    "free_port",
    "free_port_block",
    "listening_ports",
    "place",
    "plan_for",
    "tool_path",
]

LOOPBACK = "127.0.0.1"
#: How long a server may take to listen, and the app behind nginx to answer its first request.
READY_TIMEOUT_S = 30.0
#: How long a server may take to exit after its stop signal before the group gets SIGKILL.
STOP_TIMEOUT_S = 10.0
#: How long the kernel may take to release a stopped server's listening sockets.
PORT_RELEASE_TIMEOUT_S = 5.0
#: The last port a per-worker block may use (Workload.base_port allows up to 65000).
MAX_BLOCK_PORT = 65000
#: The lowest port handed out: above the registered services most machines run below 20000.
PORT_FLOOR = 20000
#: Where Linux keeps the ephemeral port range, and its default when it cannot be read.
EPHEMERAL_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
DEFAULT_EPHEMERAL_RANGE = (32768, 60999)

# The signal each server's leader gets first; the rest of its group is left to the leader, then
# SIGKILLed if still there. uWSGI: SIGINT kills its workers at once (SIGTERM with die-on-term
# waits for requests). gunicorn: SIGTERM; its "quick" SIGINT calls sys.exit() inside the signal
# handler and, sent to a gthread worker, sometimes deadlocks it (measured: 1 stop in 3 hung until
# SIGKILL); the harness stops gunicorn only when no request is in flight, so TERM is as quick.
# nginx: SIGTERM is its fast shutdown.
STOP_SIGNALS: Mapping[str, signal.Signals] = {
    "uwsgi": signal.SIGINT,
    "gunicorn": signal.SIGTERM,
    "nginx": signal.SIGTERM,
}
# Grace before SIGKILL, where a kind needs less than STOP_TIMEOUT_S: uvicorn serving asgiref's
# single-thread bridge may hold seconds of queued blocking calls that a graceful stop would wait out;
# granian, stopped after an overload run, would wait its kill timeout for the requests it queued.
STOP_GRACE_S: Mapping[str, float] = {"uvicorn": 1.0, "granian": 2.0}


class ServerError(RuntimeError):
    """A server did not start, did not stop, or left a port bound."""


# --- ports -----------------------------------------------------------------------------------------


def _ephemeral_range() -> tuple[int, int]:
    """The kernel's range for outgoing connections' local ports."""
    try:
        low, high = (int(v) for v in Path(EPHEMERAL_RANGE_FILE).read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL_RANGE
    return low, high


def _bindable(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def free_port_block(count: int, host: str = LOOPBACK, attempts: int = 200) -> int:
    """The first of `count` consecutive ports free right now, outside the ephemeral range.

    bind(0) would hand out ports from the kernel's ephemeral range, where the load generator's,
    nginx's and the readiness probes' own connections also take their local ports: one of those
    left in TIME_WAIT on a port of the block makes a server's later bind() fail (seen under load).
    So blocks come from below (or above) that range, at a random place, each port checked by a bind.
    """
    low, high = _ephemeral_range()
    spans = [(PORT_FLOOR, low - count), (high + 1, MAX_BLOCK_PORT - count + 1)]
    bases = [range(a, b + 1) for a, b in spans if b >= a]
    if not bases:
        raise ServerError(f"no room for {count} ports outside the ephemeral range {low}-{high}")
    pick = random.SystemRandom()
    for _ in range(attempts):
        first = pick.choice(pick.choice(bases))
        if all(_bindable(first + i, host) for i in range(count)):
            return first
    raise ServerError(f"no block of {count} consecutive free ports found in {attempts} attempts")


def free_port(host: str = LOOPBACK) -> int:
    """One port nothing listens on right now, outside the ephemeral range (see free_port_block)."""
    return free_port_block(1, host)


def listening_ports() -> set[int]:
    """Every TCP port in LISTEN state on this machine (IPv4 and IPv6), from /proc/net."""
    ports: set[int] = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = Path("/proc/net", name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A":  # TCP_LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _wait_listening(port: int, host: str, deadline: float, alive: Callable[[], bool]) -> None:
    while time.monotonic() < deadline:
        if not alive():
            raise ServerError("exited before listening")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise ServerError(f"not listening on {host}:{port} after {READY_TIMEOUT_S:g} s")


# --- servers ---------------------------------------------------------------------------------------


@dataclass
class Server:
    """One started server: its process (leader of its own group), ports and log file."""

    name: str
    kind: str
    argv: list[str]
    process: subprocess.Popen[bytes]
    ports: tuple[int, ...]
    log: Path
    stop_signal: signal.Signals
    stopped: bool = False

    @property
    def pgid(self) -> int:
        """The process group id: the leader's pid (started with a new session)."""
        return self.process.pid

    def cpu_seconds(self) -> float:
        """CPU seconds the whole process group has used so far."""
        return group_cpu_seconds(self.pgid)

    def log_tail(self, lines: int = 20) -> str:
        """The end of the server's output, for error messages."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Stack:
    """A temporary directory and every server started in it; `with Stack() as s:` stops them all."""

    label: str = "bench"
    dir: Path = field(init=False)
    servers: list[Server] = field(default_factory=list, init=False)
    #: (server name, "started" | "stopped") in order: the smoke tests check the pairs.
    events: list[tuple[str, str]] = field(default_factory=list, init=False)
    _previous_handlers: dict[int, Any] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"servertune-{self.label}-"))

    def __enter__(self) -> Stack:
        # SIGTERM/SIGHUP would end the harness without running `finally` blocks; turn them into
        # SystemExit so the servers are stopped just as on Ctrl-C.
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self._previous_handlers[sig] = signal.signal(sig, _exit_on_signal)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        try:
            self.stop_all()
        finally:
            for sig, handler in self._previous_handlers.items():
                signal.signal(sig, handler)
            shutil.rmtree(self.dir, ignore_errors=True)

    def start(
        self,
        name: str,
        kind: str,
        argv: Sequence[str],
        *,
        ports: Sequence[int],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Server:
        """Start `argv` in its own process group, wait until every port listens."""
        log = self.dir / f"{name}.log"
        handle = log.open("wb")
        try:
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                cwd=cwd or self.dir,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        finally:
            handle.close()
        server = Server(
            name=name,
            kind=kind,
            argv=list(argv),
            process=process,
            ports=tuple(ports),
            log=log,
            stop_signal=STOP_SIGNALS.get(kind, signal.SIGTERM),
        )
        self.servers.append(server)
        self.events.append((name, "started"))
        deadline = time.monotonic() + READY_TIMEOUT_S
        try:
            for port in ports:
                _wait_listening(port, LOOPBACK, deadline, lambda: process.poll() is None)
        except ServerError as error:
            self.stop(server)
            raise ServerError(f"{name}: {error}\n{server.log_tail()}") from None
        return server

    def stop(self, server: Server) -> None:
        """Stop one server's whole group: its stop signal, then SIGKILL; then check its ports."""
        if server.stopped:
            return
        with contextlib.suppress(ProcessLookupError):
            server.process.send_signal(server.stop_signal)
        try:
            server.process.wait(timeout=STOP_GRACE_S.get(server.kind, STOP_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            _signal_group(server.pgid, signal.SIGKILL)
            server.process.wait(timeout=STOP_TIMEOUT_S)
        # Workers may outlive their master for a moment: make sure the group is empty.
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _group_alive(server.pgid) and time.monotonic() < deadline:
            _signal_group(server.pgid, signal.SIGKILL)
            time.sleep(0.05)
        server.stopped = True
        self.events.append((server.name, "stopped"))
        deadline = time.monotonic() + PORT_RELEASE_TIMEOUT_S
        while (still := set(server.ports) & listening_ports()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if still:
            raise ServerError(f"{server.name}: ports {sorted(still)} still listening after stop")

    def record(self) -> list[dict[str, Any]]:
        """Every server started, its process group, ports and whether it was stopped."""
        return [
            {
                "name": s.name,
                "kind": s.kind,
                "pgid": s.pgid,
                "ports": list(s.ports),
                "stopped": s.stopped,
            }
            for s in self.servers
        ]

    def stop_all(self) -> None:
        """Stop every server, last started first; report the first failure after trying all."""
        errors: list[ServerError] = []
        for server in reversed(self.servers):
            try:
                self.stop(server)
            except ServerError as error:
                errors.append(error)
        if errors:
            raise errors[0]


def _exit_on_signal(signum: int, frame: types.FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- deployments: app server(s) + nginx, from a plan -----------------------------------------------


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


@dataclass
class Deployment:
    """One configuration under test: app server process groups and the nginx in front."""

    name: str
    url: str
    app_servers: list[Server]
    nginx: Server
    files: dict[str, str]

    def app_cpu_seconds(self) -> float:
        """CPU seconds used so far by the app servers (not nginx)."""
        return sum(s.cpu_seconds() for s in self.app_servers)

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by every server of the deployment, nginx included."""
        return self.app_cpu_seconds() + self.nginx.cpu_seconds()

    def stop(self, stack: Stack) -> None:
        """Stop nginx, then the app servers."""
        for server in [self.nginx, *self.app_servers]:
            stack.stop(server)


def tool_path(name: str) -> str:
    """An executable: next to this interpreter (the venv's uwsgi), on PATH, or in /usr/sbin."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise ServerError(f"{name} is not installed (servertune[servers] installs uwsgi/gunicorn)")
    return found


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


def _wait_http(url: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """GET `url` until it answers 200: the app behind nginx is imported and serving."""
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        connection = http.client.HTTPConnection(host, int(port), timeout=timeout_s)
        try:
            connection.request("GET", "/")
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                return
            last = f"HTTP {response.status}"
        except OSError as error:
            last = str(error)
        finally:
            connection.close()
        time.sleep(0.1)
    raise ServerError(f"{url} did not answer 200 within {timeout_s:g} s ({last})")


def deploy_uwsgi(
    stack: Stack,
    name: str,
    plan: Plan,
    *,
    layout: Literal["per-worker", "shared"] = "per-worker",
    uwsgi_ini: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Deployment:
    """uWSGI from `render_uwsgi(plan)` (or a given ini), nginx from `render_nginx(plan, "uwsgi")`."""
    home = stack.dir / name
    home.mkdir()
    ini_text = uwsgi_ini if uwsgi_ini is not None else render_uwsgi(plan)
    nginx_text = render_nginx(plan, "uwsgi", layout)
    ini = home / "uwsgi.ini"
    ini.write_text(ini_text)
    ports = [s.port for s in (plan.sockets if layout == "per-worker" else [plan.shared_socket])]
    app = stack.start(
        f"{name}-uwsgi", "uwsgi", [tool_path("uwsgi"), "--ini", str(ini)],
        ports=[p for p in ports if p is not None], env=env,
    )  # fmt: skip
    nginx = _start_nginx(stack, name, plan, nginx_text, home)
    deployment = Deployment(
        name=name,
        url=f"http://{LOOPBACK}:{plan.workload.listen_port}/",
        app_servers=[app],
        nginx=nginx,
        files={"uwsgi.ini": ini_text, "nginx.conf": nginx_text},
    )
    _wait_http(deployment.url)
    return deployment


def deploy_gunicorn(
    stack: Stack,
    name: str,
    plan: Plan,
    *,
    layout: Literal["per-worker", "shared"] = "shared",
    env: Mapping[str, str] | None = None,
    python: str | None = None,
) -> Deployment:
    """gunicorn from `render_gunicorn(plan, layout)` (one instance per socket when per-worker),
    nginx from `render_nginx(plan, "gunicorn", layout)`."""
    home = stack.dir / name
    home.mkdir()
    conf_text = render_gunicorn(plan, layout)
    nginx_text = render_nginx(plan, "gunicorn", layout)
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
        # gunicorn 27 opens a control socket at $XDG_RUNTIME_DIR/gunicorn.ctl (else
        # ~/.gunicorn/gunicorn.ctl): one path for every instance on the machine. Give each
        # instance its own directory so they neither collide nor touch the user's home.
        runtime = home / f"{instance}-run"
        runtime.mkdir(mode=0o700)
        instance_env = {**(env or {}), **extra, "XDG_RUNTIME_DIR": str(runtime)}
        app_servers.append(
            stack.start(instance, "gunicorn", argv, ports=[sock.port], env=instance_env)
        )
    nginx = _start_nginx(stack, name, plan, nginx_text, home)
    deployment = Deployment(
        name=name,
        url=f"http://{LOOPBACK}:{plan.workload.listen_port}/",
        app_servers=app_servers,
        nginx=nginx,
        files={"gunicorn.conf.py": conf_text, "nginx.conf": nginx_text},
    )
    _wait_http(deployment.url)
    return deployment


#: The ASGI servers `deploy_asgi` starts from servertune's files, and how each is started.
AsgiServer = Literal["uvicorn", "gunicorn-asgi", "granian"]


def deploy_asgi(
    stack: Stack,
    name: str,
    plan: Plan,
    server: AsgiServer,
    *,
    argv: Sequence[str] | None = None,
    per_worker: bool = False,
    env: Mapping[str, str] | None = None,
) -> Deployment:
    """An ASGI server from servertune's file for it (`uvicorn.sh`, `granian.sh`,
    `gunicorn-asgi.conf.py`) on the plan's shared socket, nginx from `render_nginx(plan, "asgi")`.

    `argv` replaces the rendered file by a command line (a baseline's defaults). `per_worker`
    starts `uvicorn-per-worker.sh` once per socket (SERVERTUNE_WORKER=i) behind nginx's
    per-worker layout instead.
    """
    home = stack.dir / name
    home.mkdir()
    layout: Literal["per-worker", "shared"] = "per-worker" if per_worker else "shared"
    nginx_text = render_nginx(plan, "asgi", layout)
    # The launch scripts exec the server by name: this interpreter's environment comes first.
    path_env = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    files = {"nginx.conf": nginx_text}
    starts: list[tuple[str, list[str], int | None, dict[str, str]]] = []
    if per_worker:
        script = home / "uvicorn-per-worker.sh"
        script.write_text(render_uvicorn_per_worker(plan))
        files[script.name] = script.read_text()
        for index, sock in enumerate(plan.sockets):
            worker = {"SERVERTUNE_WORKER": str(index)}
            starts.append((f"{name}-uvicorn-{index}", ["sh", str(script)], sock.port, worker))
    elif argv is not None:
        starts.append((f"{name}-{server}", list(argv), plan.shared_socket.port, {}))
    else:
        extra: dict[str, str] = {}
        if server == "gunicorn-asgi":
            text = render_gunicorn_asgi(plan)
            conf = home / "gunicorn-asgi.conf.py"
            command = [sys.executable, "-m", "gunicorn", "-c", str(conf)]
            runtime = home / "gunicorn-run"  # gunicorn 27's control socket: one per instance
            runtime.mkdir(mode=0o700)
            extra["XDG_RUNTIME_DIR"] = str(runtime)
        else:
            text = render_uvicorn(plan) if server == "uvicorn" else render_granian(plan)
            conf = home / f"{server}.sh"
            command = ["sh", str(conf)]
        conf.write_text(text)
        files[conf.name] = text
        starts.append((f"{name}-{server}", command, plan.shared_socket.port, extra))
    kind = "gunicorn" if server == "gunicorn-asgi" else server
    app_servers = []
    for instance, command, port, extra in starts:
        assert port is not None
        app_servers.append(
            stack.start(
                instance, kind, command, ports=[port], env={**path_env, **(env or {}), **extra}
            )
        )
    nginx = _start_nginx(stack, name, plan, nginx_text, home)
    deployment = Deployment(
        name=name,
        url=f"http://{LOOPBACK}:{plan.workload.listen_port}/",
        app_servers=app_servers,
        nginx=nginx,
        files=files,
    )
    _wait_http(deployment.url)
    return deployment
