"""niquests sessions: a true idle expiry on urllib3-future's pools, sync and async.

niquests' `keepalive_delay` (default 600 s) is a maximum connection AGE counted from connect
(urllib3-future connection.py), not an idle timeout: setting it below the server's idle timeout
avoids the race only by ending reuse altogether. servertune leaves it alone and adds the same
idle expiry as for urllib3, through the pool classes niquests' PoolManagers build.

urllib3-future replaces `urllib3` for the whole environment it is installed in (a .pth file), so
this module only ever runs where `import urllib3` is urllib3-future: keep niquests in its own venv.
"""

from __future__ import annotations

import functools
import inspect
import ssl
import time
from typing import Any

import niquests
from urllib3._async.connectionpool import AsyncHTTPConnectionPool, AsyncHTTPSConnectionPool

from servertune.http._urllib3 import (
    _IDLE_SINCE,
    expiring_pool_classes,
    idle_for,
    reused_connection_retry,
)

__all__ = ["new_async_session", "new_session"]


class _AsyncIdleExpiryPool:
    """Async twin of servertune.http._urllib3._IdleExpiryPool."""

    idle_expiry: float = float("inf")

    async def _get_conn(self, *args: Any, **kwargs: Any) -> Any:
        conn = await super()._get_conn(*args, **kwargs)  # type: ignore[misc]
        idle = idle_for(conn, time.monotonic())
        if idle is not None and idle > self.idle_expiry:
            closing = conn.close()
            if inspect.isawaitable(closing):
                await closing
        return conn

    async def _put_conn(self, conn: Any) -> None:
        if conn is not None:
            setattr(conn, _IDLE_SINCE, time.monotonic())
        await super()._put_conn(conn)  # type: ignore[misc]


@functools.cache
def _async_pool_classes(idle_expiry: float) -> dict[str, type[Any]]:
    attrs = {"idle_expiry": idle_expiry, "__module__": __name__}
    return {
        "http": type("AsyncIdleExpiryHTTPConnectionPool",
                     (_AsyncIdleExpiryPool, AsyncHTTPConnectionPool), attrs),
        "https": type("AsyncIdleExpiryHTTPSConnectionPool",
                      (_AsyncIdleExpiryPool, AsyncHTTPSConnectionPool), attrs),
    }  # fmt: skip


def _check(ssl_context: ssl.SSLContext | None, options: dict[str, Any]) -> None:
    for key in ("pool_maxsize", "retries"):
        if key in options:
            raise TypeError(f"{key}: set by servertune.http.session(); use its own parameters")
    if ssl_context is not None:
        # niquests takes no SSLContext; urllib3-future already keeps one per process.
        raise TypeError(
            "ssl_context: niquests takes no SSLContext; urllib3-future already reuses one "
            "verified context per process"
        )


def _install(session: Any, classes: dict[str, type[Any]]) -> None:
    for adapter in session.adapters.values():
        manager = getattr(adapter, "poolmanager", None)
        if manager is not None and hasattr(manager, "pool_classes_by_scheme"):
            manager.pool_classes_by_scheme = classes


def new_session(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> niquests.Session:
    """A `niquests.Session` whose pools discard connections idle longer than `idle_expiry`."""
    _check(ssl_context, options)
    session = niquests.Session(
        pool_maxsize=pool_maxsize, retries=reused_connection_retry() if retries else 0, **options
    )
    _install(session, dict(expiring_pool_classes(idle_expiry)))
    return session


def new_async_session(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> niquests.AsyncSession:
    """A `niquests.AsyncSession` configured like `new_session`."""
    _check(ssl_context, options)
    session = niquests.AsyncSession(
        pool_maxsize=pool_maxsize, retries=reused_connection_retry() if retries else 0, **options
    )
    _install(session, _async_pool_classes(idle_expiry))
    return session
