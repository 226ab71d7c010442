"""What `balancer-maxconn-over-app-limit` says, on a real HAProxy in front of a real uvicorn:
past the app's own limit uvicorn answers 503 itself; within it, counting the connections
HAProxy keeps open after their answers, HAProxy queues the rest.

The app holds each request until the test releases it (a file), and marks each request it
holds: the test waits on those marks and on responses, never on the clock.
"""

from __future__ import annotations

import http.client
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.sizing import Machine

from .support import accepts, free_ports, running, tool, wait_for

#: A raw ASGI app: /hold marks itself held and waits (20 s at most) for the release file.
APP = """\
import asyncio, os, uuid
HERE = os.path.dirname(os.path.abspath(__file__))
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    open(os.path.join(HERE, "held-" + uuid.uuid4().hex), "w").close()
    for _ in range(400):
        if os.path.exists(os.path.join(HERE, "release")):
            break
        await asyncio.sleep(0.05)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})
"""

HAPROXY = """\
global
    maxconn 100
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout http-keep-alive 30s
    timeout server 30s
    timeout queue 20s
frontend web
    bind 127.0.0.1:{front}
    default_backend workers
backend workers
{reuse}    server w0 127.0.0.1:{app} {options}
"""

#: uvicorn's limit: it answers 503 once its open connections reach it, the request's own
#: included, so it serves LIMIT - 1 connections at once.
LIMIT = 3
REQUESTS = 4


def _get(port: int) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/hold")
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _open_at(port: int) -> int:
    """The connections the kernel still holds at a local TCP port (its listener not counted):
    a server-side socket lives until the server has closed it, which asyncio does right after
    calling the protocol's connection_lost, where uvicorn stops counting it."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    listen = "0A"
    return sum(
        1
        for fields in (line.split() for line in lines)
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] != listen
    )


def _held(directory: Path) -> int:
    return len(list(directory.glob("held-*")))


@pytest.mark.parametrize(
    ("reuse", "options", "found"),
    [
        # 4 requests at once, past the limit: uvicorn answers 503 while the others are held.
        ("    http-reuse always\n", f"maxconn {REQUESTS}", True),
        # Within the limit by maxconn, but `http-reuse safe` (the default) sends each client's
        # first request over a new connection while the answered ones wait in the idle pool.
        ("", f"maxconn {LIMIT - 1}", True),
        # The idle pool bounded to what maxconn leaves (none): HAProxy queues the other 2.
        ("", f"maxconn {LIMIT - 1} pool-max-conn 0", False),
    ],
    ids=["over-the-limit", "idle-pool", "bounded-pool"],
)
def test_uvicorn_answers_503_past_its_limit_and_haproxy_queues_within_it(
    tmp_path: Path, reuse: str, options: str, found: bool
) -> None:
    """maxconn 4 over --limit-concurrency 3 (serving 2): check warns, and uvicorn answers 503
    to the requests past it while the others are held. maxconn 2 with HAProxy's default idle
    pool: check warns, and the 2 requests HAProxy queued reach uvicorn on new connections
    beside the 2 idle ones and get its 503. maxconn 2 with `pool-max-conn 0`: no finding, the
    2 other requests wait in HAProxy's queue and all 4 are answered 200."""
    maxconn = int(options.split()[1])
    front, port = free_ports(2)
    (tmp_path / "app.py").write_text(APP)
    config = HAPROXY.format(front=front, app=port, reuse=reuse, options=options)
    (tmp_path / "haproxy.cfg").write_text(config)
    uvicorn = [
        tool("uvicorn"), "app:app", "--host", "127.0.0.1", "--port", str(port),
        "--limit-concurrency", str(LIMIT), "--timeout-keep-alive", "65", "--lifespan", "off",
        "--no-access-log",
    ]  # fmt: skip
    (tmp_path / "start.sh").write_text("#!/bin/sh\nexec uvicorn " + " ".join(uvicorn[1:]) + "\n")
    checked = check_files(
        [tmp_path / "haproxy.cfg", tmp_path / "start.sh"], machine=Machine(cores=1), env={}
    )
    warned = [f for f in checked.findings if f.rule == "balancer-maxconn-over-app-limit"]
    assert bool(warned) == found
    haproxy = [tool("haproxy"), "-db", "-f", str(tmp_path / "haproxy.cfg")]
    with running(uvicorn, tmp_path), running(haproxy, tmp_path):
        wait_for(lambda: accepts(f"127.0.0.1:{port}") and accepts(f"127.0.0.1:{front}"))
        # uvicorn counts the probe's connection until it has seen it close: wait for that, so
        # that only HAProxy's connections meet its limit.
        wait_for(lambda: _open_at(port) == 0, what="uvicorn closing the probe's connection")
        with ThreadPoolExecutor(REQUESTS) as pool:
            futures: list[Future[tuple[int, bytes]]] = [
                pool.submit(_get, front) for _ in range(REQUESTS)
            ]
            try:
                if maxconn > LIMIT:
                    # The requests past the limit come back while the others are held.
                    wait_for(lambda: sum(f.done() for f in futures) >= REQUESTS - (LIMIT - 1),
                             what="uvicorn's 503s")  # fmt: skip
                else:
                    wait_for(lambda: _held(tmp_path) == maxconn, what="the held requests")
                    assert not any(f.done() for f in futures)  # the rest wait in HAProxy
            finally:
                (tmp_path / "release").touch()
            answers = [f.result(timeout=30) for f in futures]
    statuses = sorted(status for status, _ in answers)
    from_app = [b for status, b in answers if status == 503 and b"<html>" not in b]
    assert statuses.count(503) == len(from_app), answers  # none of HAProxy's
    if maxconn > LIMIT:
        assert len(from_app) >= REQUESTS - (LIMIT - 1), answers  # uvicorn's own 503s
    elif found:
        assert statuses[:maxconn] == [200] * maxconn, answers  # the held ones
        assert from_app, answers  # a queued one met the idle connections at uvicorn
    else:
        assert statuses == [200] * REQUESTS, answers
