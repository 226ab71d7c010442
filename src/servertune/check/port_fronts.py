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

from servertune.check.chain import Link, Stacks, Unjoined, normalise, starter
from servertune.check.model import AppServer, note

__all__ = ["joined_by_port", "sidecar_joins"]


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


#: The hosts of a pass to the front's own loopback.
_LOOPBACK = re.compile(r"\A(127(\.[0-9]+){3}|localhost)\Z")


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
        if _LOOPBACK.match(normalise(k.server.value)[0]):
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
