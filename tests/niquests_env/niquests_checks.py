"""servertune.http with niquests, run inside .venv-niquests only (tests/test_http_niquests.py).

niquests installs urllib3-future, which replaces `urllib3` for every package in its environment,
so these checks never run in the main test venv. They mirror tests/test_http_sessions.py.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time

import niquests
import pytest
import urllib3

from servertune.bench.harness.loopback import KeepAliveServer
from servertune.http import async_session, session, ssl_context

IDLE = 0.3
CLOSED = r"(?i)closed|disconnected|aborted|reset|retries"


def _n(response: niquests.Response) -> int:
    assert response.status_code == 200
    return int(response.headers["X-Connection-Request"])


def test_this_environment_has_urllib3_future() -> None:
    """The venv is what it should be: `urllib3` here is urllib3-future (patch version >= 900)."""
    assert int(urllib3.__version__.split(".")[2]) >= 900


def test_default_niquests_loses_a_post_at_the_idle_timeout() -> None:
    """Reproduction: niquests' default session reuses the connection and the POST is lost."""
    with KeepAliveServer(IDLE, mode="late") as server, niquests.Session() as s:
        assert _n(s.get(server.url)) == 1
        time.sleep(IDLE + 0.15)
        with pytest.raises(niquests.exceptions.ConnectionError, match=CLOSED):
            s.post(server.url, data=b"payload")
        assert server.stats.dropped == ["POST"]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_servertune_niquests_reconnects_after_the_idle_expiry(method: str) -> None:
    """servertune's niquests session discards the idle connection before the server closes it."""
    with KeepAliveServer(IDLE, mode="late") as server:
        with session("niquests", server_idle_timeout=IDLE) as s:
            assert _n(s.get(server.url)) == 1
            time.sleep(IDLE + 0.15)
            assert _n(s.request(method, server.url, data=b"payload")) == 1
        assert server.stats.dropped == []


def test_niquests_reuses_connections_within_the_idle_window() -> None:
    """Two requests 100 ms apart share one connection: reuse is not killed."""
    with KeepAliveServer(2.0) as server:
        with session("niquests", server="gunicorn") as s:
            assert _n(s.get(server.url)) == 1
            time.sleep(0.1)
            assert _n(s.get(server.url)) == 2
        assert server.stats.connections == 1


def test_niquests_post_is_never_replayed_and_get_is_replayed_once() -> None:
    """A dropped POST reaches the server once; a dropped GET twice (one replay)."""
    with KeepAliveServer(5, drop_methods={"GET", "POST"}) as server:
        with session("niquests", server_idle_timeout=5) as s:
            with pytest.raises(niquests.exceptions.ConnectionError, match=CLOSED):
                s.post(server.url, data=b"payload")
            with pytest.raises(niquests.exceptions.ConnectionError, match=CLOSED):
                s.get(server.url)
        assert server.stats.received == ["POST", "GET", "GET"]


def test_niquests_ten_threads_at_the_idle_edge_see_no_errors() -> None:
    """Seed 000's race against a 1 s idle server: 10 threads, 0.99-1.0 s gaps, zero errors."""
    errors: list[str] = []
    lock = threading.Lock()

    def worker(url: str) -> None:
        with session("niquests", server_idle_timeout=1.0) as s:
            for i in range(3):
                if i:
                    time.sleep(random.uniform(0.99, 1.0))
                try:
                    s.get(url).raise_for_status()
                except Exception as exc:
                    with lock:
                        errors.append(repr(exc))

    with KeepAliveServer(1.0, mode="timer") as server:
        threads = [threading.Thread(target=worker, args=(server.url,)) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert server.stats.answered == 30
        assert server.stats.connections == 30


def test_niquests_async_session_expires_idle_connections_and_keeps_reuse() -> None:
    """niquests' AsyncSession from async_session reuses within the window, reconnects after."""

    async def scenario(url: str) -> list[int]:
        async with async_session("niquests", server_idle_timeout=IDLE) as s:
            seen = []
            for pause in (0.0, 0.05, IDLE + 0.15):
                await asyncio.sleep(pause)
                seen.append(_n(await s.post(url, data=b"payload")))
            return seen

    with KeepAliveServer(IDLE, mode="late") as server:
        assert asyncio.run(scenario(server.url)) == [1, 2, 1]
        assert server.stats.dropped == []


def test_niquests_takes_no_ssl_context() -> None:
    """urllib3-future keeps its own per-process context; passing one is a clear TypeError."""
    with pytest.raises(TypeError, match="niquests takes no SSLContext"):
        session("niquests", ssl_context=ssl_context())
