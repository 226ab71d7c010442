"""Drive HTTP load: wrk when it is on PATH (the tool the referenced articles used), else a built-in closed-loop client.

Both return a `LoadResult` with the same fields, so a scenario never cares which one ran. The
built-in generator is an asyncio HTTP/1.1 keep-alive client: each simulated user sends a request,
waits for the whole response, thinks for a random time in its range, and repeats until the
deadline. Requests still in flight at the deadline are waited for (up to a grace period) and
counted: cutting them off would hide exactly the head-of-line stalls the benchmarks look for.
Every loop is bounded in time and in request count and stops by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from servertune.bench.stats import percentile, percentile_curve

__all__ = [
    "LoadError",
    "LoadResult",
    "Users",
    "find_wrk",
    "parse_wrk_output",
    "run_builtin",
    "run_closed_loop",
    "run_wrk",
]

Tool = Literal["auto", "wrk", "builtin"]

#: wrk gives up on a request after 2 s by default and leaves it out of the latency figures;
#: the benchmarks want every slow response in the tail, so they wait this long instead.
WRK_TIMEOUT_S = 30
#: Upper bound on requests one built-in run may send: a runaway loop stops by itself.
MAX_REQUESTS = 1_000_000
#: Largest response head the built-in client accepts.
MAX_HEAD_BYTES = 65536
#: Pause before reconnecting after a failed request, so a dead server is not hammered.
RECONNECT_PAUSE_S = 0.05

_WRK_PCT_PREFIX = "servertune-pct"
# wrk calls done() once, after the run: print the latency distribution for plots and the
# exact maximum, in microseconds, one line per point.
_WRK_DONE_SCRIPT = """
local points = {%s}
function done(summary, latency, requests)
  for _, p in ipairs(points) do
    io.write(string.format("%s %%g %%d\\n", p, latency:percentile(p)))
  end
  io.write(string.format("%s 100 %%d\\n", latency.max))
end
"""


class LoadError(RuntimeError):
    """The load generator could not run or produced no result."""


@dataclass(frozen=True)
class LoadResult:
    """One load run: throughput, latency percentiles (ms) and errors."""

    tool: str
    connections: int
    duration_s: float
    requests: int
    errors: int
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    #: (percentile, latency ms) pairs for plots, ascending.
    distribution: tuple[tuple[float, float], ...] = ()
    #: Raw latencies (ms) where the tool keeps them (the built-in client does; wrk does not).
    latencies_ms: tuple[float, ...] = field(default=(), repr=False)

    def metrics(self) -> dict[str, Any]:
        """The issue #3 JSON metrics of this run (without `config` and `concurrency`).

        Latencies are None (JSON null) when no request succeeded: NaN is not JSON.
        """
        return {
            "rps": round(self.rps, 2),
            "p50_ms": _ms_or_none(self.p50_ms),
            "p90_ms": _ms_or_none(self.p90_ms),
            "p99_ms": _ms_or_none(self.p99_ms),
            "max_ms": _ms_or_none(self.max_ms),
            "errors": self.errors,
            "requests": self.requests,
        }

    def count_over(self, threshold_ms: float) -> int:
        """How many requests took longer than `threshold_ms` (needs raw latencies)."""
        return sum(1 for value in self.latencies_ms if value > threshold_ms)


def _ms_or_none(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 2)


# --- wrk ------------------------------------------------------------------------------------------


def find_wrk() -> str | None:
    """wrk's path, or None when it is not installed."""
    return shutil.which("wrk")


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_TIME = r"([0-9.]+)(us|ms|s|m|h)"


def _ms(number: str, unit: str) -> float:
    return float(number) * _UNITS_MS[unit]


