"""httpx clients: `keepalive_expiry` from the server's idle timeout, and the replay-once transport.

httpx has the idle expiry urllib3 lacks (`Limits.keepalive_expiry`, default 5 s, longer than
gunicorn's 2 s keep-alive). Its transport retries cover connect errors only, so a request that
loses the idle race fails; the wrapper here replays it once when the method is idempotent and
the body can be sent again.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx

from servertune.http._httpx_options import split_options
from servertune.http._retry import REUSED_CONNECTION_RETRIES, is_closed_connection, is_replayable

__all__ = ["new_async_client", "new_client"]

#: The errors httpx raises when the peer closed a connection before answering.
_CLOSED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def _may_replay(request: httpx.Request, error: Exception, attempt: int) -> bool:
    return (
        attempt < REUSED_CONNECTION_RETRIES
        and is_replayable(request.method)
        # A generator body is gone once sent; bytes (and json/form, encoded to bytes) are not.
        and isinstance(request.stream, httpx.ByteStream)
        and is_closed_connection(error)
    )


class ReplayOnClosedTransport(httpx.BaseTransport):
    """Send again, once, an idempotent request whose connection the server closed."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Forward to the inner transport; replay once on a closed connection."""
        attempt = 0
        while True:
            try:
                return self.inner.handle_request(request)
            except _CLOSED as error:
                if not _may_replay(request, error, attempt):
                    raise
                attempt += 1

    def close(self) -> None:
        """Close the inner transport's pool."""
        self.inner.close()


class AsyncReplayOnClosedTransport(httpx.AsyncBaseTransport):
    """The async twin of ReplayOnClosedTransport."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Forward to the inner transport; replay once on a closed connection."""
        attempt = 0
        while True:
            try:
                return await self.inner.handle_async_request(request)
            except _CLOSED as error:
                if not _may_replay(request, error, attempt):
                    raise
                attempt += 1

    async def aclose(self) -> None:
        """Close the inner transport's pool."""
        await self.inner.aclose()


def _split(
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    options: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    options, transport_kwargs, limit_values = split_options(
        idle_expiry, pool_maxsize, ssl_context, options
    )
    limits = httpx.Limits(**limit_values)
    transport_kwargs["limits"] = limits
    # The client keeps the same settings for transports it builds itself (proxies from env).
    return {**options, "limits": limits}, transport_kwargs


def new_client(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> httpx.Client:
    """An `httpx.Client` whose idle connections expire before the server closes them."""
    client_kwargs, transport_kwargs = _split(idle_expiry, pool_maxsize, ssl_context, options)
    transport: httpx.BaseTransport = httpx.HTTPTransport(**transport_kwargs)
    if retries:
        transport = ReplayOnClosedTransport(transport)
    return httpx.Client(transport=transport, **client_kwargs)


def new_async_client(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` configured like `new_client`."""
    client_kwargs, transport_kwargs = _split(idle_expiry, pool_maxsize, ssl_context, options)
    transport: httpx.AsyncBaseTransport = httpx.AsyncHTTPTransport(**transport_kwargs)
    if retries:
        transport = AsyncReplayOnClosedTransport(transport)
    return httpx.AsyncClient(transport=transport, **client_kwargs)
