"""servertune.http sessions against real loopback servers that close idle connections (issue #4).

Each client is driven the same way; niquests runs the same checks from its own venv
(tests/test_http_niquests.py).
"""

from __future__ import annotations

import asyncio
import importlib
import time

import pytest

from servertune.bench.harness.loopback import KeepAliveServer
from servertune.http import async_session, session
from tests.http_support import (
    HTTPX_CLIENTS,
    MAIN_CLIENTS,
    call,
    close,
    default_client,
    idle_edge_load,
)

#: A short server idle timeout keeps the tests fast; the client idle expiry is then 0.15 s.
IDLE = 0.3
#: How each client words "the server closed the connection" (and "gave up after retrying").
CLOSED = r"(?i)closed|disconnected|aborted|reset"
CLOSED_OR_RETRIED = CLOSED + "|retries"


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_default_client_loses_a_post_on_a_connection_closed_at_the_idle_timeout(
    client: str,
) -> None:
    """Reproduction: each library's default reuses the connection and the request is lost."""
    with KeepAliveServer(IDLE, mode="late") as server:
        c = default_client(client)
        try:
            assert call(c, "GET", server.url) == 1
            time.sleep(IDLE + 0.15)
            with pytest.raises(Exception, match=CLOSED):
                call(c, "POST", server.url, b"payload")
        finally:
            close(c)
        assert server.stats.dropped == ["POST"]


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_servertune_session_opens_a_new_connection_after_the_idle_expiry(
    client: str, method: str
) -> None:
    """servertune's session discards the idle connection first, so nothing is lost or replayed."""
    with KeepAliveServer(IDLE, mode="late") as server:
        c = session(client, server_idle_timeout=IDLE)  # type: ignore[call-overload]
        try:
            assert call(c, "GET", server.url) == 1
            time.sleep(IDLE + 0.15)
            assert call(c, method, server.url, b"payload") == 1
        finally:
            close(c)
        assert server.stats.dropped == []
        assert server.stats.count(method) == (2 if method == "GET" else 1)


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_connections_are_reused_within_the_idle_window(client: str) -> None:
    """Two requests 100 ms apart use one connection."""
    with KeepAliveServer(2.0) as server:
        c = session(client, server="gunicorn")  # type: ignore[call-overload]
        try:
            assert call(c, "GET", server.url) == 1
            time.sleep(0.1)
            assert call(c, "GET", server.url) == 2
        finally:
            close(c)
        assert server.stats.connections == 1


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_post_on_a_dropped_connection_is_never_replayed(client: str) -> None:
    """A POST the server drops unanswered raises, and the server received it exactly once."""
    with KeepAliveServer(5, drop_methods={"POST"}) as server:
        c = session(client, server_idle_timeout=5)  # type: ignore[call-overload]
        try:
            assert call(c, "GET", server.url) == 1
            with pytest.raises(Exception, match=CLOSED):
                call(c, "POST", server.url, b"payload")
        finally:
            close(c)
        assert server.stats.count("POST") == 1


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_idempotent_request_on_a_dropped_connection_is_replayed_exactly_once(
    client: str,
) -> None:
    """A GET the server drops is sent once more, not more: the server receives it twice."""
    with KeepAliveServer(5, drop_methods={"GET"}) as server:
        c = session(client, server_idle_timeout=5)  # type: ignore[call-overload]
        try:
            with pytest.raises(Exception, match=CLOSED_OR_RETRIED):
                call(c, "GET", server.url)
        finally:
            close(c)
        assert server.stats.count("GET") == 2


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_retries_false_sends_every_request_once(client: str) -> None:
    """With retries=False even an idempotent request is sent once."""
    with KeepAliveServer(5, drop_methods={"GET"}) as server:
        c = session(client, server_idle_timeout=5, retries=False)  # type: ignore[call-overload]
        try:
            with pytest.raises(Exception, match=CLOSED_OR_RETRIED):
                call(c, "GET", server.url)
        finally:
            close(c)
        assert server.stats.count("GET") == 1


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_ten_threads_at_the_idle_edge_see_no_errors(client: str) -> None:
    """Seed 000's race: 10 threads, gaps of 0.99-1.0 s against a 1 s idle server, zero errors.

    Every gap is longer than the client's idle expiry (0.75 s), so every request opens a new
    connection and none can meet the server's close.
    """
    with KeepAliveServer(1.0, mode="timer") as server:
        result = idle_edge_load(
            lambda: session(client, server_idle_timeout=1.0),  # type: ignore[call-overload]
            server.url,
            threads=10,
            per_thread=3,
            gap=(0.99, 1.0),
        )
        assert result.errors == []
        assert result.sent == server.stats.answered == 30
        assert server.stats.connections == 30
        assert server.stats.dropped == []


@pytest.mark.parametrize("client_name", HTTPX_CLIENTS)
def test_httpx_async_client_expires_idle_connections_and_keeps_reuse(client_name: str) -> None:
    """httpx's (and httpx2's) AsyncClient from async_session reuses within the window and
    reconnects after it."""

    async def scenario(url: str) -> list[int]:
        async with async_session(client_name, server_idle_timeout=IDLE) as client:  # type: ignore[call-overload]
            seen = []
            for pause in (0.0, 0.05, IDLE + 0.15):
                await asyncio.sleep(pause)
                response = await client.post(url, content=b"payload")
                seen.append(int(response.headers["X-Connection-Request"]))
            return seen

    with KeepAliveServer(IDLE, mode="late") as server:
        assert asyncio.run(scenario(server.url)) == [1, 2, 1]
        assert server.stats.dropped == []


@pytest.mark.parametrize("client_name", HTTPX_CLIENTS)
def test_httpx_async_client_replays_an_idempotent_request_once(client_name: str) -> None:
    """The async replay transport sends a dropped GET twice in all, a dropped POST once."""
    library = importlib.import_module(client_name)

    async def scenario(url: str) -> None:
        async with async_session(client_name, server_idle_timeout=5) as client:  # type: ignore[call-overload]
            with pytest.raises(library.RemoteProtocolError):
                await client.get(url)
            with pytest.raises(library.RemoteProtocolError):
                await client.post(url, content=b"payload")

    with KeepAliveServer(5, drop_methods={"GET", "POST"}) as server:
        asyncio.run(scenario(server.url))
        assert server.stats.received == ["GET", "GET", "POST"]


@pytest.mark.parametrize("client_name", HTTPX_CLIENTS)
def test_httpx_streamed_body_is_never_replayed(client_name: str) -> None:
    """A PUT whose body is a generator cannot be sent again, so it is not replayed."""
    library = importlib.import_module(client_name)

    def body() -> object:
        yield b"chunk"

    with KeepAliveServer(5, drop_methods={"PUT"}) as server:
        client = session(client_name, server_idle_timeout=5)  # type: ignore[call-overload]
        try:
            with pytest.raises(library.RemoteProtocolError):
                client.put(server.url, content=body())
        finally:
            client.close()
        assert server.stats.count("PUT") == 1


@pytest.mark.parametrize("client", MAIN_CLIENTS)
def test_read_timeout_is_not_retried(client: str) -> None:
    """A slow answer is not the idle race: the timeout is raised and the GET sent once."""
    with KeepAliveServer(5, handler_delay=0.5) as server:
        c = session(client, server_idle_timeout=5)  # type: ignore[call-overload]
        try:
            with pytest.raises(Exception, match=r"(?i)timed? ?out"):
                c.request("GET", server.url, timeout=0.1)
        finally:
            close(c)
        assert server.stats.count("GET") == 1
