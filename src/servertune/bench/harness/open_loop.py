"""Open-loop load: requests arrive at a fixed mean rate whether or not earlier ones finished.

A closed-loop client (wrk) sends its next request only after an answer, so an overloaded server
slows the client down and the queue never grows past the connection count. Real arrivals do not
wait: at 4 x capacity the excess piles up somewhere. This generator sends Poisson arrivals at
`rate` for `duration_s`, times each request from the moment it *should* have been sent (no
coordinated omission: time spent waiting for a free client connection counts), and sorts every
answer into admitted (2xx), refused (503), other errors and timeouts (no answer within
`timeout_s`). Every loop is bounded by the request count and the deadline.

`run_schedule` is the general form: a schedule of (seconds, rate) steps played in order, Poisson
within each step (arrivals are memoryless, so a step starts afresh at its boundary), each arrival
sent to one of several paths by weight. `bench app --replay` plays an access log's arrival
profile with it; a constant rate (`run_open_loop`) is a schedule of one step. `run_arrivals`
plays given arrival times as they are (`bench app --replay`: an access log's own).
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import math
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from servertune.bench.harness.stats import percentile, percentile_curve

__all__ = ["OpenLoopResult", "Steps", "run_arrivals", "run_open_loop", "run_schedule"]

#: Connections the client may hold at once: arrivals beyond it wait for one (and that wait counts).
MAX_CONNECTIONS = 512
#: Largest response head accepted.
MAX_HEAD_BYTES = 65536
#: No run sends more than this many requests, whatever rate and duration ask for.
MAX_REQUESTS = 200_000
#: Characters kept of each admitted answer's body (the bench apps name their process in it).
BODY_CHARS = 64

#: A schedule: (seconds, mean arrivals per second) steps, played in order.
Steps = Sequence[tuple[float, float]]


@dataclass(frozen=True)
class OpenLoopResult:
    """One open-loop run: what was sent, what was admitted, refused, failed or timed out."""

    rate: float
    duration_s: float
    sent: int
    ok: int
    refused_503: int
    errors: int
    timeouts: int
    #: Of the timeouts, those never written: the client's own lag or a connection it waited
    #: for or could not open in time (the rest timed out waiting for the server's answer).
    timeouts_unsent: int = 0
    #: Latencies (ms) of the admitted (2xx) requests, from their scheduled send time.
    ok_latencies_ms: tuple[float, ...] = field(default=(), repr=False)
    refused_latencies_ms: tuple[float, ...] = field(default=(), repr=False)
    #: The start of each admitted answer's body, in the order of `ok_latencies_ms`.
    ok_bodies: tuple[str, ...] = field(default=(), repr=False)
    #: Of each admitted request's latency, the part before it was written (ms): the client's
    #: own lag (its loop busy, or a connection to open or wait for), not the server's.
    ok_send_lag_ms: tuple[float, ...] = field(default=(), repr=False)
    #: When each admitted request was scheduled (s from the run's start), in the same order:
    #: what was answered when, beside what arrived when.
    ok_offsets_s: tuple[float, ...] = field(default=(), repr=False)

    def by_body(self) -> list[tuple[str, int, float]]:
        """Admitted answers grouped by body (the answering process, for the bench apps): body,
        count and p99 ms of each, the most frequent first."""
        groups: dict[str, list[float]] = {}
        for body, latency in zip(self.ok_bodies, self.ok_latencies_ms, strict=True):
            groups.setdefault(body, []).append(latency)
        return sorted(
            ((body, len(ms), round(percentile(ms, 99), 2)) for body, ms in groups.items()),
            key=lambda group: -group[1],
        )

    def metrics(self) -> dict[str, Any]:
        """JSON numbers: goodput, admitted latency percentiles, and every kind of failure."""
        ok = self.ok_latencies_ms
        refused = self.refused_latencies_ms

        def pct(samples: tuple[float, ...], p: float) -> float | None:
            return round(percentile(samples, p), 2) if samples else None

        return {
            "offered_rps": round(self.rate, 1),
            "rps": round(self.ok / self.duration_s, 2),
            "p50_ms": pct(ok, 50),
            "p90_ms": pct(ok, 90),
            "p99_ms": pct(ok, 99),
            "max_ms": round(max(ok), 2) if ok else None,
            "refused_503": self.refused_503,
            "refused_p99_ms": pct(refused, 99),
            "send_lag_p99_ms": pct(self.ok_send_lag_ms, 99),
            "timeouts": self.timeouts,
            "timeouts_unsent": self.timeouts_unsent,
            "errors": self.errors + self.timeouts + self.refused_503,
            "requests": self.sent,
            "distribution": [list(p) for p in percentile_curve(ok)] if ok else [],
        }


class _Pool:
    """Idle keep-alive connections, reused last-in first-out, at most MAX_CONNECTIONS open."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.slots = asyncio.Semaphore(MAX_CONNECTIONS)

    async def take(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.idle:
            return self.idle.pop()
        return await asyncio.open_connection(self.host, self.port, limit=MAX_HEAD_BYTES)


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[int, bool, str]:
    """Send one request, read the whole response; (status, whether the connection stays open,
    the body's first BODY_CHARS characters)."""
    writer.write(request)
    await writer.drain()
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
        return status, headers.get("connection") != "close", _start(body)
    if headers.get("transfer-encoding", "").endswith("chunked"):
        # An app that sets no Content-Length (Django without CommonMiddleware, a streamed
        # body) is answered chunked through nginx: read to the last chunk, the connection kept.
        return status, headers.get("connection") != "close", _start(await _chunked(reader))
    return status, False, _start(await reader.read())


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    """A chunked body (RFC 9112 section 7.1): its chunks joined, the trailers read past."""
    body = b""
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailer fields: nothing the bench needs
            return body
        chunk = await reader.readexactly(size + 2)
        if len(body) < BODY_CHARS:
            body += chunk[:size]


def _start(body: bytes) -> str:
    return body[:BODY_CHARS].decode("latin-1").strip()


def _request(host: str, port: int, target: str) -> bytes:
    """The bytes of the GET an arrival sends to `target` (a path, with its query if any)."""
    return (
        f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: servertune-bench\r\n\r\n"
    ).encode("ascii")


def _split(url: str) -> tuple[str, int, str]:
    """The host, port and request target of `url`."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, parts.port, target


def _arrival_times(steps: Steps, rng: random.Random) -> Iterator[float]:
    """Seconds from the start of each arrival: Poisson at each step's rate within the step."""
    begin = 0.0
    for seconds, rate in steps:
        end = begin + seconds
        at = begin
        while rate > 0:
            at += rng.expovariate(rate)
            if at >= end:
                break
            yield at
        begin = end


@dataclass
class _Tally:
    """Every answer sorted as it comes: admitted (2xx), refused (503), errors, timeouts."""

    ok: list[float] = field(default_factory=list)
    refused: list[float] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)
    offsets: list[float] = field(default_factory=list)
    errors: int = 0
    timeouts: int = 0
    timeouts_unsent: int = 0

    def answer(
        self, status: int, elapsed_ms: float, body: str, lag_ms: float, offset_s: float
    ) -> None:
        if 200 <= status < 300:
            self.ok.append(elapsed_ms)
            self.bodies.append(body)
            self.lags.append(lag_ms)
            self.offsets.append(offset_s)
        elif status == 503:
            self.refused.append(elapsed_ms)
        else:
            self.errors += 1

    def result(self, rate: float, duration_s: float, sent: int) -> OpenLoopResult:
        return OpenLoopResult(
            rate=rate,
            duration_s=duration_s,
            sent=sent,
            ok=len(self.ok),
            refused_503=len(self.refused),
            errors=self.errors,
            timeouts=self.timeouts,
            timeouts_unsent=self.timeouts_unsent,
            ok_latencies_ms=tuple(self.ok),
            refused_latencies_ms=tuple(self.refused),
            ok_bodies=tuple(self.bodies),
            ok_send_lag_ms=tuple(self.lags),
            ok_offsets_s=tuple(self.offsets),
        )


