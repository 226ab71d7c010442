"""urllib3 (and urllib3-future) pieces: pools with an idle expiry, and the reuse-safe Retry.

urllib3 has no idle timeout (urllib3#2498; PR #3275 is open): before reusing a pooled connection
it only checks, with a zero-byte read, whether the peer already closed it. A server that closes
at the moment the request leaves passes that check (bench `idle-race`). These pools remember when each
connection went back to the pool and close it on checkout once it has been idle longer than the
expiry, so it is never reused; the request then goes out on a fresh connection.

requests uses these pools, and so does niquests' sync side through urllib3-future, which keeps
urllib3's `_get_conn` / `_put_conn` / `pool_classes_by_scheme` shape.
"""

from __future__ import annotations

import functools
import ssl
import time
from types import TracebackType
from typing import Any, Self, cast

import urllib3
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util.retry import Retry

from servertune.http._retry import (
    IDEMPOTENT_METHODS,
    REUSED_CONNECTION_RETRIES,
    is_closed_connection,
)

__all__ = [
    "ReusedConnectionRetry",
    "expiring_pool_classes",
    "pool_manager",
    "reused_connection_retry",
]

_IDLE_SINCE = "_servertune_idle_since"

#: PoolManager options that urllib3 applies to the SSLContext it is handed (ssl_.ssl_wrap_socket,
#: HTTPSConnection.connect): with a shared context they would leak into every other session.
CONTEXT_CHANGING_OPTIONS = frozenset(
    {
        "assert_hostname", "assert_fingerprint", "ca_certs", "ca_cert_dir", "ca_cert_data",
        "cert_file", "key_file", "key_password", "server_hostname",
    }
)  # fmt: skip

#: urllib3's own default follows at most 3 redirects (Retry.DEFAULT = Retry(3)); keep that.
URLLIB3_REDIRECTS = 3


def idle_for(conn: object, now: float) -> float | None:
    """Seconds `conn` has been idle in the pool, or None for a connection never returned."""
    since: float | None = getattr(conn, _IDLE_SINCE, None)
    if since is None:
        return None
    # urllib3-future also stamps the last time it spoke with the peer; trust the later one.
    last_used: float = getattr(conn, "last_used_at", since)
    return now - max(since, last_used)


class _IdleExpiryPool:
    """Mixin for a connection pool: never hand out a connection idle longer than `idle_expiry`."""

    idle_expiry: float = float("inf")

    def _get_conn(self, *args: Any, **kwargs: Any) -> Any:
        conn = super()._get_conn(*args, **kwargs)  # type: ignore[misc]
        idle = idle_for(conn, time.monotonic())
        if idle is not None and idle > self.idle_expiry:
            # The server may close it any moment now (or just did): reconnect instead. urllib3
            # reopens a closed connection on use, exactly as it does after its dropped check.
            conn.close()
        return conn

    def _put_conn(self, conn: Any) -> None:
        if conn is not None:
            setattr(conn, _IDLE_SINCE, time.monotonic())
        super()._put_conn(conn)  # type: ignore[misc]


@functools.cache
def expiring_pool_classes(idle_expiry: float) -> dict[str, type[HTTPConnectionPool]]:
    """`pool_classes_by_scheme` for a PoolManager whose pools expire idle connections."""
    attrs = {"idle_expiry": idle_expiry, "__module__": __name__}
    return {
        "http": cast(
            "type[HTTPConnectionPool]",
            type("IdleExpiryHTTPConnectionPool", (_IdleExpiryPool, HTTPConnectionPool), attrs),
        ),
        "https": cast(
            "type[HTTPConnectionPool]",
            type("IdleExpiryHTTPSConnectionPool", (_IdleExpiryPool, HTTPSConnectionPool), attrs),
        ),
    }


class ReusedConnectionRetry(Retry):
    """Retry once when the peer closed the connection, for idempotent methods only.

    A read timeout is a read error to urllib3 too, but not the idle race: it is raised at once,
    as with requests' default `Retry(0, read=False)`, instead of doubling a slow call.
    """

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        if error is not None and self._is_read_error(error) and not is_closed_connection(error):
            raise error.with_traceback(_stacktrace)
        return super().increment(method, url, response, error, _pool, _stacktrace)


def reused_connection_retry() -> ReusedConnectionRetry:
    """The Retry every servertune urllib3-based session uses."""
    return ReusedConnectionRetry(
        total=None,
        connect=0,
        read=REUSED_CONNECTION_RETRIES,
        status=0,
        other=0,
        redirect=URLLIB3_REDIRECTS,
        allowed_methods=IDEMPOTENT_METHODS,
        backoff_factor=0,
        raise_on_status=False,
    )


def _pool_manager_options() -> set[str]:
    """The keywords PoolManager takes itself or passes on to its pools and their connections."""
    import inspect

    from urllib3.connection import HTTPSConnection
    from urllib3.connectionpool import HTTPSConnectionPool

    names: set[str] = set()
    for func in (
        urllib3.PoolManager.__init__,
        HTTPSConnectionPool.__init__,
        HTTPSConnection.__init__,
    ):
        for name, param in inspect.signature(func).parameters.items():
            if param.kind is param.KEYWORD_ONLY or param.kind is param.POSITIONAL_OR_KEYWORD:
                names.add(name)
    return names - {"self", "host", "port", "connection_pool_kw", "conn_kw"}


def pool_manager(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> urllib3.PoolManager:
    """A urllib3 PoolManager with the idle expiry, pool size, retry policy and TLS context."""
    for key in ("maxsize", "retries", "ssl_context", "cert_reqs"):
        if key in options:
            raise TypeError(f"{key}: set by servertune.http.session(); use its own parameters")
    unknown = sorted(options.keys() - _pool_manager_options())
    if unknown:
        # PoolManager takes **connection_pool_kw and hands it on to each pool and connection:
        # a misspelt keyword would fail only at the first request, inside urllib3.
        raise TypeError(
            f"{unknown[0]}: not an option of the urllib3 client (PoolManager, its pools or connections)"
        )
    kwargs: dict[str, Any] = {"maxsize": pool_maxsize}
    # retries=False: every request is sent once (urllib3's own default would retry 3 times).
    kwargs["retries"] = (
        reused_connection_retry()
        if retries
        else Retry(total=None, connect=0, read=False, status=0, other=0, redirect=URLLIB3_REDIRECTS)
    )
    if ssl_context is not None:
        changing = sorted(CONTEXT_CHANGING_OPTIONS & options.keys())
        if changing:
            # urllib3 applies these to the context it is given, which is shared: one session's
            # assert_hostname=False or extra CA would silently weaken every other session.
            raise ValueError(
                f"{', '.join(changing)}: would change the shared SSLContext; pass them without "
                "ssl_context= so this pool builds a context of its own"
            )
        # urllib3 assigns verify_mode from cert_reqs on the context it is given, on every
        # connection: keep that assignment a no-op so the shared context stays verified.
        kwargs.update(ssl_context=ssl_context, cert_reqs="CERT_REQUIRED")
    manager = urllib3.PoolManager(**options, **kwargs)
    manager.pool_classes_by_scheme = expiring_pool_classes(idle_expiry)
    return manager
