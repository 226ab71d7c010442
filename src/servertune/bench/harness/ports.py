"""Loopback ports for benchmark servers: free blocks outside the ephemeral range, what listens."""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "LOOPBACK",
    "PortError",
    "free_port",
    "free_port_block",
    "listening_ports",
    "wait_listening",
]

LOOPBACK = "127.0.0.1"
#: The last port a per-worker block may use (Workload.base_port allows up to 65000).
MAX_BLOCK_PORT = 65000
#: The lowest port handed out: above the registered services most machines run below 20000.
PORT_FLOOR = 20000
#: Where Linux keeps the ephemeral port range, and its default when it cannot be read.
EPHEMERAL_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
DEFAULT_EPHEMERAL_RANGE = (32768, 60999)
#: `I/N`: this process takes ports only from the I-th of N equal slices of each span (0-based).
#: Benchmarks that run side by side on one machine (a test suite's parallel workers) each set
#: their own slice, so one never hands out a port another's server has just let go of, and a
#: run's "nothing left listening on my ports" check never sees another run's server.
PORT_SHARE_VARIABLE = "SERVERTUNE_PORT_SHARE"


class PortError(RuntimeError):
    """No free port (block) could be found, or a port did not start listening in time."""


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
    spans = [(PORT_FLOOR, low - 1), (high + 1, MAX_BLOCK_PORT)]
    bases = [range(a, b - count + 2) for a, b in map(_share, spans) if b - count + 1 >= a]
    if not bases:
        raise PortError(f"no room for {count} ports outside the ephemeral range {low}-{high}")
    pick = random.SystemRandom()
    for _ in range(attempts):
        first = pick.choice(pick.choice(bases))
        if all(_bindable(first + i, host) for i in range(count)):
            return first
    raise PortError(f"no block of {count} consecutive free ports found in {attempts} attempts")


def _share(span: tuple[int, int]) -> tuple[int, int]:
    """The part of `span` (first, last port) that PORT_SHARE_VARIABLE gives this process."""
    given = os.environ.get(PORT_SHARE_VARIABLE, "")
    index, _, parts = given.partition("/")
    if not (index.isdigit() and parts.isdigit() and int(index) < int(parts)):
        return span
    first, last = span
    size = (last - first + 1) // int(parts)
    start = first + int(index) * size
    return start, start + size - 1


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


def wait_listening(
    port: int, host: str, deadline: float, alive: Callable[[], bool], timeout_s: float
) -> None:
    """Return once `host:port` accepts a connection; PortError if `alive()` turns false or time runs out."""
    while time.monotonic() < deadline:
        if not alive():
            raise PortError("exited before listening")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise PortError(f"not listening on {host}:{port} after {timeout_s:g} s")
