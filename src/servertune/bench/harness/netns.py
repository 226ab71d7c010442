"""A network of hosts on this machine: Linux network namespaces, veth pairs and a bridge.

`Network({"lb": "198.18.0.2", ...})` creates one namespace per host and one more, the switch,
holding a bridge; each host gets a veth pair whose far end is a bridge port, so hosts reach each
other only through that bridge and never this machine's own interfaces (nothing is created in
the namespace the harness runs in). Names are unique to the run: `st<pid>x<random>-<host>`, so
two runs, or a run and a test, never share one. Addresses come from 198.18.0.0/15, the range
reserved for benchmarking (RFC 2544), so nothing on a real network is ever addressed.

Whatever ends the run (its end, an error, Ctrl-C, SIGTERM) every process started in a host is
killed and every namespace deleted (which deletes its veth ends and the bridge); `leftovers()`
says what of a run is still there, and a run whose harness was SIGKILLed is swept by the next
one (`sweep_stale`). Without the privilege to create namespaces (root, or CAP_NET_ADMIN and
CAP_SYS_ADMIN) the network refuses with one line (`NetnsPermissionError`).

Servers in a host run through `ip netns exec`, each in a process group of its own; readiness
and socket state are read through netlink sock_diag (`ss`), not /proc/net/tcp. The harness
talks to a host from inside its namespace: `connect()` makes the socket on a thread that has
joined the namespace (setns(2) moves only the calling thread), so a load generator needs no
process of its own. The kernel here may lack netem: a link's delay is added in user space where
a scenario needs one (`servertune.bench.harness.delay_relay`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import ipaddress
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from servertune.bench.harness.report import BenchInputError
from servertune.bench.harness.stats import group_members
from servertune.bench.harness.supervision import STOP_SIGNALS, Server, ServerError, SignalsAsExit

__all__ = [
    "BENCH_NET",
    "PREFIX",
    "NetnsPermissionError",
    "Network",
    "leftovers",
    "sweep_stale",
]

#: The benchmarking range (RFC 2544 section C.2.2, 198.18.0.0/15): every host address is in it.
BENCH_NET = ipaddress.ip_network("198.18.0.0/15")
#: Every namespace of a run starts with PREFIX<pid>x<random>-.
PREFIX = "st"
_NAME = re.compile(rf"^{PREFIX}(?P<pid>\d+)x[0-9a-f]+-")
#: How long a server may take to listen.
READY_TIMEOUT_S = 30.0
#: Grace after a stop signal before the whole group gets SIGKILL.
STOP_TIMEOUT_S = 10.0
#: ip(8) commands are quick; one that hangs is a broken machine, not a slow one.
IP_TIMEOUT_S = 10.0
_CLONE_NEWNET = 0x40000000


class NetnsPermissionError(BenchInputError):
    """No privilege to create network namespaces: one line, exit code 2."""


class NetnsError(RuntimeError):
    """An ip(8) command failed, or a run left something behind."""


def _ip(*args: str, check: bool = True) -> str:
    result = subprocess.run(
        ["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=False
    )
    if check and result.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {result.stderr.strip() or result.returncode}")
    return result.stdout


def _namespaces() -> list[str]:
    """Every named network namespace on the machine."""
    return [line.split()[0] for line in _ip("netns", "list").splitlines() if line.strip()]


def _pids(namespace: str) -> list[int]:
    return [int(p) for p in _ip("netns", "pids", namespace, check=False).split() if p.isdigit()]


def _kill_namespace(namespace: str) -> None:
    """SIGKILL everything running in `namespace` and delete it (its veth ends go with it)."""
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while (pids := _pids(namespace)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    _ip("netns", "del", namespace, check=False)


def leftovers(tag: str) -> list[str]:
    """What a run tagged `tag` left: its namespaces, and the processes running in them."""
    found = []
    for namespace in _namespaces():
        if namespace.startswith(f"{tag}-"):
            found.append(f"namespace {namespace}")
            found.extend(f"process {pid} in {namespace}" for pid in _pids(namespace))
    return found


def sweep_stale() -> list[str]:
    """Delete the namespaces of runs whose harness process is gone (SIGKILLed: no cleanup ran)."""
    swept = []
    for namespace in _namespaces():
        match = _NAME.match(namespace)
        if match is None:
            continue
        pid = int(match["pid"])
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, 0)
            continue
        _kill_namespace(namespace)
        swept.append(namespace)
    return swept


def check_privilege(what: str) -> None:
    """NetnsPermissionError (one line) unless this process may create network namespaces."""
    reason = ""
    if os.geteuid() != 0:
        reason = "it runs as a user who is not root"
    else:
        probe = f"{PREFIX}{os.getpid()}x{secrets.token_hex(3)}-probe"
        try:
            _ip("netns", "add", probe)
        except (NetnsError, OSError) as error:
            reason = f"creating a network namespace failed ({str(error).splitlines()[0]})"
        else:
            _ip("netns", "del", probe, check=False)
    if reason:
        raise NetnsPermissionError(
            f"{what} needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces, "
            f"veth pairs and a bridge, and {reason}"
        )


@dataclass
class Network:
    """Hosts in network namespaces joined by one bridge; `with Network(hosts) as net:`."""

    #: host name -> its IPv4 address in BENCH_NET.
    hosts: Mapping[str, str]
    what: str = "bench hosts"
    prefix_len: int = 24
    tag: str = field(init=False)
    servers: list[Server] = field(default_factory=list, init=False)
    _built: list[str] = field(default_factory=list, init=False)
    _ports: dict[str, str] = field(default_factory=dict, init=False)
    _pools: dict[str, concurrent.futures.ThreadPoolExecutor] = field(
        default_factory=dict, init=False
    )
    _signals: SignalsAsExit = field(default_factory=SignalsAsExit, init=False)

    def __post_init__(self) -> None:
        for host, address in self.hosts.items():
            if not re.fullmatch(r"[a-z][a-z0-9]{0,9}", host):
                raise ValueError(f"host name {host!r}: 1-10 lower-case letters and digits")
            if ipaddress.ip_address(address) not in BENCH_NET:
                raise ValueError(f"{host}: {address} is outside {BENCH_NET} (RFC 2544)")
        self.tag = f"{PREFIX}{os.getpid()}x{secrets.token_hex(3)}"

    # --- lifetime ------------------------------------------------------------------------------

    def __enter__(self) -> Network:
        check_privilege(self.what)
        sweep_stale()
        self._signals.install()
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        try:
            self.close()
        finally:
            self._signals.restore()

    def namespace(self, host: str) -> str:
        """The namespace of `host` (`switch` is the bridge's)."""
        return f"{self.tag}-{host}"

    def _add_namespace(self, host: str) -> str:
        name = self.namespace(host)
        self._built.append(name)
        _ip("netns", "add", name)
        _ip("-n", name, "link", "set", "lo", "up")
        return name

    def _build(self) -> None:
        switch = self._add_namespace("switch")
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for index, (host, address) in enumerate(self.hosts.items()):
            name = self._add_namespace(host)
            port = f"p{index}"
            # Both ends are created in namespaces of the run: none ever exists in this one.
            _ip("-n", switch, "link", "add", port, "type", "veth", "peer", "name", "eth0",
                "netns", name)  # fmt: skip
            _ip("-n", switch, "link", "set", port, "master", "br0", "up")
            _ip("-n", name, "addr", "add", f"{address}/{self.prefix_len}", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")
            self._ports[host] = port

    def close(self) -> None:
        """Stop every server, kill whatever still runs in a host, delete every namespace; then
        NetnsError if anything of the run is still there."""
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()
        for server in reversed(self.servers):
            with contextlib.suppress(ServerError):
                self.stop(server, grace_s=1.0)
        for name in reversed(self._built):
            _kill_namespace(name)
        self._built.clear()
        left = leftovers(self.tag)
        left.extend(f"process {pid} ({s.name})" for s in self.servers for pid in _alive(s))
        if left:
            raise NetnsError(f"{self.what} left behind: {', '.join(left)}")

    # --- servers -------------------------------------------------------------------------------

    def start(
        self,
        host: str,
        name: str,
        kind: str,
        argv: Sequence[str],
        *,
        ports: Sequence[int],
        log_dir: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        wait: bool = True,
        cgroup_procs: Path | None = None,
    ) -> Server:
        """Start `argv` inside `host` in a process group of its own (and in the cgroup whose
        `cgroup.procs` is given); wait until `ports` listen on `host` (read with `ss`)."""
        log = log_dir / f"{name}.log"
        command = ["ip", "netns", "exec", self.namespace(host), *argv]
        if cgroup_procs is not None:
            # Joined before `ip netns exec`, which mounts a /sys of the namespace's own (no
            # cgroup tree in it); every process the server forks later inherits the cgroup.
            command = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cgroup_procs), *command]
        with log.open("ab") as handle:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                cwd=cwd or log_dir,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
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
        if wait:
            self.wait_listening(host, server)
        return server

    def wait_listening(self, host: str, server: Server, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Return once every port of `server` listens in `host`; ServerError if it exits first."""
        deadline = time.monotonic() + timeout_s
        while not set(server.ports) <= self.listening(host):
            if server.process.poll() is not None:
                raise ServerError(f"{server.name} exited before listening\n{server.log_tail()}")
            if time.monotonic() > deadline:
                raise ServerError(f"{server.name}: not listening after {timeout_s:g} s")
            time.sleep(0.05)

    def stop(self, server: Server, grace_s: float = STOP_TIMEOUT_S) -> None:
        """Its stop signal, then SIGKILL to its whole group; ServerError if a member survives."""
        if server.stopped:
            return
        with contextlib.suppress(ProcessLookupError):
            server.process.send_signal(server.stop_signal)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.process.wait(timeout=grace_s)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _alive(server) and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(server.pgid, signal.SIGKILL)
            time.sleep(0.02)
        if server.process.poll() is None:
            server.process.kill()
        server.process.wait(timeout=STOP_TIMEOUT_S)
        if survivors := _alive(server):
            raise ServerError(f"{server.name}: processes {survivors} survive SIGKILL")
        server.stopped = True

    def kill_host(self, host: str) -> int:
        """A host dies outright: SIGKILL every process running in it; how many there were."""
        pids = _pids(self.namespace(host))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for server in self.servers:
            if not server.stopped and server.process.pid in pids:
                server.process.wait(timeout=STOP_TIMEOUT_S)
        return len(pids)

    # --- the links -----------------------------------------------------------------------------

    def cut(self, host: str) -> None:
        """Cut `host`'s link at the switch: its packets are dropped, nothing is refused."""
        _ip("-n", self.namespace("switch"), "link", "set", self._ports[host], "down")

    def mend(self, host: str) -> None:
        """Put `host`'s link back."""
        _ip("-n", self.namespace("switch"), "link", "set", self._ports[host], "up")

    # --- reading and talking -------------------------------------------------------------------

    def listening(self, host: str) -> set[int]:
        """TCP ports listening in `host`, from the kernel's sock_diag (`ss -Htln`)."""
        return {port for _, port in self.sockets(host, "-Htln")}

    def sockets(self, host: str, options: str = "-Htn") -> list[tuple[str, int]]:
        """(state, local port) of each TCP socket in `host` (`ss` over netlink sock_diag)."""
        out = subprocess.run(
            ["ip", "netns", "exec", self.namespace(host), "ss", options],
            capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=False,
        ).stdout  # fmt: skip
        found = []
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 4 and ":" in fields[3]:
                port = fields[3].rsplit(":", 1)[1]
                if port.isdigit():
                    found.append((fields[0], int(port)))
        return found

    def connect(self, host: str, address: tuple[str, int], timeout_s: float) -> socket.socket:
        """A TCP connection from inside `host` (made on a thread that joined its namespace)."""
        pool = self._pools.get(host)
        if pool is None:
            path = f"/run/netns/{self.namespace(host)}"
            pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=8,
                thread_name_prefix=f"netns-{host}",
                initializer=_join,
                initargs=(path,),
            )
            self._pools[host] = pool
        return pool.submit(socket.create_connection, address, timeout_s).result()


def _join(path: str) -> None:
    """Move the calling thread into the network namespace at `path` (setns(2))."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")
    finally:
        os.close(fd)


def _alive(server: Server) -> list[int]:
    return group_members(server.pgid)
