"""Apps with known CPU fractions, for `servertune measure` tests and the docs recipe.

The CPU parts spin on `time.thread_time()` rather than run a fixed amount of work, so each one
costs the same CPU time on any machine: the known ratio holds on a fast box, a slow one and a
busy one alike. Seed 000's app is five rounds of a 10 ms sleep and 10 ms of fib (its `fib(25)`
took about 10 ms there), so half of its time holds the GIL.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from typing import Any

#: One round of seed 000's app: 10 ms asleep, then 10 ms of CPU.
ROUND_S = 0.010
ROUNDS = 5

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


def fib(n: int) -> int:
    """The seed's CPU work: naive recursion, all in the interpreter, holding the GIL."""
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def burn_cpu(seconds: float) -> None:
    """Run fib until this thread has used `seconds` of CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        fib(12)


def _ok(start_response: StartResponse) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
    return [b"Hello, world"]


def half_gil(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """bench balance's app: five rounds of 10 ms asleep and 10 ms of CPU, cpu_fraction 0.5."""
    for _ in range(ROUNDS):
        time.sleep(ROUND_S)
        burn_cpu(ROUND_S)
    return _ok(start_response)


def pure_sleep(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """Waits 20 ms without using the CPU: cpu_fraction about 0."""
    time.sleep(2 * ROUND_S)
    return _ok(start_response)


def pure_cpu(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """Computes for 20 ms: cpu_fraction about 1."""
    burn_cpu(2 * ROUND_S)
    return _ok(start_response)


def not_found(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """Answers 404 to everything."""
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no"]


async def asgi_pure_sleep(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Awaits 20 ms and answers: the loop is free the whole time (no lifespan support)."""
    if scope["type"] != "http":
        raise RuntimeError("lifespan not supported")
    await receive()
    await asyncio.sleep(0.02)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def asgi_half_gil(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """half_gil as ASGI: awaits 10 ms, computes 10 ms, five times; answers lifespan."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                scope["state"]["started"] = True
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    assert scope["state"].get("started"), "lifespan state reaches requests"
    await receive()
    for _ in range(ROUNDS):
        await asyncio.sleep(ROUND_S)
        burn_cpu(ROUND_S)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"Hello, world"})


async def asgi_half_in_a_thread(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Computes 4 ms on the loop and 4 ms in a thread (`asyncio.to_thread`, as sync_to_async
    does), awaiting the thread: half its CPU runs off the loop."""
    if scope["type"] != "http":
        raise RuntimeError("lifespan not supported")
    await receive()
    burn_cpu(0.004)
    await asyncio.to_thread(burn_cpu, 0.004)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def raises(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """A WSGI app with a bug: every request divides by zero (the line `measure` must name)."""
    return [str(1 / len(environ.get("servertune.none", ""))).encode()]  # the failing line


async def asgi_raises(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app without lifespan whose requests raise KeyError."""
    if scope["type"] == "lifespan":
        raise RuntimeError("no lifespan here")
    raise KeyError("missing-setting")


def never_answers(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """Blocks for an hour, ignoring ordinary exceptions: `measure` must still end."""
    with contextlib.suppress(Exception):  # an app that swallows errors, as some do
        time.sleep(3600)
    return _ok(start_response)


async def asgi_never_answers(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Awaits forever (no lifespan support)."""
    if scope["type"] == "lifespan":
        raise RuntimeError("no lifespan here")
    await asyncio.sleep(3600)


def slow_then_stuck(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """Answers in 50 ms twice, then blocks for an hour (reset `_STUCK` before use)."""
    _STUCK["n"] += 1
    time.sleep(0.05 if _STUCK["n"] <= 2 else 3600)
    return _ok(start_response)


#: How many requests `slow_then_stuck` has seen.
_STUCK = {"n": 0}
# Older names, kept for the tests that use them.
seed000 = half_gil
asgi_seed000 = asgi_half_gil


def exits(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """A WSGI app that ends the process with `sys.exit(5)` during a request."""
    raise SystemExit(5)


def interrupts(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """A WSGI app that raises KeyboardInterrupt during a request."""
    raise KeyboardInterrupt


def hard_exits(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """A WSGI app that calls `os._exit(0)` during a request: no handler, no atexit runs."""
    import os

    os._exit(0)


#: asgi_crowded: past this many requests in flight, each request costs the loop more.
CROWD_FREE = 12
_CROWD = {"held": 0}


async def asgi_crowded(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Awaits 20 ms, then, past CROWD_FREE requests in flight, burns 0.5 ms of loop time for
    every request held (as a client pool that scans its connections on each request does)."""
    if scope["type"] != "http":
        raise RuntimeError("lifespan not supported")
    await receive()
    _CROWD["held"] += 1
    try:
        await asyncio.sleep(0.02)
        if _CROWD["held"] > CROWD_FREE:
            burn_cpu(0.0005 * _CROWD["held"])
    finally:
        _CROWD["held"] -= 1
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


#: one_in_five_slow's requests so far: every fifth waits SLOW_ONE_S, the others FAST_ONE_S.
_served = [0]
FAST_ONE_S = 0.010
SLOW_ONE_S = 0.100


def one_in_five_slow(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """Four requests in five wait 10 ms, the fifth 100 ms: median 10 ms, mean 28 ms."""
    _served[0] += 1
    time.sleep(SLOW_ONE_S if _served[0] % 5 == 0 else FAST_ONE_S)
    return _ok(start_response)
