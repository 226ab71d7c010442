"""Which files belong together: a load balancer's servers -> the nginx (or app server) listening
there; nginx `*_pass` -> upstream servers -> the app server listening there.

Addresses are compared as the kernel would route them: `localhost` is 127.0.0.1, a server
bound to 0.0.0.0 / [::] (or uWSGI's `:PORT`) answers on every address of its port, and a unix
socket is its path.
"""

from __future__ import annotations

import re
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


_IPV4 = re.compile(r"\A[0-9]+(\.[0-9]+){3}\Z")


def _host_name(target: str) -> str | None:
    """The host name a target names (`web` of `web:8000`, a compose service or a Kubernetes
    Service), None for an address (an IP, localhost, a unix socket, a wildcard)."""
    host, port = normalise(target)
    if host == "unix" or host in _WILDCARDS or host == "127.0.0.1" or not port.isdigit():
        return None
    if _IPV4.match(host) or host.startswith("["):
        return None
    return host


def _by_name(target: str, apps: list[AppServer]) -> list[AppServer]:
    """The app servers a host name at a port reaches: another container's (or pod's) name
    resolves to that container's address, never to the nginx's own loopback, so what the
    app's bind line says about its host is not what decides; its port is. One whose
    container has that name is it; otherwise every app on the port."""
    name = _host_name(target)
    if name is None:
        return []
    _, port = normalise(target)
    on_port = [
        a
        for a in apps
        if any(normalise(s.value)[0] != "unix" and normalise(s.value)[1] == port for s in a.sockets)
    ]
    named = [a for a in on_port if a.container is not None and a.container.name == name]
    return named or on_port


def link(nginx_configs: list[NginxConfig], apps: list[AppServer]) -> list[Link]:
    """Every (nginx pass, upstream server, app server) triple whose addresses meet: the same
    address as the kernel routes it, or a host name (another container's) at the app's port."""
    links: list[Link] = []
    for config in nginx_configs:
        for passing in config.passes:
            upstream = config.upstreams.get(passing.target)
            servers = upstream.servers if upstream else (Setting(passing.target, passing.at),)
            for server in servers:
                # uwsgi_pass speaks the uwsgi protocol: only uWSGI answers it (a gunicorn on
                # the same address is another deployment's, as in `gen all`'s alternatives).
                speaking = [a for a in apps if passing.protocol != "uwsgi" or a.kind == "uwsgi"]
                reached = [
                    app
                    for app in speaking
                    if any(_serves(s.value, server.value) for s in app.sockets)
                ]
                for app in reached or _by_name(server.value, speaking):
                    links.append(Link(config, passing, upstream, server, app))
    return links


@dataclass(frozen=True)
class BalancerLink:
    """A load balancer sends to one of its servers, and nginx (or an app server) listens there."""

    balancer: Balancer
    server: Setting[str]
    nginx: NginxConfig | None = None
    app: AppServer | None = None
    #: The server line's `maxconn` (None: no limit of its own).
    maxconn: Setting[int] | None = None
    #: The server line's `pool-max-conn` (None: unbounded).
    pool: Setting[int] | None = None


def link_balancers(
    balancers: list[Balancer], nginx_configs: list[NginxConfig], apps: list[AppServer]
) -> list[BalancerLink]:
    """Every (balancer, server, nginx or app server) whose addresses meet (or a host name,
    another container's, at the app's port); nginx first: an address nginx listens on is
    nginx's even when an app server there would also match."""
    links: list[BalancerLink] = []
    for balancer in balancers:
        limits = balancer.maxconns or (None,) * len(balancer.servers)
        pools = balancer.pools or (None,) * len(balancer.servers)
        for server, maxconn, pool in zip(balancer.servers, limits, pools, strict=True):
            fronted = [
                n for n in nginx_configs if any(_serves(a.value, server.value) for a in n.listens)
            ]
            links.extend(BalancerLink(balancer, server, nginx=n) for n in fronted)
            if fronted:
                continue
            reached = [a for a in apps if any(_serves(s.value, server.value) for s in a.sockets)]
            # `server web1 web:8000` in a compose file's HAProxy: another container's name.
            for app in reached or _by_name(server.value, apps):
                links.append(BalancerLink(balancer, server, app=app, maxconn=maxconn, pool=pool))
    return links