async def _send(
    pool: _Pool, request: bytes, scheduled: float, timeout_s: float, tally: _Tally, offset: float
) -> None:
    """One arrival: a connection (waiting for a slot counts), the exchange, its answer tallied;
    timed from `scheduled`, given up `timeout_s` after it."""
    written: float | None = None
    async with pool.slots:
        try:
            remaining = timeout_s - (time.perf_counter() - scheduled)
            if remaining <= 0:
                raise TimeoutError
            async with asyncio.timeout(remaining):
                reader, writer = await pool.take()
                written = time.perf_counter()
                try:
                    status, keep, body = await _exchange(reader, writer, request)
                except BaseException:
                    writer.close()
                    raise
        except TimeoutError:
            tally.timeouts += 1
            tally.timeouts_unsent += int(written is None)
            return
        except (
            OSError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
            IndexError,
        ):
            tally.errors += 1
            return
        elapsed_ms = (time.perf_counter() - scheduled) * 1000
        if keep:
            pool.idle.append((reader, writer))
        else:
            writer.close()
    assert written is not None  # an answer was read, so the request was written
    tally.answer(status, elapsed_ms, body, (written - scheduled) * 1000, offset)


async def _drive(
    url: str,
    paths: Sequence[tuple[str, float]],
    arrivals: Iterable[float],
    duration_s: float,
    timeout_s: float,
    rng: random.Random,
    offered: float | None = None,
) -> OpenLoopResult:
    host, port, _ = _split(url)
    requests = [_request(host, port, path) for path, _ in paths]
    total = sum(weight for _, weight in paths)
    cumulative = list(itertools.accumulate(weight / total for _, weight in paths))
    pool = _Pool(host, port)
    tally = _Tally()
    start = time.perf_counter()
    tasks: list[asyncio.Task[None]] = []
    for offset in arrivals:
        if len(tasks) >= MAX_REQUESTS:
            break
        next_at = start + offset
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        # One path: no draw (the arrival times stay those of the seed alone).
        pick = 0 if len(requests) == 1 else bisect.bisect_left(cumulative, rng.random())
        request = requests[min(pick, len(requests) - 1)]
        tasks.append(asyncio.create_task(_send(pool, request, next_at, timeout_s, tally, offset)))
    # Every request ends by its own timeout; this bound only guards against a bug.
    _, pending = await asyncio.wait(tasks, timeout=timeout_s + 5) if tasks else (set(), set())
    for task in pending:
        task.cancel()
        tally.timeouts += 1
        tally.timeouts_unsent += 1
    for reader_writer in pool.idle:
        reader_writer[1].close()
    rate = len(tasks) / duration_s if offered is None else offered
    return tally.result(rate, duration_s, len(tasks))


