"""httpx2 clients: httpx's session (`_httpx`) for Pydantic's maintained fork of httpx.

httpx2 is httpx 0.28.1 renamed (`import httpx2`, its pool `httpcore2`), with the same public API
and the same defaults that matter here: `Limits.keepalive_expiry` 5 s, longer than gunicorn's
2 s keep-alive, and transport retries for connect errors only (httpx2 `_config.py`,
`_transports/default.py`). It installs beside httpx without conflict (its docs/migration.md,
"You Can Have Both Installed"), so this module imports httpx2 alone and never httpx: the two
libraries' classes are distinct, and a session is built from one of them throughout.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx2

from servertune.http._httpx_options import split_options
from servertune.http._retry import REUSED_CONNECTION_RETRIES, is_closed_connection, is_replayable

__all__ = ["new_async_client", "new_client"]

#: The errors httpx2 raises when the peer closed a connection before answering.
_CLOSED = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)


def _may_replay(request: httpx2.Request, error: Exception, attempt: int) -> bool:
    return (
        attempt < REUSED_CONNECTION_RETRIES
        and is_replayable(request.method)
        # A generator body is gone once sent; bytes (and json/form, encoded to bytes) are not.
        and isinstance(request.stream, httpx2.ByteStream)
        and is_closed_connection(error)
    )


class ReplayOnClosedTransport(httpx2.BaseTransport):
    """Send again, once, an idempotent request whose connection the server closed."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
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


class AsyncReplayOnClosedTransport(httpx2.AsyncBaseTransport):
    """The async twin of ReplayOnClosedTransport."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
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
    limits = httpx2.Limits(**limit_values)
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
) -> httpx2.Client:
    """An `httpx2.Client` whose idle connections expire before the server closes them."""
    client_kwargs, transport_kwargs = _split(idle_expiry, pool_maxsize, ssl_context, options)
    transport: httpx2.BaseTransport = httpx2.HTTPTransport(**transport_kwargs)
    if retries:
        transport = ReplayOnClosedTransport(transport)
    return httpx2.Client(transport=transport, **client_kwargs)


def new_async_client(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` configured like `new_client`."""
    client_kwargs, transport_kwargs = _split(idle_expiry, pool_maxsize, ssl_context, options)
    transport: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport(**transport_kwargs)
    if retries:
        transport = AsyncReplayOnClosedTransport(transport)
    return httpx2.AsyncClient(transport=transport, **client_kwargs)
