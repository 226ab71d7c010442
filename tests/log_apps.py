"""A WSGI app (and its ASGI twin) with known service times per route, timing itself, for the
access-log tests.

Each request sleeps its route's time and appends `path ms via` (its own perf_counter time; via
is `server` when a server called it, `in-process` when `servertune measure` did) to the file
named by $LOG_APP_TIMES: the truth a log-derived workload is compared with.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

#: Seconds each route sleeps: /fast, /items/<id>, /slow and /export (the first path segment).
DELAYS = {"fast": 0.025, "items": 0.040, "slow": 0.150, "export": 1.2}


def app(environ: dict[str, object], start_response: Callable[..., object]) -> Iterable[bytes]:
    """Sleep the route's time, answer `ok`, and log the app's own time."""
    start = time.perf_counter()
    path = str(environ.get("PATH_INFO", "/"))
    time.sleep(DELAYS.get(path.strip("/").split("/")[0], DELAYS["fast"]))
    body = b"ok\n"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    elapsed_ms = (time.perf_counter() - start) * 1000
    times = os.environ.get("LOG_APP_TIMES")
    if times:
        # O_APPEND: a short write from each worker lands whole.
        with open(times, "a") as handle:
            # gunicorn names itself in SERVER_SOFTWARE, uWSGI in uwsgi.version; measure neither.
            served = "SERVER_SOFTWARE" in environ or "uwsgi.version" in environ
            via = "server" if served else "in-process"
            handle.write(f"{path} {elapsed_ms:.3f} {via}\n")
    return [body]


async def asgi_app(
    scope: dict[str, Any],
    receive: Callable[[], Awaitable[dict[str, Any]]],
    send: Callable[[dict[str, Any]], Awaitable[None]],
) -> None:
    """`app` for an ASGI server: await the route's time, answer `ok`, log the app's own time."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    start = time.perf_counter()
    path = str(scope["path"])
    await asyncio.sleep(DELAYS.get(path.strip("/").split("/")[0], DELAYS["fast"]))
    body = b"ok\n"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
    elapsed_ms = (time.perf_counter() - start) * 1000
    times = os.environ.get("LOG_APP_TIMES")
    if times:
        # A front (nginx, HAProxy) adds X-Forwarded-For; `servertune measure` in process does not.
        served = any(name == b"x-forwarded-for" for name, _ in scope["headers"])
        with open(times, "a") as handle:
            handle.write(f"{path} {elapsed_ms:.3f} {'server' if served else 'in-process'}\n")
