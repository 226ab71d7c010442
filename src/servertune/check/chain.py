"""Which files belong together: nginx `*_pass` -> upstream servers -> the app server listening there.

Addresses are compared as the kernel would route them: `localhost` is 127.0.0.1, a server
bound to 0.0.0.0 / [::] (or uWSGI's `:PORT`) answers on every address of its port, and a unix
socket is its path.
"""

from __future__ import annotations

from dataclasses import dataclass

from servertune.check.model import AppServer, NginxConfig, PassTarget, Setting, Upstream

__all__ = ["Link", "link", "normalise"]

_WILDCARDS = ("0.0.0.0", "[::]", "*", "")


@dataclass(frozen=True)
class Link:
    """nginx passes to an app server: through an upstream block (or directly), at one socket."""

    nginx: NginxConfig
    passing: PassTarget
    upstream: Upstream | None
    server: Setting[str]
    app: AppServer


def normalise(address: str) -> tuple[str, str]:
    """(host, port) for TCP, ("unix", path) for a unix socket."""
    address = address.strip()
    for scheme in ("http://", "uwsgi://", "https://"):
        address = address.removeprefix(scheme)
    if address.startswith("unix:"):
        # nginx's docs write `unix:/path`; tutorials often `unix:///path`: the same file.
        return ("unix", "/" + address[5:].lstrip("/"))
    if address.startswith("/"):
        return ("unix", address)
    host, _, port = address.rpartition(":")
    if not host:  # nginx `server app:80` is written with a port; a bare name means port 80
        host, port = address, "80"
    host = "127.0.0.1" if host in ("localhost", "[::1]", "::1") else host
    return (host, port)


def _serves(app_socket: str, target: str) -> bool:
    app_host, app_port = normalise(app_socket)
    host, port = normalise(target)
    if app_host == "unix" or host == "unix":
        return app_host == host and app_port == port
    return app_port == port and (app_host in _WILDCARDS or app_host == host)


def link(nginx_configs: list[NginxConfig], apps: list[AppServer]) -> list[Link]:
    """Every (nginx pass, upstream server, app server) triple whose addresses meet."""
    links: list[Link] = []
    for config in nginx_configs:
        for passing in config.passes:
            upstream = config.upstreams.get(passing.target)
            servers = upstream.servers if upstream else (Setting(passing.target, passing.at),)
            for server in servers:
                for app in apps:
                    if any(_serves(s.value, server.value) for s in app.sockets):
                        links.append(Link(config, passing, upstream, server, app))
    return links
