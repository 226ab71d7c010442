"""What httpx and httpx2 sessions share: the options servertune owns and the pool limits.

httpx2 is httpx 0.28.1 renamed, with the same public API (its docs/migration.md), so both
client modules build the same `Limits` and transport from these values. Neither library is
imported here: each client module imports only its own.
"""

from __future__ import annotations

import ssl
from typing import Any

__all__ = ["MAX_CONNECTIONS", "TRANSPORT_OPTIONS", "LimitValues", "split_options"]

#: httpx's own cap on open connections (DEFAULT_LIMITS, the same in httpx2); servertune changes
#: only what it idles.
MAX_CONNECTIONS = 100

#: Options that configure the transport; servertune builds the transport, so it passes them on.
TRANSPORT_OPTIONS = ("verify", "cert", "trust_env", "http1", "http2")

#: The keyword arguments of `Limits(...)`, in either library.
LimitValues = dict[str, Any]


def split_options(
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    options: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], LimitValues]:
    """(client options, transport options, `Limits` values); refuse what would undo them."""
    for key in ("limits", "transport", "mounts"):
        if key in options:
            raise TypeError(f"{key}: set by servertune.http.session(); use its own parameters")
    if ssl_context is not None:
        if "verify" in options:
            raise TypeError("pass either ssl_context or verify, not both")
        if options.get("cert") is not None:
            # httpx loads a client certificate into the context it is given: the shared one.
            raise ValueError(
                "cert: would change the shared SSLContext; pass it without ssl_context="
            )
        if options.get("http2"):
            # httpcore writes the ALPN list into the context on every connection: an HTTP/2
            # client would make HTTP/1.1-only clients sharing the context offer h2 too.
            raise ValueError("ssl_context: the shared context is for HTTP/1.1 clients; drop http2")
        options = {**options, "verify": ssl_context}
    limits: LimitValues = {
        "max_connections": max(MAX_CONNECTIONS, pool_maxsize),
        "max_keepalive_connections": pool_maxsize,
        "keepalive_expiry": idle_expiry,
    }
    transport = {k: options[k] for k in TRANSPORT_OPTIONS if k in options}
    return options, transport, limits
