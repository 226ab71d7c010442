"""The raw ASGI app `servertune bench sync-to-async` serves with uvicorn, one variant per process.

Every request waits uniform(SERVERTUNE_BENCH_MIN_MS (0), SERVERTUNE_BENCH_MAX_MS) milliseconds (a published load test's, scaled from 2 s
to 200 ms): natively with `asyncio.sleep`, or as a blocking `time.sleep` bridged by one of the
ways of calling sync code from async code. The variant is read from the environment at startup:

* `native`: `await asyncio.sleep(t)`, the ceiling;
* `asgiref-default`: `asgiref.sync.sync_to_async(f)`: thread_sensitive=True, one thread;
* `asgiref-unsensitive`: `sync_to_async(f, thread_sensitive=False)`: the loop's default pool;
* `asgiref-context`: the same inside `ThreadSensitiveContext()` per request (Django's way);
* `servertune`: `servertune.asgi.sync_to_async(f)` on the pool `install()` sized with
  SERVERTUNE_BENCH_THREADS threads and SERVERTUNE_BENCH_QUEUE_TIMEOUT seconds (unset: none),
  answering 503 on `OverloadedError`.

Run: `SERVERTUNE_BENCH_VARIANT=native uvicorn --factory servertune.bench.apps.sync_app:create`.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["VARIANTS", "create"]

VARIANTS = ("native", "asgiref-default", "asgiref-unsensitive", "asgiref-context", "servertune")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _blocking(seconds: float) -> None:
    time.sleep(seconds)


def _waiter(variant: str) -> Callable[[float], Awaitable[None]]:
    if variant == "native":
        return asyncio.sleep
    if variant == "servertune":
        from servertune.asgi import sync_to_async

        return sync_to_async(_blocking)
    from asgiref.sync import ThreadSensitiveContext
    from asgiref.sync import sync_to_async as asgiref_sync_to_async

    if variant == "asgiref-default":
        return asgiref_sync_to_async(_blocking)
    if variant == "asgiref-unsensitive":
        return asgiref_sync_to_async(_blocking, thread_sensitive=False)
    if variant == "asgiref-context":
        bridged = asgiref_sync_to_async(_blocking)

        async def per_request_context(seconds: float) -> None:
            # What Django's ASGIHandler does around every request: thread-sensitive calls of
            # one request share a thread of their own, so each request gets a new thread.
            async with ThreadSensitiveContext():
                await bridged(seconds)

        return per_request_context
    raise ValueError(
        f"SERVERTUNE_BENCH_VARIANT: must be one of {', '.join(VARIANTS)}; got {variant!r}"
    )


def create() -> App:
    """The app for the variant named by SERVERTUNE_BENCH_VARIANT (uvicorn --factory)."""
    variant = os.environ.get("SERVERTUNE_BENCH_VARIANT", "native")
    max_s = float(os.environ.get("SERVERTUNE_BENCH_MAX_MS", "200")) / 1000
    min_s = float(os.environ.get("SERVERTUNE_BENCH_MIN_MS", "0")) / 1000
    threads = int(os.environ.get("SERVERTUNE_BENCH_THREADS", "0"))
    queue_timeout = float(os.environ.get("SERVERTUNE_BENCH_QUEUE_TIMEOUT", "0")) or None
    wait = _waiter(variant)
    uniform = random.Random(os.getpid()).uniform

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    if variant == "servertune":
                        from servertune.asgi import install

                        install(max_threads=threads or None, queue_timeout=queue_timeout)
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        status, body = 200, b"ok\n"
        try:
            await wait(uniform(min_s, max_s))
        except Exception as error:
            from servertune.asgi import OverloadedError

            if not isinstance(error, OverloadedError):
                raise
            status, body = error.status_code, b"overloaded\n"
        headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app