def parse_wrk_output(text: str, connections: int, duration_s: float) -> LoadResult:
    """Parse `wrk --latency` output (and our done() lines, when present) into a LoadResult."""
    latency = re.search(rf"^\s*Latency\s+{_TIME}\s+{_TIME}\s+{_TIME}", text, re.MULTILINE)
    rps = re.search(r"^Requests/sec:\s+([0-9.]+)", text, re.MULTILINE)
    total = re.search(r"^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m|h)", text, re.MULTILINE)
    if latency is None or rps is None or total is None:
        raise LoadError(f"cannot parse wrk output:\n{text}")
    pcts = {
        float(m.group(1)): _ms(m.group(2), m.group(3))
        for m in re.finditer(rf"^\s+([0-9.]+)%\s+{_TIME}\s*$", text, re.MULTILINE)
    }
    if not {50.0, 90.0, 99.0} <= pcts.keys():
        raise LoadError(f"wrk output has no latency distribution (run with --latency):\n{text}")
    errors = 0
    socket = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text
    )
    if socket:
        errors += sum(int(g) for g in socket.groups())
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if non_2xx:
        errors += int(non_2xx.group(1))
    curve = sorted(
        (float(m.group(1)), int(m.group(2)) / 1000)
        for m in re.finditer(rf"^{_WRK_PCT_PREFIX} ([0-9.]+) (\d+)$", text, re.MULTILINE)
    )
    # The summary's max is rounded to 2 decimals in its unit; done() printed it exactly.
    max_ms = curve[-1][1] if curve and curve[-1][0] == 100 else _ms(*latency.group(5, 6))
    # Same for the percentiles: wrk prints them with %.2Lf (long double), which can round a
    # value up past the exact max; take every figure from done() when it printed them.
    exact = dict(curve)
    pcts = {p: exact.get(p, v) for p, v in pcts.items()}
    return LoadResult(
        tool="wrk",
        connections=connections,
        duration_s=_ms(total.group(2), total.group(3)) / 1000 or duration_s,
        requests=int(total.group(1)),
        errors=errors,
        rps=float(rps.group(1)),
        p50_ms=pcts[50.0],
        p90_ms=pcts[90.0],
        p99_ms=pcts[99.0],
        max_ms=max_ms,
        distribution=tuple(curve),
    )


def run_wrk(
    url: str,
    *,
    connections: int,
    duration_s: float,
    threads: int = 1,
    timeout_s: int = WRK_TIMEOUT_S,
    wrk: str | None = None,
) -> LoadResult:
    """Run `wrk --latency` (one thread, as in the referenced articles) and parse what it prints."""
    binary = wrk or find_wrk()
    if binary is None:
        raise LoadError("wrk is not on PATH")
    seconds = max(1, round(duration_s))  # wrk takes whole seconds
    from servertune.bench.stats import DISTRIBUTION_POINTS

    points = ", ".join(f"{p:g}" for p in DISTRIBUTION_POINTS if p < 100)
    with tempfile.TemporaryDirectory(prefix="servertune-wrk-") as tmp:
        script = Path(tmp) / "done.lua"
        script.write_text(_WRK_DONE_SCRIPT % (points, _WRK_PCT_PREFIX, _WRK_PCT_PREFIX))
        argv = [
            binary,
            f"-t{min(threads, connections)}",
            f"-c{connections}",
            f"-d{seconds}s",
            f"--timeout={timeout_s}s",
            "--latency",
            "-s",
            str(script),
            url,
        ]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=seconds + timeout_s + 10,
                check=False,
            )
        except subprocess.TimeoutExpired as error:  # run() has killed wrk already
            raise LoadError(f"wrk did not finish: {error}") from None
    if done.returncode != 0:
        raise LoadError(f"wrk failed ({done.returncode}): {done.stderr.strip()}")
    return parse_wrk_output(done.stdout, connections, seconds)


# --- the built-in closed-loop generator -----------------------------------------------------------


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


def run_closed_loop(
    url: str,
    *,
    connections: int,
    duration_s: float,
    tool: Tool = "auto",
) -> LoadResult:
    """`connections` users with no think time on `url`: wrk when available (or asked), else built-in."""
    if tool == "wrk" or (tool == "auto" and find_wrk() is not None):
        return run_wrk(url, connections=connections, duration_s=duration_s)
    path = urlsplit(url).path or "/"
    result = run_builtin(url, [Users(path, connections)], duration_s=duration_s)[path]
    if result.requests == 0:
        raise LoadError(f"no request to {url} succeeded ({result.errors} errors)")
    return result
