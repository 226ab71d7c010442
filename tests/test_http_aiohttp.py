"""async_session("aiohttp") against real loopback servers: the guarantees of the other sessions.

The same deterministic races as tests/test_http_sessions.py: a server that closes a connection
reused after its idle timeout ("late" mode), one that drops chosen methods unanswered, and a
timer-driven one at the idle edge.
"""

from __future__ import annotations

import asyncio
import random
import ssl
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from servertune.bench.harness.loopback import KeepAliveServer
from servertune.bench.harness.tls import TestPKI, make_test_pki
from servertune.http import (
    DEFAULT_ASYNC_POOL_MAXSIZE,
    RECOMMENDED_ASYNC_CLIENTS,
    async_session,
    client_idle_expiry,
    recommended_async_client,
    session,
    ssl_context,
)

IDLE = 0.3
CLOSED = r"(?i)closed|disconnected|aborted|reset"


async def _n(
    client: aiohttp.ClientSession, method: str, url: str, body: bytes | None = None
) -> int:
    async with client.request(method, url, data=body) as response:
        assert response.status == 200
        await response.read()
        return int(response.headers["X-Connection-Request"])


def _run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())  # type: ignore[arg-type]


def test_default_aiohttp_loses_a_post_on_a_connection_closed_at_the_idle_timeout() -> None:
    """Reproduction: aiohttp's 15 s keep-alive reuses the connection and the POST is lost."""

    async def scenario() -> None:
        async with aiohttp.ClientSession() as client:
            assert await _n(client, "GET", server.url) == 1
            await asyncio.sleep(IDLE + 0.15)
            with pytest.raises(aiohttp.ClientError, match=CLOSED):
                await _n(client, "POST", server.url, b"payload")

    with KeepAliveServer(IDLE, mode="late") as server:
        _run(scenario)
        assert server.stats.dropped == ["POST"]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_aiohttp_session_opens_a_new_connection_after_the_idle_expiry(method: str) -> None:
    """servertune's aiohttp session discards the idle connection first: nothing lost or replayed."""

    async def scenario() -> list[int]:
        async with async_session("aiohttp", server_idle_timeout=IDLE) as client:
            first = await _n(client, "GET", server.url)
            await asyncio.sleep(IDLE + 0.15)
            return [first, await _n(client, method, server.url, b"payload")]

    with KeepAliveServer(IDLE, mode="late") as server:
        assert _run(scenario) == [1, 1]
        assert server.stats.dropped == []
        assert server.stats.count(method) == (2 if method == "GET" else 1)


def test_aiohttp_reuses_connections_within_the_idle_window() -> None:
    """Two requests 100 ms apart use one connection: the expiry does not kill reuse."""

    async def scenario() -> list[int]:
        async with async_session("aiohttp", server="gunicorn") as client:
            first = await _n(client, "GET", server.url)
            await asyncio.sleep(0.1)
            return [first, await _n(client, "GET", server.url)]

    with KeepAliveServer(2.0) as server:
        assert _run(scenario) == [1, 2]
        assert server.stats.connections == 1


def test_aiohttp_idle_expiry_is_the_servertune_expiry() -> None:
    """The connector's keepalive_timeout is client_idle_expiry(server), not aiohttp's 15 s."""

    async def scenario() -> float | None:
        async with async_session("aiohttp", server="uvicorn") as client:
            connector = client.connector
            assert isinstance(connector, aiohttp.TCPConnector)
            return connector._keepalive_timeout

    assert _run(scenario) == client_idle_expiry("uvicorn")


def test_aiohttp_post_is_never_replayed_and_get_is_replayed_once() -> None:
    """A dropped POST reaches the server once; a dropped GET twice (one replay), on any socket."""

    async def scenario() -> None:
        async with async_session("aiohttp", server_idle_timeout=5) as client:
            assert await _n(client, "GET", server.url + "warm") == 1
            server.drop_methods = frozenset({"GET", "POST"})
            with pytest.raises(aiohttp.ClientError, match=CLOSED):
                await _n(client, "POST", server.url, b"payload")
            with pytest.raises(aiohttp.ClientError, match=CLOSED):
                await _n(client, "GET", server.url)

    with KeepAliveServer(5) as server:
        _run(scenario)
        assert server.stats.received == ["GET", "POST", "GET", "GET"]


