"""Known servers' keep-alive idle timeouts, each with its source, and the client expiry rule.

A server closes a keep-alive connection that has been idle for its idle timeout. A client that
reuses the connection at that moment sends its request into a closing socket and gets
`RemoteDisconnected` / `Connection reset by peer` (bench `idle-race`; requests#4664, #4506). The fix is a
client-side idle expiry shorter than the server's idle timeout: the client discards the pooled
connection before the server would.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_SERVER",
    "KNOWN_SERVERS",
    "MIN_SAFETY_MARGIN",
    "SAFETY_MARGIN_FRACTION",
    "KnownServer",
    "client_idle_expiry",
]


@dataclass(frozen=True)
class KnownServer:
    """A server's default keep-alive idle timeout, the setting that changes it, and the source."""

    name: str
    idle_timeout: float | None
    """Seconds an idle keep-alive connection stays open; None: no idle timeout by default."""
    setting: str
    source: str


KNOWN_SERVERS: dict[str, KnownServer] = {
    s.name: s
    for s in (
        KnownServer("gunicorn", 2.0, "keepalive",
                    "https://docs.gunicorn.org/en/stable/settings.html#keepalive"),
        KnownServer("uvicorn", 5.0, "--timeout-keep-alive",
                    "https://www.uvicorn.org/settings/#timeouts"),
        KnownServer("hypercorn", 5.0, "keep_alive_timeout",
                    "https://hypercorn.readthedocs.io/en/latest/how_to_guides/configuring.html"),
        KnownServer("apache", 5.0, "KeepAliveTimeout",
                    "https://httpd.apache.org/docs/2.4/mod/core.html#keepalivetimeout"),
        KnownServer("nodejs", 5.0, "server.keepAliveTimeout",
                    "https://nodejs.org/api/http.html#serverkeepalivetimeout"),
        KnownServer("nginx", 75.0, "keepalive_timeout",
                    "https://nginx.org/en/docs/http/ngx_http_core_module.html#keepalive_timeout"),
        KnownServer("waitress", 120.0, "channel_timeout",
                    "https://docs.pylonsproject.org/projects/waitress/en/latest/arguments.html"),
        KnownServer("traefik", 180.0, "respondingTimeouts.idleTimeout",
                    "https://doc.traefik.io/traefik/routing/entrypoints/#respondingtimeouts"),
        KnownServer("aws-alb", 60.0, "idle_timeout.timeout_seconds",
                    "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/application-load-balancers.html#connection-idle-timeout"),
        KnownServer("aws-clb", 60.0, "ConnectionSettings.IdleTimeout",
                    "https://docs.aws.amazon.com/elasticloadbalancing/latest/classic/config-idle-timeout.html"),
        KnownServer("aws-nlb", 350.0, "tcp.idle_timeout.seconds",
                    "https://docs.aws.amazon.com/elasticloadbalancing/latest/network/network-load-balancers.html#connection-idle-timeout"),
        KnownServer("gcp-lb", 610.0, "httpKeepAliveTimeoutSec",
                    "https://cloud.google.com/load-balancing/docs/https#http-keepalive-timeout"),
        KnownServer("azure-lb", 240.0, "idleTimeoutInMinutes",
                    "https://learn.microsoft.com/en-us/azure/load-balancer/load-balancer-tcp-idle-timeout"),
        # Go closes idle connections after IdleTimeout, else ReadTimeout; both are zero by
        # default, so a default net/http server keeps idle connections open.
        KnownServer("go", None, "http.Server.IdleTimeout",
                    "https://pkg.go.dev/net/http#Server"),
    )
}  # fmt: skip

#: With no server named, assume the shortest idle timeout among the known servers (gunicorn's 2 s),
#: so a session is safe in front of any of them; name the server to keep connections longer.
DEFAULT_SERVER = "gunicorn"

#: The client must give up a connection a little before the server does: the server's clock
#: starts when it sent the response, the client's when it read it, and the request still has to
#: travel. 10% of the timeout, at least 250 ms (more than a scheduler hiccup on a busy 2-core box;
#: bench idle-race measures zero errors with it at a 1 s server timeout), at most half of it.
SAFETY_MARGIN_FRACTION = 0.1
#: The idle timeouts a server may have: below a tenth of a second no pooled connection is ever
#: reused (1e-300 would make every one expire at once); above a day (AWS NLB's longest is
#: 6000 s) no server closes idle connections at all, and `inf` or `nan` are not timeouts.
MIN_IDLE_TIMEOUT = 0.1
MAX_IDLE_TIMEOUT = 86_400.0
MIN_SAFETY_MARGIN = 0.25


def client_idle_expiry(
    server: str | None = None, server_idle_timeout: float | None = None
) -> float:
    """Seconds a pooled connection may stay idle before the client must discard it.

    An explicit `server_idle_timeout` wins over `server`; with neither, `DEFAULT_SERVER`'s is
    used. A server without an idle timeout (Go's default) gets `DEFAULT_SERVER`'s too: proxies
    and NAT tables between client and server drop idle connections all the same.
    """
    if server_idle_timeout is None:
        if server is not None and server not in KNOWN_SERVERS:
            known = ", ".join(sorted(KNOWN_SERVERS))
            raise ValueError(f"server: must be one of {known}; got {server!r}")
        entry = KNOWN_SERVERS[server or DEFAULT_SERVER]
        server_idle_timeout = entry.idle_timeout
        if server_idle_timeout is None:
            server_idle_timeout = KNOWN_SERVERS[DEFAULT_SERVER].idle_timeout
            assert server_idle_timeout is not None
    if isinstance(server_idle_timeout, bool) or not isinstance(server_idle_timeout, int | float):
        raise TypeError(
            f"server_idle_timeout: must be a number of seconds; got {server_idle_timeout!r}"
        )
    if not MIN_IDLE_TIMEOUT <= server_idle_timeout <= MAX_IDLE_TIMEOUT:
        raise ValueError(
            f"server_idle_timeout: must be from {MIN_IDLE_TIMEOUT:g} to {MAX_IDLE_TIMEOUT:g} "
            f"seconds; got {server_idle_timeout!r}"
        )
    margin = min(
        server_idle_timeout / 2,
        max(MIN_SAFETY_MARGIN, server_idle_timeout * SAFETY_MARGIN_FRACTION),
    )
    return server_idle_timeout - margin
