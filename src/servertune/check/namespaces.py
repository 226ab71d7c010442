"""Which app servers a front's local address reaches: each container has a network namespace of
its own, so `127.0.0.1:8080`, `localhost:8080` or `0.0.0.0:8080` in an nginx config reaches a
server in the same container only (Docker's "Networking overview": a container's loopback is
its own). The container of a front is the one whose image holds its file (a COPY naming it, its
folder or a wildcard) or the compose service that mounts it; a server is in another namespace
when the files place it in containers none of which holds or mounts the front.

What nothing places is joined by address as before: a front no image copies and no service
mounts (a host's nginx, an example config), a server whose container is not known here, a
Kubernetes pod (its containers share one namespace), and a compose service that shares another
network (`network_mode: host`, `service:X`, `container:X`: a host nginx reaches a published
port through its loopback). A unix socket is a file, which a shared volume carries between
containers: it is not judged here. The Heroku nginx buildpack's front runs in the dyno its
Procfile's `bin/start-nginx CMD` starts, and reaches what CMD starts there only, its unix socket
too (`heroku_nginx.dyno_server`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from servertune.check.chain import BalancerLink, Link, Service, Stacks, normalise
from servertune.check.environments import developer_front
from servertune.check.heroku_nginx import dyno_server
from servertune.check.model import AppServer, NginxConfig

__all__ = [
    "apart_notes",
    "host_balancer_servers_first",
    "host_servers_first",
    "in_front_namespace",
    "placed",
]

#: The hosts that name the machine's own interfaces, as `chain.normalise` writes them.
_LOCAL = frozenset({"127.0.0.1", "0.0.0.0", "[::]", "*", ""})


def in_front_namespace(
    front: NginxConfig,
    target: str,
    app: AppServer,
    stacks: Stacks,
    servers: Sequence[AppServer] = (),
) -> bool:
    """Whether `front`'s pass to `target` can reach `app` (which listens there): not when
    `target` is a local TCP address and the files place the front and `app` in different
    containers. `servers` are the run's app servers: an image that starts none of them is a
    proxy's own (`FROM nginx` and its config), which a pod runs beside the app's image."""
    first = (front.files or (front.file,))[0]
    dyno = dyno_server(front, app)
    if dyno is not None and not placed(first, stacks):
        # The buildpack's nginx runs in the dyno its Procfile entry starts, unless a
        # container here mounts or holds the template and renders it (a compose `nginx`).
        return dyno
    host, port = normalise(target)
    if host not in _LOCAL or front.in_cluster:
        return True
    if not placed(first, stacks):
        return _published_to(app, port, first, stacks)
    return not _elsewhere(app, first, stacks) or _beside_in_a_pod(app, first, stacks, servers)


def apart_notes(dropped: Sequence[Link], kept: Sequence[Link]) -> None:
    """A `not-followed` note at each pass to a local address that reached servers only in
    other containers (`in_front_namespace` dropped them all): the pass is not joined, and the
    note says why rather than leaving the front silent. Such a proxy image reaches another
    image's server on its loopback only where one pod or task runs both (an ECS task, a
    Kubernetes pod), which no file read says (thunderbird/appointment's nginx image and its
    `proxy_pass http://127.0.0.1:5000`)."""
    from servertune.check.chain import starter
    from servertune.check.model import note

    joined = {(id(k.nginx), k.passing.at, k.server.value) for k in kept}
    apart: dict[tuple[int, object, str], list[Link]] = {}
    for k in dropped:
        key = (id(k.nginx), k.passing.at, k.server.value)
        if key not in joined and normalise(k.server.value)[0] in _LOCAL:
            apart.setdefault(key, []).append(k)
    for found in apart.values():
        at = found[0].server.at
        servers = ", ".join(dict.fromkeys(starter(k.app) for k in found))
        note(
            "not-followed",
            at,
            f"{at}: not followed: {found[0].server.value!r} is the loopback of the front's own "
            f"container, and the servers on that port here ({servers}) run in other "
            "containers: it reaches one only where a pod or task runs both, which no file "
            "read here says",
        )


def host_servers_first(links: Sequence[Link], stacks: Stacks) -> list[Link]:
    """`links` without a host's front's pass to a loopback address joined to a compose
    service's server by the port it publishes there, when that pass also reaches a server
    the host itself runs (a systemd unit's): the host's nginx and the host's server are one
    deployment (a Debian package's site and its service, ooni/backend's
    `api/debian/etc/nginx/sites-available/ooni-api.conf` and `api/debian/ooni-api.service`
    on 127.0.0.1:8000), and a published port stands in for the host's loopback only when
    nothing on the host listens there."""
    hosted = {
        (id(k.nginx), k.passing.at, k.server.value)
        for k in links
        if _on_host(k.app) and normalise(k.server.value)[0] in _LOCAL
    }
    return [
        k
        for k in links
        if (id(k.nginx), k.passing.at, k.server.value) not in hosted
        or _on_host(k.app)
        or placed((k.nginx.files or (k.nginx.file,))[0], stacks)
    ]


def host_balancer_servers_first(
    links: Sequence[BalancerLink], stacks: Stacks
) -> list[BalancerLink]:
    """`links` of balancers (Caddy, HAProxy, Traefik) as `host_servers_first` leaves nginx's:
    a host's balancer whose server line at a loopback address reaches a server the host runs
    (a systemd unit's) is that server's, not a container's or an image's on the same port
    (hotosm/raw-data-api's ansible `Caddyfile.j2` and `raw-data-api.service` on
    127.0.0.1:8000, beside a compose service publishing 8000)."""
    hosted = {
        (id(k.balancer), k.server.at, k.server.value)
        for k in links
        if k.app is not None and _on_host(k.app) and normalise(k.server.value)[0] in _LOCAL
    }
    return [
        k
        for k in links
        if (id(k.balancer), k.server.at, k.server.value) not in hosted
        or k.app is None
        or _on_host(k.app)
        or placed(k.balancer.file, stacks)
    ]


def _on_host(app: AppServer) -> bool:
    """The server runs on the host itself: started by a systemd unit, in no container."""
    if app.container is not None:
        return False
    first = app.launched_by[0].file if app.launched_by else app.file
    return first.suffix == ".service"


def _published_to(app: AppServer, port: str, front: Path, stacks: Stacks) -> bool:
    """Whether a front no container runs (a host's nginx: a debian/ or etc/ site, a service on
    the host's network) reaches `app` at its loopback's `port`: a compose service's server
    only through a port its `ports:` publishes there (ooni/backend's debian nginx passing to
    127.0.0.1:8000, not the compose service's gunicorn on 0.0.0.0:8000 in its container), or
    when its container holds the front (the same container may run it). What the files do
    not place is joined as before."""
    box = app.container
    if box is None or box.platform != "compose":
        return True
    service = next(
        (s for s in stacks.services if (s.file, s.name) == (box.at.file, box.name)), None
    )
    if service is None or service.network_shared or service.published is None:
        return True
    listening = {normalise(s.value)[1] for s in app.sockets}
    if any(h == port and c in listening for h, c in service.published):
        return not developer_front(front, app)
    return not _elsewhere(app, front, stacks)


def _holding(file: Path, stacks: Stacks) -> list[Service]:
    """The compose services whose container holds `file` as a config of its own: mounting it
    or a folder of configs holding it (not the whole project, `.:/app`, which carries every
    file), or built from an image that copies it."""
    mounting = [
        s
        for s in stacks.mounting([file])
        if s in stacks.mounting([file], folders=False)
        or any(
            _within(_real(file), _real(m)) and not _within(_real(s.file), _real(m))
            for m in s.mounts
        )
    ]
    return [*mounting, *stacks.building([file])]


def _within(path: str, folder: str) -> bool:
    return path.startswith(folder + os.sep)


def placed(file: Path, stacks: Stacks) -> bool:
    """Whether the files say which containers run the front: an image copies it by name,
    folder or wildcard (not as part of a whole build context), or a service mounts it; and
    none of those shares another network, whose loopback is not its own."""
    services = _holding(file, stacks)
    if any(s.network_shared for s in services):
        return False
    return bool(services) or any(
        image.holds(file, whole_context=False) is not None for image in stacks.images
    )


def _beside_in_a_pod(
    app: AppServer, front: Path, stacks: Stacks, servers: Sequence[AppServer]
) -> bool:
    """The front is a proxy image's config and nothing says the proxy and `app` run apart: no
    compose service runs `app` or holds the front, and every image that copies the front starts
    no app server of the run (`FROM nginx` with its config: a sidecar). A Kubernetes pod or an
    ECS task runs such images side by side on one loopback (Kubernetes' "Pods": containers in
    a pod share its network namespace and reach each other on localhost), which is what a
    proxy image's `proxy_pass http://127.0.0.1:8000` says it expects (akvo/akvo-rsr's
    Dockerfile-nginx beside its gunicorn image)."""
    if app.container is not None or _holding(front, stacks):
        return False
    holders = [i for i in stacks.images if i.holds(front, whole_context=False) is not None]
    starting = {_real(f) for a in servers for f in (a.file, *(at.file for at in a.launched_by))}
    return bool(holders) and all(_real(i.path) not in starting for i in holders)


def _elsewhere(app: AppServer, front: Path, stacks: Stacks) -> bool:
    """The files place `app` in containers, none of which holds `front`: another namespace."""
    box = app.container
    service: Service | None = None
    if box is not None:
        if box.platform != "compose":
            return False  # a pod's containers share one namespace: not decided here
        service = next(
            (s for s in stacks.services if (s.file, s.name) == (box.at.file, box.name)), None
        )
        if service is None or service.network_shared:
            return False
        if service in stacks.mounting([front]) and not _carried_only(service, front, stacks):
            return False
    starting = {_real(at.file) for at in app.launched_by} | {_real(app.file)}
    if service is not None and service.dockerfile is not None:
        starting.add(_real(service.dockerfile))
    images = [image for image in stacks.images if _real(image.path) in starting]
    if not images:
        return service is not None  # a service whose image is not read, or not known
    if any(image.holds(front, whole_context=False) is not None for image in images):
        return False
    # A front another image copies by name or folder runs in that image's container (the
    # proxy's): one that only carries it in a copy of the whole build context (`COPY .
    # /app`) does not run it (rero/rero-ils: the nginx image's `COPY conf.d/*`, the uWSGI
    # image's whole checkout).
    if any(image.holds(front, whole_context=False) is not None for image in stacks.images):
        return True
    return all(image.holds(front) is None for image in images)


def _carried_only(service: Service, front: Path, stacks: Stacks) -> bool:
    """`service` mounts `front` only inside the whole project (`.:/app`, which carries every
    file), while another container holds it as a config of its own (an image copying it by
    name or folder, a service mounting it so): that container runs it, as a front carried in a
    whole build context runs in the image copying it by name (IGVF-DACC/igvfd: the pyramid
    service's `.:/igvfd` beside the nginx image's `COPY config/nginx/production.conf`)."""
    if service in _holding(front, stacks):
        return False
    return any(s is not service for s in _holding(front, stacks)) or any(
        image.holds(front, whole_context=False) is not None for image in stacks.images
    )


def _real(path: Path) -> str:
    return os.path.normpath(path.absolute())
