"""Helpers for the servertune.http tests: drive any client the same way, count outcomes."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: The sync clients available in the main test venv (niquests runs in .venv-niquests).
MAIN_CLIENTS = ("requests", "httpx", "httpx2", "urllib3")
#: The httpx family: httpx and its maintained fork httpx2, one API under two import names.
HTTPX_CLIENTS = ("httpx", "httpx2")


def default_client(name: str) -> Any:
    """The library's own client object with its defaults: what servertune is compared against."""
    if name == "requests":
        import requests

        return requests.Session()
    if name == "httpx":
        import httpx

        return httpx.Client()
    if name == "httpx2":
        import httpx2

        return httpx2.Client()
    if name == "urllib3":
        import urllib3

        return urllib3.PoolManager()
    if name == "niquests":
        import niquests

        return niquests.Session()
    raise ValueError(name)


def call(client: Any, method: str, url: str, body: bytes | None = None) -> int:
    """Send one request; return the server's per-connection request number (1 = new connection)."""
    if hasattr(client, "build_request"):  # httpx, httpx2
        response = client.request(method, url, content=body)
    elif hasattr(client, "connection_from_url"):  # urllib3
        response = client.request(method, url, body=body)
    else:  # requests, niquests
        response = client.request(method, url, data=body)
    status = getattr(response, "status_code", None) or response.status
    assert status == 200, status
    return int(response.headers["X-Connection-Request"])


def close(client: Any) -> None:
    """Close any of the clients."""
    closer = getattr(client, "close", None) or client.clear
    closer()


@dataclass
class LoadResult:
    """What a bounded multi-thread run saw from the client side."""

    sent: int = 0
    errors: list[str] = field(default_factory=list)
    reused: int = 0


def idle_edge_load(
    make_client: Any, url: str, *, threads: int, per_thread: int, gap: tuple[float, float]
) -> LoadResult:
    """`threads` threads, each with its own client, send `per_thread` GETs `gap` seconds apart.

    Bounded in count (threads x per_thread) and in time (every join has a deadline), as seed 000's
    reproduction: random gaps just under the server's idle timeout.
    """
    result = LoadResult()
    lock = threading.Lock()

    def worker() -> None:
        client = make_client()
        try:
            for i in range(per_thread):
                if i:
                    time.sleep(random.uniform(*gap))
                try:
                    n = call(client, "GET", url)
                except Exception as exc:
                    with lock:
                        result.sent += 1
                        result.errors.append(repr(exc))
                    continue
                with lock:
                    result.sent += 1
                    result.reused += n > 1
        finally:
            close(client)

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + per_thread * (gap[1] + 5.0)
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    assert not any(w.is_alive() for w in workers), "load threads did not finish in time"
    return result