def test_aiohttp_retries_false_sends_every_request_once() -> None:
    """With retries=False even an idempotent request is sent once."""

    async def scenario() -> None:
        async with async_session("aiohttp", server_idle_timeout=5, retries=False) as client:
            with pytest.raises(aiohttp.ClientError, match=CLOSED):
                await _n(client, "GET", server.url)

    with KeepAliveServer(5, drop_methods={"GET"}) as server:
        _run(scenario)
        assert server.stats.count("GET") == 1


def test_aiohttp_streamed_body_is_never_replayed() -> None:
    """A PUT whose body is an async generator cannot be sent again, so it is not replayed."""

    async def body() -> Any:
        yield b"chunk"

    async def scenario() -> None:
        async with async_session("aiohttp", server_idle_timeout=5) as client:
            with pytest.raises(aiohttp.ClientError, match=CLOSED):
                async with client.put(server.url, data=body()) as response:
                    await response.read()

    with KeepAliveServer(5, drop_methods={"PUT"}) as server:
        _run(scenario)
        assert server.stats.count("PUT") == 1


def test_aiohttp_ten_tasks_at_the_idle_edge_see_no_errors() -> None:
    """The idle race with 10 concurrent tasks, gaps of 0.99-1.0 s against a 1 s server: no errors."""
    errors: list[str] = []

    async def task(client: aiohttp.ClientSession) -> None:
        for i in range(3):
            if i:
                await asyncio.sleep(random.uniform(0.99, 1.0))
            try:
                await _n(client, "GET", server.url)
            except aiohttp.ClientError as exc:
                errors.append(repr(exc))

    async def scenario() -> None:
        async with async_session("aiohttp", server_idle_timeout=1.0) as client:
            await asyncio.wait_for(asyncio.gather(*(task(client) for _ in range(10))), 20)

    with KeepAliveServer(1.0, mode="timer") as server:
        _run(scenario)
        assert errors == []
        assert server.stats.answered == 30
        assert server.stats.dropped == []


def test_aiohttp_pool_maxsize_caps_connections_per_host() -> None:
    """pool_maxsize=2: eight concurrent slow requests to one host use two connections."""

    async def scenario() -> None:
        async with async_session("aiohttp", server_idle_timeout=5, pool_maxsize=2) as client:
            await asyncio.gather(*(_n(client, "GET", server.url) for _ in range(8)))

    with KeepAliveServer(5, handler_delay=0.05) as server:
        _run(scenario)
        assert server.stats.connections == 2
        assert server.stats.answered == 8


def test_async_sessions_take_their_clients_measured_pool_size() -> None:
    """aiohttp keeps DEFAULT_ASYNC_POOL_MAXSIZE["aiohttp"] (100) per host, httpx keeps 1,
    httpx2 keeps 100."""

    async def scenario() -> tuple[int, int, int, int]:
        async with async_session("aiohttp") as client:
            connector = client.connector
            assert connector is not None
            aiohttp_sizes = (connector.limit_per_host, connector.limit)
        async with async_session("httpx") as httpx_client:
            pool = httpx_client._transport.inner._pool  # type: ignore[attr-defined]
            httpx_size = pool._max_keepalive_connections
        async with async_session("httpx2") as httpx2_client:
            pool = httpx2_client._transport.inner._pool  # type: ignore[attr-defined]
            return (*aiohttp_sizes, httpx_size, pool._max_keepalive_connections)

    assert DEFAULT_ASYNC_POOL_MAXSIZE == {
        "aiohttp": 100,
        "httpx": 1,
        "httpx2": 100,
        "niquests": 100,
    }
    assert _run(scenario) == (100, 100, 1, 100)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPKI:
    """A throwaway CA and a 127.0.0.1 certificate."""
    return make_test_pki(tmp_path_factory.mktemp("pki"))


