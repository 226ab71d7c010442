"""requests sessions: one HTTPAdapter with idle expiry, pool size, retry policy and TLS context.

requests keeps urllib3's lack of an idle timeout and raises urllib3's default pool size from 1
to 10 (HTTPAdapter pool_maxsize), which leaves more connections idle for longer (bench `idle-race`).
"""

from __future__ import annotations

import ssl
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from servertune.http._urllib3 import expiring_pool_classes, reused_connection_retry

__all__ = ["new_session"]


class ServertuneAdapter(HTTPAdapter):
    """HTTPAdapter whose pools expire idle connections and which can use a shared TLS context."""

    # Pickled with the adapter; a shared SSLContext cannot be pickled and is left out.
    __attrs__ = [*HTTPAdapter.__attrs__, "idle_expiry"]  # noqa: RUF012 (requests types it so)

    def __init__(
        self, *, idle_expiry: float, shared_ssl_context: ssl.SSLContext | None, **kwargs: Any
    ) -> None:
        # Set before HTTPAdapter.__init__, which calls init_poolmanager.
        self.idle_expiry = idle_expiry
        self.shared_ssl_context = shared_ssl_context
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """Build requests' PoolManager, then give it the idle-expiring pool classes."""
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = expiring_pool_classes(self.idle_expiry)

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: bool | str, cert: Any = None
    ) -> Any:  # requests' stubs type this with private TypedDicts
        """Use the shared context only for requests that verify with the default bundle.

        A `verify=False` or custom-CA request gets a pool of its own without it, so nothing
        ever writes CERT_NONE or another bundle into a context other sessions use.
        """
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        shared = getattr(self, "shared_ssl_context", None)
        if shared is not None and verify is True and cert is None:
            pool_kwargs["ssl_context"] = shared
        return host_params, pool_kwargs

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        """As requests does, except never reload the CA bundle into the shared context."""
        super().cert_verify(conn, url, verify, cert)  # type: ignore[no-untyped-call]
        shared = getattr(self, "shared_ssl_context", None)
        if shared is not None and getattr(conn, "conn_kw", {}).get("ssl_context") is shared:
            # requests points every verifying pool at certifi's file, and urllib3 would then
            # load it into the context on each new connection: the cost sharing saves.
            conn.ca_certs = None
            conn.ca_cert_dir = None


def new_session(
    *,
    idle_expiry: float,
    pool_maxsize: int,
    ssl_context: ssl.SSLContext | None,
    retries: bool,
    **options: Any,
) -> requests.Session:
    """A `requests.Session` with the servertune adapter mounted for http:// and https://."""
    for key in ("pool_maxsize", "max_retries"):
        if key in options:
            raise TypeError(f"{key}: set by servertune.http.session(); use its own parameters")
    adapter = ServertuneAdapter(
        idle_expiry=idle_expiry,
        shared_ssl_context=ssl_context,
        pool_maxsize=pool_maxsize,
        max_retries=reused_connection_retry() if retries else 0,
        **options,
    )
    session = requests.Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
