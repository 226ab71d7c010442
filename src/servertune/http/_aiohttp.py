"""aiohttp sessions: the idle expiry, replay policy and limits of the other servertune sessions.

aiohttp already has the two mechanisms servertune adds to the sync clients, with the wrong
numbers or no switch:

- `TCPConnector(keepalive_timeout=...)` is a true idle expiry: a pooled connection released
  longer ago than that is closed on checkout (`BaseConnector._get`). Its default, 15 s, is longer
  than gunicorn's 2 s and uvicorn's 5 s, so servertune sets it from the server's idle timeout.
- `ClientSession` replays a request once after `ServerDisconnectedError` / `ClientOSError`, for
  RFC 9110 idempotent methods only, and never a body that was already consumed (aiohttp 3.10+,
  client.py). servertune keeps that policy, which is its own, and `retries=False` turns it off.

Connection limits: `pool_maxsize` is the most connections open to one host
(`limit_per_host`), and all of them are kept alive until the idle expiry; `limit` is
`max(MAX_CONNECTIONS, pool_maxsize)`, aiohttp's own total of 100 unless a host needs more.

A `TCPConnector` needs a running event loop, so call `async_session("aiohttp")` inside one.
"""

from __future__ import annotations

import ssl
from typing import Any

import aiohttp

__all__ = ["MAX_CONNECTIONS", "new_async_session"]

#: aiohttp's own cap on open connections (TCPConnector limit=100); raised only when one host
#: is allowed more.
MAX_CONNECTIONS = 100

#: Options that would replace what servertune configures on the connector.
_OWNED = ("connector", "connector_owner")
_CONNECTOR_OWNED = ("keepalive_timeout", "limit", "limit_per_host", "force_close")
#: Connector options a caller may still pass (everything else goes to ClientSession).
_CONNECTOR_OPTIONS = (
    "ttl_dns_cache",
    "use_dns_cache",
    "family",
    "local_addr",
    "happy_eyeballs_delay",
)


def _connector_kwargs(
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    options: dict[str, Any],
) -> dict[str, Any]:
    for key in (*_OWNED, *_CONNECTOR_OWNED):
        if key in options:
            raise TypeError(
                f"{key}: set by servertune.http.async_session(); use its own parameters"
            )
    kwargs: dict[str, Any] = {
        "keepalive_timeout": idle_expiry,
        "limit_per_host": pool_maxsize,
        "limit": max(MAX_CONNECTIONS, pool_maxsize),
    }
    kwargs.update({k: options.pop(k) for k in _CONNECTOR_OPTIONS if k in options})
    if "ssl" in options:
        if ssl_context is not None:
            raise TypeError("pass either ssl_context or ssl, not both")
        kwargs["ssl"] = options.pop("ssl")
    elif ssl_context is not None:
        # aiohttp reads the context on each handshake and never writes to it (no ALPN for h1).
        kwargs["ssl"] = ssl_context
    return kwargs


def new_async_session(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> aiohttp.ClientSession:
    """An `aiohttp.ClientSession` whose idle connections expire before the server closes them."""
    options = dict(options)
    connector = aiohttp.TCPConnector(
        **_connector_kwargs(idle_expiry, pool_maxsize, ssl_context, options)
    )
    try:
        session = aiohttp.ClientSession(connector=connector, **options)
    except BaseException:
        # The connector holds no socket yet, but aiohttp warns about an unclosed one.
        connector._close()
        raise
    if not retries:
        if not hasattr(session, "_retry_connection"):
            raise RuntimeError(
                f"retries=False: aiohttp {aiohttp.__version__} has no replay switch "
                "(servertune knows aiohttp 3.10+)"
            )
        # aiohttp's only switch for its replay; its own test client flips it the same way.
        session._retry_connection = False
    return session
