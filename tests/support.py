"""Helpers for tests that run the real servers: free ports, binaries, `nginx -t`."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports that were free on 127.0.0.1 a moment ago."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def free_base_port(count: int) -> int:
    """A base port with `count` consecutive free ports above it (per-worker sockets are consecutive)."""
    for _ in range(50):
        base = free_ports(1)[0]
        if base + count >= 65000:
            continue
        probes = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                probes.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in probes:
                s.close()
    raise RuntimeError("no run of free ports found")


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
