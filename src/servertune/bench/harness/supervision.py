"""Start servers in process groups of their own, and always stop them: the `Stack`.

A `Stack` owns a temporary directory and every server started in it. Each server runs in a
process group (a session) of its own, so stopping it reaches every worker it forked, and a
Ctrl-C in the terminal reaches only the harness, which then stops the servers itself. On exit,
error, Ctrl-C or SIGTERM the stack stops every server (politely, then SIGKILL to the whole
group) and checks that none of their ports is still listening. Short-lived helper commands
(a benchmark's worker process) run through `Stack.run`, in a group of their own too, so they
are reaped the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servertune.bench.harness.ports import LOOPBACK, PortError, listening_ports, wait_listening
from servertune.bench.harness.stats import group_cpu_seconds, group_members

__all__ = ["READY_TIMEOUT_S", "Server", "ServerError", "SignalsAsExit", "Stack", "tool_path"]

#: How long a server may take to listen, and the app behind nginx to answer its first request.
READY_TIMEOUT_S = 30.0
#: How long a server may take to exit after its stop signal before the group gets SIGKILL.
STOP_TIMEOUT_S = 10.0
#: How long the kernel may take to release a stopped server's listening sockets.
PORT_RELEASE_TIMEOUT_S = 5.0
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
# single-thread bridge may hold seconds of queued blocking calls that a graceful stop would wait out.
# granian, stopped after an overload run, would wait its kill timeout for the requests it queued;
# so would gunicorn's uvicorn workers (measured: 7.7 s after a 0.5 s open loop at 4 x capacity,
# against 2 s here) -- the clients of those requests have gone; a stop with none in flight is
# quicker than the grace.
STOP_GRACE_S: Mapping[str, float] = {"uvicorn": 1.0, "granian": 2.0, "gunicorn": 2.0}
# The signal that stops a proxy once every request it took in is answered (and logged): nginx's
# graceful shutdown (SIGQUIT) and HAProxy's soft stop (SIGUSR1) both close the listeners and idle
# connections at once and exit when the last request in flight is done (their manuals:
# nginx "Controlling nginx", HAProxy management guide "Stopping and restarting HAProxy").
DRAIN_SIGNALS: Mapping[str, signal.Signals] = {
    "nginx": signal.SIGQUIT,
    "haproxy": signal.SIGUSR1,
}


class ServerError(RuntimeError):
    """A server did not start, did not stop, or left a port bound."""


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


class SignalsAsExit:
    """SIGTERM and SIGHUP raised as SystemExit while installed: either would end the harness
    without running `finally` blocks, so servers and namespaces are removed just as on Ctrl-C.
    Only the main thread may set handlers; elsewhere `install` does nothing."""

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self._previous[sig] = signal.signal(sig, _exit_on_signal)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


@dataclass
class Stack:
    """A temporary directory and every server started in it; `with Stack() as s:` stops them all."""

    label: str = "bench"
    dir: Path = field(init=False)
    servers: list[Server] = field(default_factory=list, init=False)
    #: (server name, "started" | "stopped") in order: the smoke tests check the pairs.
    events: list[tuple[str, str]] = field(default_factory=list, init=False)
    _signals: SignalsAsExit = field(default_factory=SignalsAsExit, init=False)

    def __post_init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"servertune-{self.label}-"))

    def __enter__(self) -> Stack:
        self._signals.install()
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
            self._signals.restore()
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
        stdout: Path | None = None,
    ) -> Server:
        """Start `argv` in its own process group, wait until every port listens. `stdout`: its
        standard output goes to that file (appended to, created if missing, never through a
        symlink) and only its standard error to the stack's log."""
        log = self.dir / f"{name}.log"
        handle = log.open("wb")
        out: int | None = None
        try:
            if stdout is not None:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                out = os.open(stdout, flags, 0o644)
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=handle if out is None else out,
                stderr=subprocess.STDOUT if out is None else handle,
                cwd=cwd or self.dir,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        finally:
            handle.close()
            if out is not None:
                os.close(out)
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
                wait_listening(
                    port, LOOPBACK, deadline, lambda: process.poll() is None, READY_TIMEOUT_S
                )
        except PortError as error:
            self.stop(server)
            raise ServerError(f"{name}: {error}\n{server.log_tail()}") from None
        return server

    def stop_together(self, servers: Sequence[Server], *, grace_s: float | None = None) -> None:
        """Stop several servers at once: every stop signal first, then each one's grace counted
        from then (a candidate's app servers wait out their grace together, not in turn);
        `grace_s` caps every kind's grace."""
        live = [server for server in servers if not server.stopped]
        for server in live:
            with contextlib.suppress(ProcessLookupError):
                server.process.send_signal(server.stop_signal)
        signalled = time.monotonic()
        errors: list[ServerError] = []
        for server in live:
            try:
                self.stop(server, signalled_at=signalled, grace_s=grace_s)
            except ServerError as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def drain(self, server: Server, timeout_s: float) -> None:
        """Stop a proxy the way that lets it answer, and log, every request it took in
        (DRAIN_SIGNALS), waiting up to `timeout_s` for it to exit; then `stop` it as usual
        (SIGKILL if the drain did not finish)."""
        if server.stopped:
            return
        with contextlib.suppress(ProcessLookupError):
            server.process.send_signal(DRAIN_SIGNALS[server.kind])
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.process.wait(timeout=timeout_s)
        self.stop(server, grace_s=0.0)

    def stop(
        self, server: Server, *, signalled_at: float | None = None, grace_s: float | None = None
    ) -> None:
        """Stop one server's whole group: its stop signal (unless sent at `signalled_at`), then
        SIGKILL once its grace (at most `grace_s`) is over; then check its ports."""
        if server.stopped:
            return
        if signalled_at is None:
            with contextlib.suppress(ProcessLookupError):
                server.process.send_signal(server.stop_signal)
            signalled_at = time.monotonic()
        grace = STOP_GRACE_S.get(server.kind, STOP_TIMEOUT_S)
        if grace_s is not None:
            grace = min(grace, grace_s)
        try:
            server.process.wait(timeout=max(0.0, grace - (time.monotonic() - signalled_at)))
        except subprocess.TimeoutExpired:
            _signal_group(server.pgid, signal.SIGKILL)
            server.process.wait(timeout=STOP_TIMEOUT_S)
        # Workers may outlive their master for a moment: make sure the group is empty. A zombie
        # nobody reaps (PID 1 in some containers) stays in the group but runs nothing: only live
        # members count as left behind. (Waiting for the group to vanish, as killpg(pgid, 0)
        # sees it, waited 1.2-1.7 s per stop here for PID 1 to reap the killed workers.)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while group_members(server.pgid) and time.monotonic() < deadline:
            _signal_group(server.pgid, signal.SIGKILL)
            time.sleep(0.05)
        survivors = group_members(server.pgid)
        server.stopped = not survivors
        if survivors:
            raise ServerError(f"{server.name}: processes {survivors} survive SIGKILL")
        self.events.append((server.name, "stopped"))
        deadline = time.monotonic() + PORT_RELEASE_TIMEOUT_S
        while (still := set(server.ports) & listening_ports()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if still:
            raise ServerError(f"{server.name}: ports {sorted(still)} still listening after stop")

    def run(
        self,
        name: str,
        argv: Sequence[str],
        *,
        timeout_s: float,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run a short-lived command to its end in a process group of its own; output captured.

        Whatever happens (its timeout, Ctrl-C, an error here) the whole group is killed before
        this returns or raises, so a child it forked cannot outlive it. A timeout raises
        ServerError naming the command.
        """
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd or self.dir,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        self.events.append((name, "started"))
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ServerError(f"{name}: did not finish within {timeout_s:g} s") from None
        finally:
            # While any member lives the kernel keeps the group id reserved, so this reaches
            # no one else; after a clean exit it finds no one.
            _signal_group(process.pid, signal.SIGKILL)
            if process.poll() is None:
                process.wait()
            self.events.append((name, "stopped"))
        return subprocess.CompletedProcess(list(argv), process.returncode, out, err)

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


def tool_path(name: str) -> str:
    """An executable: next to this interpreter (the venv's uwsgi), on PATH, or in /usr/sbin."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise ServerError(f"{name} is not installed (servertune[servers] installs uwsgi/gunicorn)")
    return found
