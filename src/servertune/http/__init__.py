"""Idle-timeout-safe, pooled, retry-correct HTTP sessions for requests, niquests, httpx, httpx2,
urllib3 and (async only) aiohttp.

    from servertune.http import session
    api = session("requests", server="gunicorn")   # a plain requests.Session, configured
    api.get("https://api.internal/items")

Each factory returns the client library's own object. Importing this package imports none of
the clients: each lives in a private module imported on first use, and a missing one raises an
ImportError that names the extra to install.

What a session gets (measured by `servertune bench idle-race` and `ssl-context`):

- an idle expiry shorter than the server's keep-alive idle timeout (`KNOWN_SERVERS`, or
  `server_idle_timeout=`), so a pooled connection is discarded before the server closes it;
- `pool_maxsize=1` by default, urllib3's own default, instead of requests' and niquests' 10;
- one replay of a request whose reused connection was closed, for idempotent methods only;
- optionally, the shared verified `ssl_context()`.

Async sessions (`async_session`) keep as many connections per host alive as
`DEFAULT_ASYNC_POOL_MAXSIZE` says for their client (aiohttp, httpx2 and niquests 100, httpx 1):
an event loop sends many requests over one session at once, and `servertune bench async-clients`
measures both values for each. With no client named, `async_session()` uses the first installed
of `RECOMMENDED_ASYNC_CLIENTS`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import re
import ssl
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, Protocol, cast, overload

from servertune.http._retry import IDEMPOTENT_METHODS
from servertune.http._servers import (
    DEFAULT_SERVER,
    KNOWN_SERVERS,
    KnownServer,
    client_idle_expiry,
)
from servertune.http._ssl import ssl_context

if TYPE_CHECKING:
    import aiohttp
    import httpx
    import httpx2
    import niquests
    import requests
    import urllib3

__all__ = [
    "ASYNC_CLIENTS",
    "CLIENTS",
    "DEFAULT_ASYNC_POOL_MAXSIZE",
    "DEFAULT_POOL_MAXSIZE",
    "DEFAULT_SERVER",
    "IDEMPOTENT_METHODS",
    "KNOWN_SERVERS",
    "RECOMMENDED_ASYNC_CLIENTS",
    "KnownServer",
    "async_session",
    "client_idle_expiry",
    "recommended_async_client",
    "session",
    "ssl_context",
]

Client = Literal["requests", "niquests", "httpx", "httpx2", "urllib3"]
AsyncClient = Literal["aiohttp", "httpx", "httpx2", "niquests"]

#: The client libraries `session()` configures, with the extra that installs each.
CLIENTS: dict[str, str] = {
    "requests": "requests",
    "niquests": "niquests",
    "httpx": "httpx",
    "httpx2": "httpx2",
    "urllib3": "urllib3",
}

#: The client libraries `async_session()` configures, with the extra that installs each.
ASYNC_CLIENTS: dict[str, str] = {
    "aiohttp": "aiohttp",
    "httpx": "httpx",
    "httpx2": "httpx2",
    "niquests": "niquests",
}

#: `async_session()` with no client name takes the first of these that is installed.
#: aiohttp first: `servertune bench async-clients` measured it at 4.6-5.2x the req/s of httpx's
#: AsyncClient with one task and 8-21x from 10 concurrent tasks up, at a tenth of the CPU per
#: request, with no errors where httpx timed out at 500 (httpcore's pool: encode/httpcore#922,
#: #953, reverted in #1002). httpx2 next: its reworked pool (httpcore2 2.3.0, 2.8.0) served 2.2x
#: httpx's session at 100 concurrent tasks, 2.5-4.9x over TLS, and 1460 req/s with no errors at
#: 500 where httpx's session failed 300 requests (httpx2 2.16.2, 3 repeats). httpx after it;
#: niquests last, since it replaces urllib3 for its whole environment.
RECOMMENDED_ASYNC_CLIENTS: tuple[str, ...] = ("aiohttp", "httpx2", "httpx", "niquests")

#: One pooled connection per host: urllib3's own default. requests and niquests raise it to 10,
#: and with pool_block=False the extra connections only sit idle, the ones that meet the idle
#: race (bench `idle-race`). Raise it for a client that calls one host from many threads at once.
DEFAULT_POOL_MAXSIZE = 1

#: `pool_maxsize` per async client when none is given, each measured against the other value
#: by `servertune bench async-clients` (100 concurrent GETs, 2 cores): aiohttp keeps up to 100
#: connections per host alive (its own cap), since one session serves every task of a loop and
#: closing the others after each request means reconnecting. httpx keeps the sync sessions' 1:
#: with 100 idle connections its pool gets slower with every one it holds (31 req/s against
#: 439 with 1, httpcore 1.0.9). niquests keeps 100, as aiohttp. httpx2 keeps 100 as well: its
#: pool no longer slows down with the connections it holds (1664 req/s at 100 tasks with 100
#: kept, against httpx's 61.5), and 1 and 100 came out with no clear difference (the repeats
#: overlap at every point, httpx2 2.16.2), so it keeps what saves a reconnect, as aiohttp does.
DEFAULT_ASYNC_POOL_MAXSIZE: dict[str, int] = {
    "aiohttp": 100,
    "httpx": 1,
    "httpx2": 100,
    "niquests": 100,
}


def _import(client: str, module: str, factory: str = "session") -> Any:
    """Import the private module for `client`, or say which extra installs the library."""
    try:
        return importlib.import_module(f"servertune.http.{module}")
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] in {client, "urllib3"}:
            extra = {**CLIENTS, **ASYNC_CLIENTS}[client]
            raise ImportError(
                f"servertune.http.{factory}({client!r}) needs {client}: "
                f"pip install 'servertune[{extra}]'"
            ) from exc
        raise


def recommended_async_client() -> str:
    """The first of `RECOMMENDED_ASYNC_CLIENTS` installed here; ImportError if none is."""
    for client in RECOMMENDED_ASYNC_CLIENTS:
        if importlib.util.find_spec(client) is not None:
            return client
    raise ImportError(
        "servertune.http.async_session() needs an async HTTP client: "
        "pip install 'servertune[aiohttp]'"
    )


#: The options `session()` and `async_session()` take, declared once: by their own signatures.
#: The protocols below add only what each client name returns, so no option is repeated.
_Options = ParamSpec("_Options")


class _Factory(Protocol[_Options]):
    """A session factory: a client name, then its options."""

    def __call__(self, client: Any, *args: _Options.args, **kwargs: _Options.kwargs) -> Any: ...


class _Sessions(Protocol[_Options]):
    """`session()` as type checkers see it: each client name returns its library's session."""

    @overload
    def __call__(
        self, client: Literal["requests"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> requests.Session: ...
    @overload
    def __call__(
        self, client: Literal["httpx"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> httpx.Client: ...
    @overload
    def __call__(
        self, client: Literal["httpx2"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> httpx2.Client: ...
    @overload
    def __call__(
        self, client: Literal["urllib3"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> urllib3.PoolManager: ...
    @overload
    def __call__(
        self, client: Literal["niquests"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> niquests.Session: ...


class _AsyncSessions(Protocol[_Options]):
    """`async_session()` as type checkers see it (no client name: the recommended one)."""

    @overload
    def __call__(
        self, client: Literal["aiohttp"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> aiohttp.ClientSession: ...
    @overload
    def __call__(
        self, client: Literal["httpx"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> httpx.AsyncClient: ...
    @overload
    def __call__(
        self, client: Literal["httpx2"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> httpx2.AsyncClient: ...
    @overload
    def __call__(
        self, client: Literal["niquests"], *args: _Options.args, **kwargs: _Options.kwargs
    ) -> niquests.AsyncSession: ...
    @overload
    def __call__(
        self, client: None = ..., *args: _Options.args, **kwargs: _Options.kwargs
    ) -> Any: ...


def _by_client(factory: _Factory[_Options]) -> _Sessions[_Options]:
    """`factory` itself, typed with its return type by client name (nothing changes at run time)."""
    return cast("_Sessions[_Options]", factory)


def _by_async_client(factory: _Factory[_Options]) -> _AsyncSessions[_Options]:
    """`factory` itself, typed with its return type by client name (nothing changes at run time)."""
    return cast("_AsyncSessions[_Options]", factory)


#: More connections per host than any client pool needs: a typo (1e9) would be a memory bomb.
MAX_POOL_MAXSIZE = 10_000


def _common(
    client: str,
    server: str | None,
    server_idle_timeout: float | None,
    pool_maxsize: int,
    ssl_ctx: ssl.SSLContext | None,
    retries: bool,
) -> tuple[float, ssl.SSLContext | None]:
    if client not in CLIENTS and client not in ASYNC_CLIENTS:
        raise ValueError(f"client: must be one of {', '.join(CLIENTS)}; got {client!r}")
    # The public API's misuse is servertune's own TypeError/ValueError naming the argument, not
    # an AttributeError or TypeError from deep inside a client library.
    if server is not None and not isinstance(server, str):
        raise TypeError(f"server: must be a server name (str); got {server!r}")
    if isinstance(pool_maxsize, bool) or not isinstance(pool_maxsize, int):
        raise TypeError(f"pool_maxsize: must be an int; got {pool_maxsize!r}")
    if not 1 <= pool_maxsize <= MAX_POOL_MAXSIZE:
        raise ValueError(
            f"pool_maxsize: must be from 1 to {MAX_POOL_MAXSIZE}; got {pool_maxsize!r}"
        )
    if not isinstance(retries, bool):
        raise TypeError(f"retries: must be True or False; got {retries!r}")
    if ssl_ctx is not None and not isinstance(ssl_ctx, ssl.SSLContext):
        raise TypeError(
            f"ssl_context: must be an ssl.SSLContext (servertune.http.ssl_context()); got {ssl_ctx!r}"
        )
    if ssl_ctx is not None:
        from servertune.http._ssl import require_verified

        require_verified(ssl_ctx)
    return client_idle_expiry(server, server_idle_timeout), ssl_ctx


#: How CPython words a keyword a callable does not take (3.12-3.14).
_UNEXPECTED_KEYWORD = re.compile(r"unexpected keyword argument '(?P<name>[A-Za-z_][A-Za-z0-9_]*)'")


@contextlib.contextmanager
def _unknown_options_named(client: str, options: dict[str, Any]) -> Iterator[None]:
    """A keyword the client's constructor does not take: servertune's TypeError naming it.

    The extra `options` go on to the library's constructor (several, for some clients: the
    adapter, the transport, the pool); which one rejects a name is the library's business, so
    the library's own refusal is re-worded here, only when it names one of the caller's options.
    """
    try:
        yield
    except TypeError as error:
        match = _UNEXPECTED_KEYWORD.search(str(error))
        if match is None or match["name"] not in options:
            raise
        raise TypeError(
            f"{match['name']}: not an option of the {client} client (servertune.http passes "
            "extra keywords to its constructor)"
        ) from None


@_by_client
def session(
    client: Client,
    *,
    server: str | None = None,
    server_idle_timeout: float | None = None,
    pool_maxsize: int = DEFAULT_POOL_MAXSIZE,
    ssl_context: ssl.SSLContext | None = None,
    retries: bool = True,
    **options: Any,
) -> Any:
    """The client library's own session object, safe against the server's keep-alive idle close.

    `server` names one of `KNOWN_SERVERS` (the server or load balancer directly in front of the
    API you call); `server_idle_timeout` (seconds) wins over it; with neither, the shortest
    known timeout is assumed. `ssl_context` opts in to a shared verified context, normally
    `servertune.http.ssl_context()`. `retries=False` turns the replay-once policy off. Other
    keyword `options` go to the library's constructor (`httpx.Client`, `httpx2.Client`,
    `niquests.Session`, `urllib3.PoolManager`, requests' `HTTPAdapter`).
    """
    if client in ASYNC_CLIENTS and client not in CLIENTS:
        raise ValueError(f"client: {client} is async only; use async_session({client!r})")
    expiry, ctx = _common(client, server, server_idle_timeout, pool_maxsize, ssl_context, retries)
    kwargs: dict[str, Any] = {
        "idle_expiry": expiry, "pool_maxsize": pool_maxsize, "ssl_context": ctx,
        "retries": retries, **options,
    }  # fmt: skip
    with _unknown_options_named(client, options):
        if client == "requests":
            return _import(client, "_requests").new_session(**kwargs)
        if client == "httpx":
            return _import(client, "_httpx").new_client(**kwargs)
        if client == "httpx2":
            return _import(client, "_httpx2").new_client(**kwargs)
        if client == "urllib3":
            return _import(client, "_urllib3").pool_manager(**kwargs)
        return _import(client, "_niquests").new_session(**kwargs)


@_by_async_client
def async_session(
    client: AsyncClient | None = None,
    *,
    server: str | None = None,
    server_idle_timeout: float | None = None,
    pool_maxsize: int | None = None,
    ssl_context: ssl.SSLContext | None = None,
    retries: bool = True,
    **options: Any,
) -> Any:
    """`session()` for the async clients: `aiohttp.ClientSession`, `httpx.AsyncClient`,
    `httpx2.AsyncClient` or `niquests.AsyncSession`; with no `client`, the first installed of
    RECOMMENDED_ASYNC_CLIENTS.

    `pool_maxsize`: connections kept per host; default DEFAULT_ASYNC_POOL_MAXSIZE[client].
    aiohttp's session must be made inside a running event loop.
    """
    if client is None:
        client = recommended_async_client()  # type: ignore[assignment]
    if client not in ASYNC_CLIENTS:
        raise ValueError(
            f"client: async sessions exist for {', '.join(ASYNC_CLIENTS)}; got {client!r}"
        )
    if pool_maxsize is None:
        pool_maxsize = DEFAULT_ASYNC_POOL_MAXSIZE[client]
    expiry, ctx = _common(client, server, server_idle_timeout, pool_maxsize, ssl_context, retries)
    kwargs: dict[str, Any] = {
        "idle_expiry": expiry, "pool_maxsize": pool_maxsize, "ssl_context": ctx,
        "retries": retries, **options,
    }  # fmt: skip
    with _unknown_options_named(client, options):
        if client == "aiohttp":
            return _import(client, "_aiohttp", "async_session").new_async_session(**kwargs)
        if client == "httpx":
            return _import(client, "_httpx", "async_session").new_async_client(**kwargs)
        if client == "httpx2":
            return _import(client, "_httpx2", "async_session").new_async_client(**kwargs)
        return _import(client, "_niquests", "async_session").new_async_session(**kwargs)
