"""The built-in closed-loop HTTP client, for when wrk is missing and for think-time workloads.

An asyncio HTTP/1.1 keep-alive client: each simulated user sends a request, waits for the whole
response, thinks for a random time in its range, and repeats until the deadline. Requests
still in flight at the deadline are waited for (up to a grace period) and counted: cutting them
off would hide exactly the head-of-line stalls the benchmarks look for. Every loop is bounded
in time and in request count and stops by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from servertune.bench.harness.load_result import LoadError, LoadResult
from servertune.bench.harness.stats import percentile, percentile_curve

__all__ = ["MAX_REQUESTS", "Users", "run_builtin"]

#: Upper bound on requests one built-in run may send: a runaway loop stops by itself.
MAX_REQUESTS = 1_000_000
#: Largest response head the built-in client accepts.
MAX_HEAD_BYTES = 65536
#: Pause before reconnecting after a failed request, so a dead server is not hammered.
RECONNECT_PAUSE_S = 0.05


@dataclass(frozen=True)
class Users:
    """A group of closed-loop users hitting one path, thinking `think_s` (min, max) in between."""

    path: str
    count: int
    think_s: tuple[float, float] = (0.0, 0.0)


@dataclass
class _Tally:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    #: Of the errors, answers with a status >= 400 (the rest failed on the socket).
    non_2xx: int = 0
    #: Requests cancelled because they were still running after the grace period.
    unfinished: int = 0


class _Connection:
    """One keep-alive HTTP/1.1 connection; reopened after the server closes it or on error."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> int:
        """Send GET `path`, read the whole response, return its status."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                self.host, self.port, limit=MAX_HEAD_BYTES
            )
        assert self.reader is not None
        self.writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "User-Agent: servertune-bench\r\n\r\n".encode("ascii")
        )
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip().lower()
        if "content-length" in headers:
            await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            await self.reader.read()
            await self.close()
        if headers.get("connection") == "close":
            await self.close()
        return status

    async def close(self) -> None:
        """Close the socket; the next request opens a new one."""
        writer, self.reader, self.writer = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _user(
    host: str,
    port: int,
    users: Users,
    tally: _Tally,
    deadline: float,
    budget: list[int],
    rng: random.Random,
) -> None:
    connection = _Connection(host, port)
    try:
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            start = time.perf_counter()
            try:
                status = await connection.get(users.path)
            except asyncio.CancelledError:
                tally.unfinished += 1
                raise
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
                tally.errors += 1
                await connection.close()
                await asyncio.sleep(RECONNECT_PAUSE_S)
                continue
            elapsed_ms = (time.perf_counter() - start) * 1000
            if status >= 400:
                tally.errors += 1
                tally.non_2xx += 1
            else:
                tally.latencies_ms.append(elapsed_ms)
            low, high = users.think_s
            if high > 0:
                await asyncio.sleep(
                    min(rng.uniform(low, high), max(0.0, deadline - time.monotonic()))
                )
    finally:
        await connection.close()


async def _drive(
    host: str,
    port: int,
    groups: Sequence[Users],
    duration_s: float,
    grace_s: float,
    max_requests: int,
    seed: int | None,
) -> dict[str, _Tally]:
    rng = random.Random(seed)
    deadline = time.monotonic() + duration_s
    budget = [max_requests]
    tallies = {g.path: _Tally() for g in groups}
    tasks = [
        asyncio.create_task(_user(host, port, g, tallies[g.path], deadline, budget, rng))
        for g in groups
        for _ in range(g.count)
    ]
    _, pending = await asyncio.wait(tasks, timeout=duration_s + grace_s)
    # A request still running after the grace period is a failure, not a missing sample.
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise LoadError(f"load generator failed: {task.exception()!r}")
    return tallies


def _result(tally: _Tally, connections: int, duration_s: float) -> LoadResult:
    samples = tally.latencies_ms
    if not samples:  # every request failed or never finished: latencies are unknown, not 0
        return LoadResult(
            tool="builtin", connections=connections, duration_s=duration_s, requests=0,
            errors=tally.errors + tally.unfinished, rps=0.0,
            p50_ms=math.nan, p90_ms=math.nan, p99_ms=math.nan, max_ms=math.nan,
            non_2xx=tally.non_2xx, socket_errors=tally.errors + tally.unfinished - tally.non_2xx,
        )  # fmt: skip
    return LoadResult(
        tool="builtin",
        connections=connections,
        duration_s=duration_s,
        requests=len(samples),
        errors=tally.errors + tally.unfinished,
        rps=len(samples) / duration_s,
        p50_ms=percentile(samples, 50),
        p90_ms=percentile(samples, 90),
        p99_ms=percentile(samples, 99),
        max_ms=max(samples),
        distribution=tuple(percentile_curve(samples)),
        latencies_ms=tuple(samples),
        non_2xx=tally.non_2xx,
        socket_errors=tally.errors + tally.unfinished - tally.non_2xx,
    )


def run_builtin(
    url: str,
    groups: Sequence[Users],
    *,
    duration_s: float,
    grace_s: float = 30.0,
    max_requests: int = MAX_REQUESTS,
    seed: int | None = None,
) -> dict[str, LoadResult]:
    """Run closed-loop user groups against `url`'s host; one LoadResult per group's path.

    Users whose request is still running `grace_s` after the deadline are cancelled and their
    request counted as an error (reported per group as `errors`). A group with no successful
    request has `requests == 0` and NaN latencies.
    """
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None or parts.port is None:
        raise LoadError(f"the built-in generator needs http://HOST:PORT, got {url!r}")
    if len({g.path for g in groups}) != len(groups):
        raise LoadError("one group per path")
    tallies = asyncio.run(
        _drive(parts.hostname, parts.port, groups, duration_s, grace_s, max_requests, seed)
    )
    return {g.path: _result(tallies[g.path], g.count, duration_s) for g in groups}