def test_aiohttp_shared_context_serves_https_and_stays_verified(pki: TestPKI) -> None:
    """Two sessions share one context over real TLS; it still verifies and gained no CA."""
    shared = ssl.create_default_context(cafile=str(pki.ca))
    cas_before = shared.cert_store_stats()["x509_ca"]

    async def scenario() -> None:
        for _ in range(2):
            async with async_session("aiohttp", ssl_context=shared) as client:
                assert await _n(client, "GET", server.url) == 1

    async def untrusting() -> None:
        async with async_session("aiohttp") as client:
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await _n(client, "GET", server.url)

    with KeepAliveServer(5, tls=pki.server_context()) as server:
        _run(scenario)
        _run(untrusting)
    assert shared.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname
    assert shared.cert_store_stats()["x509_ca"] == cas_before


def test_aiohttp_refuses_an_unverified_context() -> None:
    """A context with verification off is never shared with aiohttp either."""
    unverified = ssl.create_default_context()
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError, match="never shared"):
        async_session("aiohttp", ssl_context=unverified)


@pytest.mark.parametrize("option", ["connector", "limit_per_host", "keepalive_timeout"])
def test_aiohttp_options_servertune_sets_cannot_be_overridden(option: str) -> None:
    """Passing a connector setting servertune owns is a TypeError naming it."""

    async def scenario() -> None:
        with pytest.raises(TypeError, match=option):
            async_session("aiohttp", **{option: 1})  # type: ignore[call-overload]

    _run(scenario)


def test_aiohttp_ssl_option_and_shared_context_are_exclusive() -> None:
    """ssl= and ssl_context= together would hide one of them: refused."""

    async def scenario() -> None:
        with pytest.raises(TypeError, match="ssl_context or ssl"):
            async_session("aiohttp", ssl_context=ssl_context(), ssl=False)

    _run(scenario)


def test_async_session_without_a_client_uses_the_recommended_one() -> None:
    """async_session() builds the first installed RECOMMENDED_ASYNC_CLIENTS entry: aiohttp here."""
    assert RECOMMENDED_ASYNC_CLIENTS[0] == "aiohttp"
    assert recommended_async_client() == "aiohttp"

    async def scenario() -> object:
        async with async_session(server="gunicorn") as client:
            return client

    assert isinstance(_run(scenario), aiohttp.ClientSession)


def test_without_aiohttp_async_session_takes_httpx2_before_httpx() -> None:
    """The measured order: with aiohttp missing, async_session() builds an httpx2.AsyncClient."""
    import subprocess
    import sys

    assert RECOMMENDED_ASYNC_CLIENTS == ("aiohttp", "httpx2", "httpx", "niquests")
    code = (
        "import asyncio, importlib.util\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'aiohttp' else real(n, *a)\n"
        "from servertune.http import async_session, recommended_async_client\n"
        "async def main():\n"
        "    async with async_session() as client:\n"
        "        print(recommended_async_client(), type(client).__module__.split('.')[0])\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout == "httpx2 httpx2\n"


def test_sync_session_refuses_aiohttp() -> None:
    """aiohttp has no sync client: session("aiohttp") says to use async_session."""
    with pytest.raises(ValueError, match=r"async_session\('aiohttp'\)"):
        session("aiohttp")  # type: ignore[call-overload]


def test_missing_aiohttp_names_the_extra(tmp_path: Path) -> None:
    """With aiohttp unimportable, async_session("aiohttp") says pip install 'servertune[aiohttp]'."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['aiohttp'] = None\n"
        "from servertune.http import async_session\n"
        "try:\n"
        "    async_session('aiohttp')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
        cwd=tmp_path,
    )  # fmt: skip
    assert "pip install 'servertune[aiohttp]'" in out.stdout


def test_replay_is_prompt() -> None:
    """The replay of a dropped GET goes out at once, not after a back-off."""

    async def scenario() -> float:
        async with async_session("aiohttp", server_idle_timeout=5) as client:
            start = time.perf_counter()
            with pytest.raises(aiohttp.ClientError):
                await _n(client, "GET", server.url)
            return time.perf_counter() - start

    with KeepAliveServer(5, drop_methods={"GET"}) as server:
        assert _run(scenario) < 1.0
        assert server.stats.count("GET") == 2
