"""The `bench asgi` app: each request awaits uniform(0, AWAIT_MS) ms, then blocks its loop BLOCK_MS ms.

Awaiting is what an ASGI app does while it waits on a database or an API: the loop serves other
requests meanwhile. Blocking is Python CPU run on the loop (a template render, JSON of a large
object): nothing else on that process runs until it ends. The two are known exactly, so the plan
servertune derives for this app can be checked against what the servers do with it.

`app` is the ASGI callable (uvicorn, granian, gunicorn's uvicorn worker all serve it); the body
names the answering process, so tests can see every worker take requests.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

#: Upper end of the awaited time: uniform(0, 200) ms, the wait the sync_to_async article used.
AWAIT_MS = float(os.environ.get("SERVERTUNE_BENCH_AWAIT_MS", "200"))
#: Loop-blocking CPU per request.
BLOCK_MS = float(os.environ.get("SERVERTUNE_BENCH_BLOCK_MS", "10"))

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def burn(ms: float) -> None:
    """Run `ms` milliseconds of CPU in Python, holding the GIL and the loop all along.

    Counted in this thread's CPU time, not wall time: a process the kernel preempts (more
    processes than cores) must still do the whole work, as a real request would.
    """
    deadline = time.thread_time() + ms / 1000
    while time.thread_time() < deadline:
        pass


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """Await, then block the loop; `/` with `?fast` skips both (readiness probes)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope.get("query_string") != b"fast":
        await asyncio.sleep(random.uniform(0, AWAIT_MS) / 1000)
        burn(BLOCK_MS)
    body = f"pid {os.getpid()}\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/plain"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
