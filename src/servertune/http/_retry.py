"""The retry policy: replay a request once when a reused connection was closed under it.

Only idempotent methods are replayed (RFC 9110 section 9.2.2): when the server drops the
connection without answering, the client cannot know whether a POST was processed, so a POST is
never sent twice. Other failures (connect errors, timeouts, bad responses) are not retried here:
they are not the idle race, and retrying them would hide real trouble or double the latency.
"""

from __future__ import annotations

import http.client

__all__ = [
    "CLOSED_CONNECTION_ERRORS",
    "IDEMPOTENT_METHODS",
    "REUSED_CONNECTION_RETRIES",
    "is_closed_connection",
    "is_replayable",
]

#: RFC 9110 9.2.2 idempotent methods; urllib3's Retry.DEFAULT_ALLOWED_METHODS is the same set.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})

#: One replay suffices: the replay goes out on a fresh connection (the pool discards the closed
#: one), and a fresh connection cannot lose the idle race. tests/test_http_retry.py pins it.
REUSED_CONNECTION_RETRIES = 1

#: What a socket closed by the peer looks like from the client side.
CLOSED_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    http.client.RemoteDisconnected,
    ConnectionResetError,
    ConnectionAbortedError,
    BrokenPipeError,
)


def is_replayable(method: str) -> bool:
    """Whether a request with this method may be sent again after a dropped connection."""
    return method.upper() in IDEMPOTENT_METHODS


def is_closed_connection(error: BaseException) -> bool:
    """Whether `error`, or anything it wraps, says the peer closed the connection.

    Client libraries wrap the socket error (urllib3 `ProtocolError(msg, RemoteDisconnected())`,
    httpx `ReadError` from httpcore from `ConnectionResetError`), so follow causes and args.
    """
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        exc = todo.pop()
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        if isinstance(exc, CLOSED_CONNECTION_ERRORS):
            return True
        # httpcore reports an orderly close before the response this way (h11 ConnectionClosed).
        if "disconnected without sending a response" in str(exc).lower():
            return True
        todo.extend(a for a in exc.args if isinstance(a, BaseException))
        todo.extend(e for e in (exc.__cause__, exc.__context__) if e is not None)
    return False
