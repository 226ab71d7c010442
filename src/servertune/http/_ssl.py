"""One verified SSLContext to share across sessions, on request only.

Building a context loads the whole CA bundle: ~16 ms on the benchmark machine (bench
ssl-context; httpx#2298, #3627; cpython#95031), paid by every `httpx.Client()` and by every new
TLS connection of requests and urllib3. Sharing one is a large saving, and a known hazard:
requests 2.32.0 shared one implicitly and 2.32.5 reverted it after a `verify=False` session
leaked into it (GHSA-9wx4-h78v-vm56). So servertune shares only when asked, only a context that
verifies certificates and host names, and refuses one whose verification was turned off.
"""

from __future__ import annotations

import ssl
import threading

__all__ = ["require_verified", "ssl_context"]

_lock = threading.Lock()
_shared: ssl.SSLContext | None = None


def _new_verified_context() -> ssl.SSLContext:
    """A default client context with the CA bundle the clients themselves use."""
    try:
        import certifi  # requests and httpx verify against certifi's bundle by default
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def require_verified(context: ssl.SSLContext, what: str = "ssl_context") -> ssl.SSLContext:
    """Return `context` if it verifies certificates and host names, else raise ValueError."""
    if context.verify_mode != ssl.CERT_REQUIRED or not context.check_hostname:
        raise ValueError(
            f"{what}: a context with verification turned off is never shared; "
            "configure verify=False on that one client instead"
        )
    return context


def ssl_context() -> ssl.SSLContext:
    """The process-wide verified client context, built on first use.

    Pass it explicitly: `session("httpx", ssl_context=ssl_context())`. It is checked on every
    call, so a context someone weakened in place is reported instead of handed out again.
    """
    global _shared
    with _lock:
        if _shared is None:
            _shared = _new_verified_context()
        return require_verified(_shared, "servertune.http.ssl_context()")
