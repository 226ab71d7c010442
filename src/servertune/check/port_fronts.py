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
from collections.abc import Iterable, Sequence
from pathlib import Path

from servertune.check.chain import Link, Unjoined, normalise, starter
from servertune.check.model import AppServer, note

__all__ = ["joined_by_port"]


def _files(app: AppServer) -> list[str]:
    """The files that start `app`: its own, its launch's and its container's."""
    box = app.container
    files = [app.file, *(at.file for at in app.launched_by), *((box.at.file,) if box else ())]
    return [os.path.realpath(f) for f in files]


def _shared_depth(front: Path, app: AppServer) -> int:
    """How many folders deep the front and the nearest file starting `app` share."""
    here = os.path.realpath(front.parent)
    return max(len(Path(os.path.commonpath([here, os.path.dirname(f)])).parts) for f in _files(app))


def _on_port(port: str, apps: Iterable[AppServer]) -> list[AppServer]:
    return [
        a
        for a in apps
        if any(normalise(s.value)[0] != "unix" and normalise(s.value)[1] == port for s in a.sockets)
    ]


def _lone_server(held: Unjoined, fronted: set[int]) -> AppServer | None:
    """The one server `held`'s port reaches in the front's setup, or None when which one is
    not plain (see the module's docstring)."""
    port = normalise(held.server.value)[1]
    on_port = list(dict.fromkeys(_on_port(port, held.speaking)))
    if len(on_port) == 1:
        return None if id(on_port[0]) in fronted else on_port[0]
    front = (held.nginx.files or (held.nginx.file,))[0]
    depths = {id(a): _shared_depth(front, a) for a in on_port}
    deepest = max(depths.values(), default=0)
    nearest = [a for a in on_port if depths[id(a)] == deepest]
    if len(nearest) != 1 or id(nearest[0]) in fronted:
        return None
    return nearest[0]


def joined_by_port(unjoined: Sequence[Unjoined], fronted: Iterable[AppServer]) -> list[Link]:
    """The links of the held passes joined by their port (a `joined-by-name` note each); the
    others' held notes are said. `fronted`: the servers some front already reaches."""
    taken = {id(a) for a in fronted}
    links: list[Link] = []
    for held in unjoined:
        app = _lone_server(held, taken)
        if app is None:
            for said in held.said:
                note(said.kind, said.at, said.message, said.fix)
            continue
        links.append(Link(held.nginx, held.passing, held.upstream, held.server, app))
        port = normalise(held.server.value)[1]
        note(
            "joined-by-name",
            held.server.at,
            f"{held.server.at}: front {held.nginx.file.name} joined to {starter(app)} by port "
            f"{port} alone: the host {held.server.value!r} is not a service check knows, and "
            "that is the server on that port nearest the front, with no other front",
        )
    return links
