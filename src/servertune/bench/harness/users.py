"""Closed-loop users in threads, each on its own keep-alive connection: the load of the scenarios
that count which requests failed through an event (`restart`, `hosts`).

Every user sends the bundled `restart` app's requests: `get` is GET /quick, `cpu` is GET /cpu
(half of it CPU time), `slow` is GET /slow
and `post` is POST /order with a fresh id (the ledger tells whether the app received it twice).
"""

from __future__ import annotations

import http.client
import itertools
import random
import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["KeepAliveUsers", "Outcome", "dropped"]

#: The path each kind of user asks for; a `post` user posts a fresh order instead.
PATHS = {"get": "/quick", "cpu": "/cpu", "slow": "/slow"}

S = TypeVar("S")


@dataclass(frozen=True)
class Outcome:
    """One request as its user saw it."""

    kind: str
    order: str | None
    status: int  # 0: no HTTP answer (connection refused, reset, timeout)
    wall: float  # time.time() at the send: nginx logs wall-clock times
    began: float  # time.monotonic() at the send
    ms: float
    served_by: str  # the X-Served-By header ("" when the app sends none)


def dropped(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle keep-alive connection was closed by the server (readable while no request
    is out: the FIN, or a reset), checked before reusing it.

    Every pooling HTTP client does this (urllib3's `is_connection_dropped`, browsers): an nginx
    reload closes its old workers' idle client connections, and a client that sent its next
    request into one would see a failure no real client sees. What stays counted is the race
    this check cannot see: a close that crosses a request already sent.
    """
    sock = conn.sock
    if sock is None:
        return True
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


class KeepAliveUsers(Generic[S]):
    """One thread per entry of `kinds`, each sending requests on its own keep-alive connection
    (made by `connect`), thinking `think_s` between them, until stopped or `max_requests` sent.
    Each request is recorded as `sample(outcome)`."""

    def __init__(
        self,
        kinds: Sequence[str],
        *,
        label: str,
        seed: int,
        connect: Callable[[], http.client.HTTPConnection],
        sample: Callable[[Outcome], S],
        think_s: tuple[float, float],
        max_requests: int,
        timeout_s: float,
    ) -> None:
        self.label = label
        self.samples: list[S] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.rng = random.Random(seed)
        self.ids = itertools.count()
        self._connect, self._sample = connect, sample
        self._think_s, self._max_requests, self._timeout_s = think_s, max_requests, timeout_s
        self.threads = [threading.Thread(target=self._user, args=(k,), daemon=True) for k in kinds]

    def __enter__(self) -> KeepAliveUsers[S]:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(self._timeout_s + 5)

    def record(self, sample: S) -> None:
        with self.lock:
            self.samples.append(sample)

    def _user(self, kind: str) -> None:
        conn: http.client.HTTPConnection | None = None
        for _ in range(self._max_requests):
            if self.stop.is_set():
                break
            order = f"{self.label}-{next(self.ids)}" if kind == "post" else None
            path = PATHS.get(kind, f"/order?id={order}")
            wall, began = time.time(), time.monotonic()
            served_by = ""
            try:
                if conn is not None and dropped(conn):
                    conn.close()  # the server closed it while idle: reconnect, as urllib3 does
                    conn = None
                if conn is None:
                    conn = self._connect()
                conn.request(
                    "POST" if kind == "post" else "GET", path, body=b"{}" if order else None
                )
                response = conn.getresponse()
                response.read()
                status, served_by = response.status, response.getheader("X-Served-By", "")
                if response.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException):
                status = 0
                if conn is not None:
                    conn.close()
                conn = None
            ms = (time.monotonic() - began) * 1000
            self.record(self._sample(Outcome(kind, order, status, wall, began, ms, served_by)))
            self.stop.wait(self.rng.uniform(*self._think_s))
        if conn is not None:
            conn.close()
