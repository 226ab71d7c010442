"""Helpers for tests that run the real servers: free ports, binaries, `nginx -t`."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from servertune.bench.harness.ports import free_port, free_port_block

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_ports(count: int) -> list[int]:
    """`count` ports free on 127.0.0.1 a moment ago, outside the kernel's ephemeral range."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


def free_base_port(count: int) -> int:
    """A base port with `count` consecutive free ports above it (per-worker sockets are consecutive)."""
    return free_port_block(count)


def tool(name: str) -> str:
    """The path of a server binary: the venv's own first (uwsgi, gunicorn), then PATH."""
    local = BIN / name
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed: run .ci/run or install it (README)")
    return found


def nginx_check(conf: Path) -> subprocess.CompletedProcess[str]:
    """`nginx -t` on a complete config, with its directory as the prefix."""
    return subprocess.run(
        [tool("nginx"), "-t", "-q", "-p", str(conf.parent), "-c", str(conf)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


def wait_for(check: Callable[[], bool], timeout: float = 20.0, what: str = "server") -> None:
    """Poll `check` until it is true, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} not ready after {timeout:g} s")


def accepts(address: str) -> bool:
    """True when something accepts connections at `host:port` or a unix socket path."""
    family, target = (
        (socket.AF_UNIX, address)
        if address.startswith("/")
        else (socket.AF_INET, _host_port(address))
    )
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(target)
        except OSError:
            return False
        return True


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


@contextmanager
def running(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server in its own process group; stop the whole group on exit, whatever happened."""
    log = open(cwd / f"{Path(argv[0]).name}-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        argv, cwd=cwd, env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        yield process
    finally:
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        log.close()


def uwsgi_request(address: str, path: str = "/") -> bytes:
    """One request in the uwsgi protocol straight to an app-server socket (no nginx in between)."""
    env = {
        "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "test",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REQUEST_URI": path,
    }  # fmt: skip
    body = b"".join(
        struct.pack("<H", len(k)) + k.encode() + struct.pack("<H", len(v)) + v.encode()
        for k, v in env.items()
    )
    packet = struct.pack("<BHB", 0, len(body), 0) + body
    return _exchange(address, packet)


def http_get(address: str, path: str = "/") -> bytes:
    """One HTTP/1.0 GET straight to `address`; returns the whole response."""
    return _exchange(address, f"GET {path} HTTP/1.0\r\nHost: test\r\n\r\n".encode())


def _exchange(address: str, payload: bytes) -> bytes:
    family, target = (
        (socket.AF_UNIX, address)
        if address.startswith("/")
        else (socket.AF_INET, _host_port(address))
    )
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(target)
        s.sendall(payload)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def body_of(response: bytes) -> bytes:
    """The body of a raw HTTP response (status line checked)."""
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"200", head
    return body


#: The golden workloads (tests/golden/cases/*.json), one per rendered case.
GOLDEN_CASES = Path(__file__).parent / "golden" / "cases"


def golden_cases(target: str | None = None) -> list[str]:
    """The golden workloads' names; with a target, only the apps it serves (its interfaces, as
    `gen` refuses the others)."""
    import json

    from servertune.render import TARGETS

    names = sorted(p.stem for p in GOLDEN_CASES.glob("*.json"))
    if target is None:
        return names
    serves = TARGETS[target].interfaces
    return [
        name
        for name in names
        if json.loads((GOLDEN_CASES / f"{name}.json").read_text()).get("interface", "wsgi")
        in serves
    ]


def assert_reproduce_section(report: dict[str, Any], page: str, where: Path) -> None:
    """`bench app`'s Reproduce section names every candidate that ran (its table rows), each
    with a line to paste and the files it ran with, a front among them (nginx.conf or
    haproxy.cfg); servertune's lines are `servertune gen` commands that really write their
    server's file and their front's into `where`; a copied line starts a program that is here.
    The report never says a program it ran is "not installed"."""
    import json
    import shlex

    from markupsafe import escape
    from typer.testing import CliRunner

    from servertune.cli import app

    ran = list(dict.fromkeys(str(run["config"]) for run in report["runs"]))
    assert ran
    assert set(report["commands"]) == set(ran), (ran, list(report["commands"]))
    assert set(report["files"]) == set(ran), (ran, list(report["files"]))
    section = page.partition("<h2>Reproduce</h2>")[2]
    assert section, "no Reproduce section"
    for name in ran:
        line, files = report["commands"][name], report["files"][name]
        assert {"nginx.conf", "haproxy.cfg"} & files.keys(), (name, list(files))
        assert f"<dt>{escape(name)}</dt><dd><code>{escape(line)}</code>" in section, name
        for filename in files:
            assert f"<summary>{escape(name)}: {escape(filename)}</summary>" in section
        if not name.startswith("servertune"):
            program = shlex.split(line)[0]
            assert Path(program).is_file() or shutil.which(program), (name, line)
            continue
        written: set[str] = set()
        for one in line.split(" && "):
            words = shlex.split(one)
            assert words[:2] == ["servertune", "gen"], (name, one)
            out = where / words[words.index("--out") + 1]
            words[words.index("--out") + 1] = str(out)
            result = CliRunner().invoke(app, words[1:])
            assert result.exit_code == 0, (name, one, result.output)
            written |= {p.name for p in out.iterdir()}
        assert any(f.startswith(("nginx", "haproxy")) for f in written), (name, written)
        assert any(not f.startswith(("nginx", "haproxy")) for f in written), (name, written)
    assert "not installed" not in page
    assert "not installed" not in json.dumps(report["versions"])


class LoopbackBack:
    """A hand-written HTTP back on 127.0.0.1 (a behaviour no real server shows on demand): a
    thread accepts, and each connection is served by `_serve(sock, *self._accepted(sock))` on
    a thread of its own; leaving the `with` stops them all (`_stopping` wakes any that wait)."""

    def __init__(self, port: int = 0) -> None:
        self.listener = socket.create_server(("127.0.0.1", port))
        self.port: int = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def __enter__(self) -> Self:
        acceptor = threading.Thread(target=self._accept, daemon=True)
        acceptor.start()
        self.threads.append(acceptor)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._stopping()
        self.listener.close()
        for thread in self.threads:
            thread.join(5)

    def _accepted(self, sock: socket.socket) -> tuple[Any, ...]:
        """What `_serve` gets besides the socket, taken as the connection is accepted."""
        return ()

    def _stopping(self) -> None:
        """Wake the connections that wait, as the back stops."""

    def _serve(self, sock: socket.socket, *args: Any) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stop.is_set():
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            args = (sock, *self._accepted(sock))
            thread = threading.Thread(target=self._serve, args=args, daemon=True)
            thread.start()
            self.threads.append(thread)