def run_open_loop(
    url: str, *, rate: float, duration_s: float, timeout_s: float = 5.0, seed: int | None = None
) -> OpenLoopResult:
    """Poisson arrivals at `rate` req/s on `url` for `duration_s`; each request times out after
    `timeout_s` from its scheduled start. Returns once every request is answered or timed out."""
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"rate: must be a positive number; got {rate!r}")
    return run_schedule(
        url, [(_split(url)[2], 1.0)], [(duration_s, rate)], timeout_s=timeout_s, seed=seed
    )


def run_schedule(
    url: str,
    paths: Sequence[tuple[str, float]],
    steps: Steps,
    *,
    timeout_s: float = 5.0,
    seed: int | None = None,
) -> OpenLoopResult:
    """Arrivals on the host and port of `url` following `steps` ((seconds, rate) in order,
    Poisson within each), each sent to one of `paths` ((path, weight)) by weight; each request
    times out `timeout_s` after its scheduled start. The result's rate is the mean offered."""
    if not paths or any(not (w > 0 and math.isfinite(w)) for _, w in paths):
        raise ValueError(f"paths: give at least one, each with a positive weight; got {paths!r}")
    if not steps or any(
        not (s > 0 and math.isfinite(s) and r >= 0 and math.isfinite(r)) for s, r in steps
    ):
        raise ValueError(f"steps: positive seconds, rates >= 0; got {list(steps)[:3]!r}...")
    if not any(rate > 0 for _, rate in steps):
        raise ValueError("steps: at least one step with a positive rate")
    rng = random.Random(seed)
    duration_s = sum(seconds for seconds, _ in steps)
    offered = sum(seconds * rate for seconds, rate in steps) / duration_s
    return asyncio.run(
        _drive(url, paths, _arrival_times(steps, rng), duration_s, timeout_s, rng, offered)
    )


def run_arrivals(
    url: str,
    paths: Sequence[tuple[str, float]],
    offsets: Sequence[float],
    *,
    duration_s: float,
    timeout_s: float = 5.0,
    seed: int | None = None,
) -> OpenLoopResult:
    """Arrivals at the given `offsets` (seconds from the start, ascending, each below
    `duration_s`), each sent to one of `paths` by weight (seeded); at most MAX_REQUESTS of them.
    The result's rate is what was sent over `duration_s`."""
    if not paths or any(not (w > 0 and math.isfinite(w)) for _, w in paths):
        raise ValueError(f"paths: give at least one, each with a positive weight; got {paths!r}")
    if not (duration_s > 0 and math.isfinite(duration_s)):
        raise ValueError(f"duration_s: must be a positive number; got {duration_s!r}")
    if not offsets or any(not (0 <= at < duration_s) for at in offsets):
        raise ValueError("offsets: at least one, each in [0, duration_s)")
    if any(b < a for a, b in itertools.pairwise(offsets)):
        raise ValueError("offsets: must be in ascending order")
    return asyncio.run(
        _drive(url, paths, iter(offsets), duration_s, timeout_s, random.Random(seed))
    )
