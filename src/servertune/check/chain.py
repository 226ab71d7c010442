"""Which files belong together: a load balancer's servers -> the nginx (or app server) listening
there; nginx `*_pass` -> upstream servers -> the app server listening there.

Addresses are compared as the kernel would route them: `localhost` is 127.0.0.1, a server
bound to 0.0.0.0 / [::] (or uWSGI's `:PORT`) answers on every address of its port, and a unix
socket is its path.
"""

from __future__ import annotations

from dataclasses import dataclass

from servertune.check.model import (
    AppServer,
    Balancer,
    NginxConfig,
    PassTarget,
    Setting,
    Upstream,
)

__all__ = ["BalancerLink", "Link", "link", "link_balancers", "normalise"]

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


@dataclass(frozen=True)
class BalancerLink:
    """A load balancer sends to one of its servers, and nginx (or an app server) listens there."""

    balancer: Balancer
    server: Setting[str]
    nginx: NginxConfig | None = None
    app: AppServer | None = None


def link_balancers(
    balancers: list[Balancer], nginx_configs: list[NginxConfig], apps: list[AppServer]
) -> list[BalancerLink]:
    """Every (balancer, server, nginx or app server) whose addresses meet; nginx first: an
    address nginx listens on is nginx's even when an app server there would also match."""
    links: list[BalancerLink] = []
    for balancer in balancers:
        for server in balancer.servers:
            fronted = [
                n for n in nginx_configs if any(_serves(a.value, server.value) for a in n.listens)
            ]
            links.extend(BalancerLink(balancer, server, nginx=n) for n in fronted)
            if fronted:
                continue
            for app in apps:
                if any(_serves(s.value, server.value) for s in app.sockets):
                    links.append(BalancerLink(balancer, server, app=app))
    return links
