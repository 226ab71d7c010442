"""A front whose upstream host nothing read answers to (a Kubernetes or platform name whose
manifests are not here, `api:8000` with no compose file, a variable), joined by its port
alone when no compose project places the front (in one, Docker's DNS answers the project's
own names only) and the repository leaves no doubt which server it reaches: of the servers on
that port, the only one, or the one
sharing a deeper folder with the front than every other does (cohere-toolkit's
`aws_copilot_deploy/nginx.conf` beside `aws_copilot_deploy/aws-api.Dockerfile`), when no other
front reaches it. Two servers equally near, a host a known service answers
to, or another machine's literal address join nothing: the held `not-followed` note is said.
Each join is said in a `joined-by-name` note naming the host check does not know."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from servertune.check.chain import (
    BalancerLink,
    HeldBalancer,
    Link,
    Stacks,
    Unjoined,
    loopback,
    normalise,
    servers_on_port,
    starter,
)
from servertune.check.model import AppServer, Note, Setting, note

__all__ = ["joined_by_port", "sidecar_joins", "unknown_bind_joins"]


def _files(app: AppServer) -> list[str]:
    """The files that start `app`: its own, its launch's and its container's."""
    box = app.container
    files = [app.file, *(at.file for at in app.launched_by), *((box.at.file,) if box else ())]
    return [os.path.realpath(f) for f in files]


def _shared_depth(front: Path, app: AppServer) -> int:
    """How many folders deep the front and the nearest file starting `app` share."""
    here = os.path.realpath(front.parent)
    return max(len(Path(os.path.commonpath([here, os.path.dirname(f)])).parts) for f in _files(app))


def _lone_server(
    port: str, speaking: Iterable[AppServer], front: Path, fronted: set[int]
) -> AppServer | None:
    """The one server of `speaking` that a front in the file `front` reaches at `port`, or
    None when which one is not plain (see the module's docstring)."""
    # A server a container read here runs (a compose service, a Kubernetes pod) answers to
    # that container's (or its Service's) name, which check knows: a host that is not it is
    # another service's (OpenMined/PySyft's Traefik `frontend:80`, not the registry pod's
    # uvicorn on 80). Only a server no container places is joined by its port.
    on_port = [a for a in dict.fromkeys(servers_on_port(port, speaking)) if a.container is None]
    if len(on_port) == 1:
        return None if id(on_port[0]) in fronted else on_port[0]
    depths = {id(a): _shared_depth(front, a) for a in on_port}
    deepest = max(depths.values(), default=0)
    nearest = [a for a in on_port if depths[id(a)] == deepest]
    if len(nearest) != 1 or id(nearest[0]) in fronted:
        return None
    return nearest[0]


def _joined_note(server: Setting[str], front: Path, app: AppServer) -> None:
    note(
        "joined-by-name",
        server.at,
        f"{server.at}: front {front.name} joined to {starter(app)} by port "
        f"{normalise(server.value)[1]} alone: the host {server.value!r} is not a service check "
        "knows, and that is the server on that port nearest the front, with no other front",
    )


def joined_by_port(
    unjoined: Sequence[Unjoined],
    fronted: Iterable[AppServer],
    balancers: Sequence[HeldBalancer] = (),
) -> tuple[list[Link], list[BalancerLink]]:
    """The links of the held passes, and of the balancers' held servers (Caddy's
    `reverse_proxy`, a Traefik url, an HAProxy `server` line), joined by their port (a
    `joined-by-name` note each); the others' held notes are said. `fronted`: the servers some
    front already reaches."""
    taken = {id(a) for a in fronted}
    links: list[Link] = []
    for held in unjoined:
        host, port = normalise(held.server.value)
        front = (held.nginx.files or (held.nginx.file,))[0]
        if host == "unix":
            # `speaking`: the servers binding a socket of that file name where check cannot
            # place the path (`chain._same_socket_name`): joined when there is one.
            app = held.speaking[0] if len(held.speaking) == 1 else None
            if app is not None and id(app) not in taken:
                links.append(Link(held.nginx, held.passing, held.upstream, held.server, app))
                _socket_note(held.server, held.nginx.file, app)
            continue
        app = _lone_server(port, held.speaking, front, taken)
        if app is None:
            _say(held.said)
            continue
        links.append(Link(held.nginx, held.passing, held.upstream, held.server, app))
        _joined_note(held.server, held.nginx.file, app)
    # A server an nginx pass was joined to just now has that front: a balancer's is another.
    taken |= {id(k.app) for k in links}
    joined: list[BalancerLink] = []
    for server in balancers:
        port = normalise(server.server.value)[1]
        app = _lone_server(port, server.speaking, server.balancer.file, taken)
        if app is None:
            _say(server.said)
            continue
        joined.append(
            BalancerLink(
                server.balancer, server.server, app=app, maxconn=server.maxconn, pool=server.pool
            )
        )
        _joined_note(server.server, server.balancer.file, app)
    return links, joined


def _socket_note(server: Setting[str], front: Path, app: AppServer) -> None:
    name = os.path.basename(normalise(server.value)[1])
    bound = [
        s.value
        for s in app.sockets
        if normalise(s.value)[0] == "unix" and os.path.basename(normalise(s.value)[1]) == name
    ]
    note(
        "joined-by-name",
        server.at,
        f"{server.at}: front {front.name} joined to {starter(app)} by the socket's file name "
        f"alone: no server binds {server.value!r}, and that server binds {bound[0]!r}, a path "
        "check cannot place against the front's (a variable, or a volume its container may "
        "mount elsewhere)",
    )


def _say(said: Iterable[Note]) -> None:
    for one in said:
        note(one.kind, one.at, one.message, one.fix)


def _proxy_image_front(front: Path, stacks: Stacks, apps: Sequence[AppServer]) -> bool:
    """Some images copy the front by name or folder and none of them starts an app server
    of the run: a proxy image's config (`FROM nginx` and its site), a sidecar's."""
    holders = [i for i in stacks.images if i.holds(front, whole_context=False) is not None]
    starting = {
        os.path.realpath(f) for a in apps for f in (a.file, *(at.file for at in a.launched_by))
    }
    return bool(holders) and all(os.path.realpath(i.path) not in starting for i in holders)


def sidecar_joins(
    apart: Sequence[Link], kept: Sequence[Link], stacks: Stacks, apps: Sequence[AppServer]
) -> list[Link]:
    """Of the loopback passes `in_front_namespace` kept apart (`apart`: the servers on that
    port run in other containers), each of a proxy image's config that reaches exactly one
    server that no container here runs (an image deployed as built, beside the proxy in a pod
    or task: mozilla/glam's openresty image passing to `127.0.0.1:8000`, the final stage's
    gunicorn; thunderbird/appointment's nginx image) and that no other front reaches: the
    link, with a `joined-by-name` note. The compose stack that runs the proxy image beside a
    server of its own is another setup: its loopback reaches none of them."""
    fronted = {id(k.app) for k in kept}
    passes: dict[tuple[int, object, str], list[Link]] = {}
    for k in apart:
        if loopback(normalise(k.server.value)[0]):
            passes.setdefault((id(k.nginx), k.passing.at, k.server.value), []).append(k)
    joined: list[Link] = []
    for found in passes.values():
        lone = list({id(k.app): k for k in found if k.app.container is None}.values())
        if len(lone) != 1 or id(lone[0].app) in fronted:
            continue
        k = lone[0]
        if not _proxy_image_front((k.nginx.files or (k.nginx.file,))[0], stacks, apps):
            continue
        joined.append(k)
        note(
            "joined-by-name",
            k.server.at,
            f"{k.server.at}: front {k.nginx.file.name} joined to {starter(k.app)} by port "
            f"{normalise(k.server.value)[1]} alone: {k.server.value!r} is the proxy image's "
            "own loopback, and that server's image, which no container here runs, is the one "
            "on that port: a pod or task runs the two side by side",
        )
    return joined


def unknown_bind_joins(links: Sequence[Link]) -> list[Link]:
    """`links` less the passes joined by a compose service's name to its one server whose
    bind is unknown here (`chain._unknown_bind`) when the front passes to that service on
    more than one port: the server listens on one of them at most, which the files do not
    say (a sidecar of the same container has the others), so none is joined and a
    `not-followed` note says why. A front naming one port keeps its links, with a
    `joined-by-name` note saying the port was not checked."""
    groups: dict[tuple[int, int], list[Link]] = {}
    for k in links:
        box = k.app.container
        if k.app.sockets or box is None or box.platform != "compose":
            continue
        if normalise(k.server.value)[0] in ("unix", "") or not _NAMED.match(k.server.value):
            continue
        groups.setdefault((id(k.nginx), id(k.app)), []).append(k)
    dropped: set[int] = set()
    for found in groups.values():
        ports = sorted({normalise(k.server.value)[1] for k in found})
        box = found[0].app.container
        assert box is not None
        if len(ports) == 1:
            note(
                "joined-by-name",
                found[0].server.at,
                f"{found[0].server.at}: front {found[0].nginx.file.name} joined to "
                f"{starter(found[0].app)} by the service's name {box.name!r} alone: it runs "
                "this one server, whose bind is not known here, so the port is not checked against it",
            )
            continue
        dropped |= {id(k) for k in found}
        note(
            "not-followed",
            found[0].server.at,
            f"{found[0].server.at}: not followed: front {found[0].nginx.file.name} passes to "
            f"the service {box.name!r} on ports {', '.join(ports)}, and the bind of its server "
            f"({starter(found[0].app)}) is not known here: which port is that server's is not "
            "in the files, so none is joined",
        )
    return [k for k in links if id(k) not in dropped]


#: A `host:port` whose host is a name (a service's), not an address.
_NAMED = re.compile(r"\A([a-z]+://)?[A-Za-z_][A-Za-z0-9_.-]*:[0-9]+\Z")
