"""Which files belong together: a load balancer's servers -> the nginx (or app server) listening
there; nginx `*_pass` -> upstream servers -> the app server listening there.

Addresses are compared as the kernel would route them: `localhost` is 127.0.0.1, a server
bound to 0.0.0.0 / [::] (or uWSGI's `:PORT`) answers on every address of its port, and a unix
socket is its path.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check import memo
from servertune.check.bound_ports import alone, known_ports, known_socket_files
from servertune.check.development import development_reason
from servertune.check.model import (
    FRONT_PORT_MISSED,
    AppServer,
    Balancer,
    Location,
    NginxConfig,
    Note,
    PassTarget,
    Setting,
    Upstream,
    collect_notes,
    note,
)
from servertune.check.nginx_envsh import ENTRYPOINT_DIR, entrypoint_exports, envsh_exports
from servertune.check.nginx_seds import Fill, sed_fills
from servertune.check.nginx_variables import nginx_variable
from servertune.check.placeholders import placeholder, placeholder_port
from servertune.check.runtime_files import ENVSUBST_VARIABLE

if TYPE_CHECKING:
    from servertune.check.dockerfile import Image

__all__ = [
    "BalancerLink",
    "HeldBalancer",
    "KubeService",
    "Link",
    "Service",
    "Stacks",
    "Unjoined",
    "link",
    "link_balancers",
    "loopback",
    "normalise",
    "servers_on_port",
    "starter",
]

_WILDCARDS = ("0.0.0.0", "[::]", "*", "")


@dataclass(frozen=True)
class Unjoined:
    """A pass whose host nothing read answers to (`unknown_host`), held until every front is
    linked: `port_fronts` may still join it by its port, else `said` (its not-followed note)
    is recorded."""

    nginx: NginxConfig
    passing: PassTarget
    upstream: Upstream | None
    server: Setting[str]
    #: The app servers that speak the pass's protocol, of the front's project or of none.
    speaking: tuple[AppServer, ...]
    said: tuple[Note, ...]


@dataclass(frozen=True)
class HeldBalancer:
    """A balancer's server (Caddy's `reverse_proxy`, a Traefik service's url, an HAProxy
    `server` line) whose host nothing read answers to, held as `Unjoined` is."""

    balancer: Balancer
    server: Setting[str]
    maxconn: Setting[int] | None
    pool: Setting[int] | None
    #: The app servers that answer HTTP at that address.
    speaking: tuple[AppServer, ...]
    said: tuple[Note, ...]


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
    default_port = "443" if address.startswith("https://") else "80"
    for scheme in ("http://", "uwsgi://", "https://"):
        address = address.removeprefix(scheme)
    if address.startswith("unix:"):
        # nginx's docs write `unix:/path`; tutorials often `unix:///path`: the same file. A
        # relative path no starter's directory resolved (`working_dirs`) stays relative.
        path = address[5:]
        if path.lstrip("/").startswith("$"):
            # `unix://$DIR/app.sock` and uWSGI's `socket = $DIR/app.sock`: a path that starts
            # with a folder's variable is that folder's, however many `/` come before it
            # (cryptosharks131/lndg's installer writes both).
            return ("unix", path.lstrip("/"))
        return ("unix", _resolved("/" + path.lstrip("/") if path.startswith("/") else path))
    if address.startswith("/"):
        return (
            "unix",
            address.lstrip("/") if address.lstrip("/").startswith("$") else _resolved(address),
        )
    address = address.split("/", 1)[0]  # `proxy_pass http://app:8000/api/`: the URI's path
    host, colon, port = address.rpartition(":")
    if not colon:  # nginx `server app:80` is written with a port; a bare name means its scheme's
        host, port = address, default_port
    host = "127.0.0.1" if host in ("localhost", "[::1]", "::1") else host
    if host.endswith(".") and not host.endswith(".."):
        host = host[:-1]  # `mwdb.:8080`: a fully qualified name, the same name as `mwdb`
    return (host, port)  # `:8080` (gunicorn's bind on every address): host "", a wildcard


def servers_on_port(port: str, apps: Iterable[AppServer]) -> list[AppServer]:
    """The servers of `apps` with a TCP socket on `port`, whatever its host."""
    return [
        a
        for a in apps
        if any(normalise(s.value)[0] != "unix" and normalise(s.value)[1] == port for s in a.sockets)
    ]


def _resolved(path: str) -> str:
    """An absolute socket path with its `.` and `..` resolved, as the kernel resolves them
    when no folder on the way is a symlink (which nothing read here says): uWSGI's
    `socket = %d../app.sock` of /webapp/deploy/uwsgi.ini binds /webapp/app.sock, nginx's
    `unix:/webapp/app.sock` (Coleridge-Initiative-org/dfadmin). A relative path stays as
    written: its folder is the starter's, which `working_dirs` places."""
    return posixpath.normpath(path) if path.startswith("/") else path


def _serves(app_socket: str, target: str) -> bool:
    """Whether a socket bound at `app_socket` answers a connection to `target`: the same
    address, or a wildcard bind reached at its port by a name or its machine's own loopback.
    A literal address of some other machine (`157.230.124.6`) is reached only by a socket bound
    to that very address: that a wildcard bind of one machine read here answers there is not
    known, and no container or service read here has that address (ooni/backend's upstream of
    remote IPs in front of uvicorns on 0.0.0.0:80)."""
    app_host, app_port = normalise(app_socket)
    host, port = normalise(target)
    if app_host == "unix" or host == "unix":
        return app_host == host and app_port == port
    if app_port != port:
        return False
    return app_host == host or (app_host in _WILDCARDS and not _remote_literal(host))


_IPV4 = re.compile(r"\A[0-9]+(\.[0-9]+){3}\Z")
#: The loopback addresses (`normalise` writes localhost and ::1 as 127.0.0.1).
_LOOPBACK = re.compile(r"\A127(\.[0-9]+){3}\Z")


def loopback(host: str) -> bool:
    """Whether `host`, as `normalise` writes it, is this machine's own loopback."""
    return bool(_LOOPBACK.match(host))


def _remote_literal(host: str) -> bool:
    """A literal IP address that is not this machine's loopback nor a wildcard."""
    if host in _WILDCARDS or _LOOPBACK.match(host):
        return False
    return bool(_IPV4.match(host)) or host.startswith("[")


def _host_name(target: str) -> str | None:
    """The host name a target names (`web` of `web:8000`, a compose service or a Kubernetes
    Service), None for an address (an IP, localhost, a unix socket, a wildcard)."""
    host, port = normalise(target)
    if host == "unix" or host in _WILDCARDS or host == "127.0.0.1" or not port.isdigit():
        return None
    if _IPV4.match(host) or host.startswith("["):
        return None
    return host


#: The file names compose merges by default: `docker compose up` reads the first base file it
#: finds with its override beside it (the Compose Specification, "Merge and override").
_COMPOSE_BASES = frozenset(
    {"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}
)
_COMPOSE_OVERRIDES = frozenset(
    {
        "compose.override.yaml",
        "compose.override.yml",
        "docker-compose.override.yaml",
        "docker-compose.override.yml",
    }
)


@dataclass(frozen=True)
class Rendering:
    """A compose service whose start script renders templates before nginx starts
    (`front_start.renders_of_run`): each repository file it renders (its real path) with the
    variables envsubst substitutes there (the script's own, the image's and the service's)."""

    file: Path
    service: str
    templates: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    def renders(self, real: str) -> bool:
        return any(path == real for path, _ in self.templates)


#: The suffixes that name a file a template, also before a stage's (`app.conf.template.prod`).
_TEMPLATE_SUFFIXES = frozenset({".template", ".tpl", ".tmpl"})


@dataclass(frozen=True)
class Service:
    """A compose service as the linking needs it, whether or not it starts a server: its
    file and name, the files it bind-mounts and the Dockerfile it is built from."""

    file: Path
    name: str
    mounts: tuple[Path, ...] = ()
    dockerfile: Path | None = None
    #: Its `environment` values written as literals (`BACKEND: backend:8000`): what an nginx
    #: template it runs is rendered with (envsubst, at the container's start).
    environment: tuple[tuple[str, str], ...] = ()
    #: The other names its container answers to on its networks: `container_name`,
    #: `networks.*.aliases` and `hostname` (Docker's DNS resolves each to it, as it resolves
    #: the service's name: `compose._aliases`).
    aliases: tuple[str, ...] = ()
    #: It joins another network namespace (`network_mode: host`, `service:X`, `container:X`):
    #: its loopback is not its own (`namespaces`).
    network_shared: bool = False
    #: The ports its `ports:` publishes on the host's loopback (host port, container port):
    #: how a server on the host (a host's nginx) reaches it; None when not known (a port
    #: written with a variable).
    published: tuple[tuple[str, str], ...] | None = None
    #: The stage its `build.target` names; None when it builds the final stage.
    target: str | None = None
    #: The folder its `build` sends to the builder (its context), which holds every file its
    #: image can copy from this repository; None when it builds nothing here.
    context: Path | None = None


@dataclass(frozen=True)
class KubeService:
    """A Kubernetes Service as routing needs it: its name, the pod labels it selects, and
    each port (its number and name) with the `targetPort` it sends to (a number or a name)."""

    name: str
    selector: tuple[tuple[str, str], ...]
    #: (port, its name, targetPort) each where its entry is written.
    ports: tuple[Setting[tuple[str, str, str]], ...]


def _real(path: Path) -> str:
    return os.path.normpath(path.absolute())


@dataclass(frozen=True)
class Stacks:
    """The compose projects of the files read, so that a host name a front passes to is
    resolved as Docker's DNS resolves it: to a service of the front's own project, never to a
    same-named service of another stack (a dev file beside the prod one, an example beside the
    deployment). A project is a compose file and the override compose merges with it by
    default; a front belongs to the projects whose services bind-mount it (or a folder
    holding it), a compose file's Traefik labels to that file's."""

    services: tuple[Service, ...] = ()
    #: The images the run's Dockerfiles build: a file one copies is that image's, never left out.
    images: tuple[Image, ...] = ()
    #: The Kubernetes Services of the manifests read: an Ingress's backend is one of them.
    kube_services: tuple[KubeService, ...] = ()
    #: Every file was named on the command line, none found by a folder walk: the user says
    #: the front and the app servers go together, so when no compose service or Kubernetes
    #: Service read answers to a host name (none was given), an app on its port is the one.
    named: bool = True
    #: Each nginx config's first file with the environment its containers render it with.
    front_environments: tuple[tuple[Path, tuple[tuple[str, str], ...]], ...] = ()
    #: Each nginx config's first file with the placeholders its image's start script fills
    #: with sed before nginx starts (`nginx_seds`).
    front_fills: tuple[tuple[Path, tuple[Fill, ...]], ...] = ()
    #: Each labelled overlay among the compose files read, with the base file it completes
    #: (`overlay.base_of`): the two run as one project.
    overlays: tuple[tuple[Path, Path], ...] = ()
    #: Each compose file with a file it `include:`s, or with the first file whose mounts are
    #: written from the same folder above (`overlay.mounts_project`): the services of both are
    #: one project.
    includes: tuple[tuple[Path, Path], ...] = ()
    #: Each nginx config's first file that its container renders several times in one start
    #: (`runtime_files.rendered_fronts`), with the environment of each rendering.
    front_passes: tuple[tuple[Path, tuple[tuple[tuple[str, str], ...], ...]], ...] = ()
    #: Each compose service whose start script renders nginx templates before nginx starts.
    renders: tuple[Rendering, ...] = ()
    #: Each repository file an installer script copies and fills with sed (`installer_seds`):
    #: a front's and an app's placeholders read as the replacements the installer writes.
    installed: tuple[tuple[Path, tuple[Fill, ...]], ...] = ()

    def reads(self, service: Service, file: Path) -> bool:
        """Whether the nginx of `service` can read `file`, which it holds: not when this
        service's start renders templates, never `file`, and `file` is a template (named as
        one, or rendered by another service's start: `run-nginx.sh app.conf.template.prod`):
        its nginx reads what it rendered; the template it passes over is another launch's."""
        real = _real(file)
        own = self._renderings(service)
        if not own or any(r.renders(real) for r in own):
            return True
        named = any(s.lower() in _TEMPLATE_SUFFIXES for s in file.suffixes)
        return not named and not any(r.renders(real) for r in self.renders)

    def _renderings(self, service: Service) -> list[Rendering]:
        return [r for r in self.renders if (r.file, r.service) == (service.file, service.name)]

    def each_pass(
        self, files: Sequence[Path], servers: Sequence[Setting[str]]
    ) -> tuple[Setting[str], ...]:
        """`servers` as each rendering of the front (`front_passes`) writes them: a
        `${NAME}` server once per rendering, with that rendering's values."""
        passes = next((p for file, p in self.front_passes if files[:1] == (file,)), ())
        return tuple(
            replace(server, value=_render(server.value, dict(environment)))
            for server in servers
            for environment in (passes if passes and "${" in server.value else ((),))
        )

    def each_pass_target(
        self, files: Sequence[Path], passes: Sequence[PassTarget]
    ) -> tuple[PassTarget, ...]:
        """`passes` as each rendering of the front writes them (`each_pass`): a `uwsgi_pass
        ${HOST}:${PORT};` once per rendering."""
        return tuple(
            replace(passing, target=server.value)
            for passing in passes
            for server in self.each_pass(files, [Setting(passing.target, passing.at)])
        )

    def rendering(self, nginx_configs: Sequence[NginxConfig]) -> Stacks:
        """These stacks with the environment each config's containers render it with
        (`environment_of_front`), for `link`."""
        found = []
        fills = []
        for config in nginx_configs:
            files = config.files or (config.file,)
            found.append((files[0], tuple(sorted(self.environment_of_front(files).items()))))
            fills.append((files[0], self._fills_of_front(files[0])))
        return replace(self, front_environments=tuple(found), front_fills=tuple(fills))

    def _fills_of_front(self, first: Path) -> tuple[Fill, ...]:
        """The sed fills of the images that hold `first` by name (`nginx_seds`); a
        placeholder two of them fill differently is not known."""
        fills: dict[str, Fill] = {}
        unknown: set[str] = set()
        for image in self.images:
            held = image.holds(first, whole_context=False)
            for fill in sed_fills(image, held) if held is not None else ():
                known = fills.setdefault(fill.placeholder, fill)
                if known.value != fill.value:
                    unknown.add(fill.placeholder)
        for fill in self.installed_fills(first):
            fills.setdefault(fill.placeholder, fill)  # the image's own start fills it first
        return tuple(f for p, f in fills.items() if p not in unknown)

    def installed_fills(self, file: Path) -> tuple[Fill, ...]:
        """The fills an installer script makes in its copy of `file` (`installer_seds`)."""
        wanted = _real(file)
        return next((f for path, f in self.installed if _real(path) == wanted), ())

    def installed_sockets(self, app: AppServer) -> tuple[str, ...]:
        """The app's sockets as the installed copy of the file holding them writes them
        (`installer_seds`): `unix:#BASE_DIR#/x.sock` in a unit an installer seds to
        `${root_dir}` is `unix:${root_dir}/x.sock`."""
        files = {app.file, *(at.file for at in app.launched_by)}
        fills = [f for file in files for f in self.installed_fills(file)]
        values = []
        for value in (*(s.value for s in app.sockets), *_unknown_sockets(app)):
            for fill in fills:
                value = value.replace(fill.placeholder, fill.value)
            values.append(value)
        return tuple(values)

    def filled(self, files: Sequence[Path], server: Setting[str]) -> Setting[str]:
        """`server` with the placeholders its front's start script fills with sed read as
        their replacements, each with a `joined-by-name` note naming the sed line."""

        fills = next((f for file, f in self.front_fills if files[:1] == (file,)), ())
        value = server.value
        for fill in fills:
            if fill.placeholder in value:
                value = value.replace(fill.placeholder, fill.value)
                note(
                    "joined-by-name",
                    server.at,
                    f"{server.at}: {fill.placeholder!r} is filled before nginx starts by "
                    f"{fill.at} (sed s|{fill.placeholder}|{fill.value}|): read as {value!r}",
                )
        return server if value == server.value else replace(server, value=value)

    def front_environment(self, files: Sequence[Path]) -> dict[str, str]:
        """The environment `rendering` found for the config whose first file is `files[0]`."""
        return next(
            (dict(env) for file, env in self.front_environments if files[:1] == (file,)), {}
        )

    def project(self, compose: Path) -> frozenset[Path]:
        """The compose files `docker compose` reads together with `compose` by default, with
        the files one of them `include:`s or that `include:` one of them."""
        found = self._project(compose)
        while True:
            more = {b for a, b in self.includes if a in found} | {
                a for a, b in self.includes if b in found
            }
            if more <= found:
                return found
            found = found.union(*(self._project(f) for f in more - found), more)

    def _project(self, compose: Path) -> frozenset[Path]:
        name = compose.name.lower()
        partners = (
            _COMPOSE_OVERRIDES
            if name in _COMPOSE_BASES
            else _COMPOSE_BASES
            if name in _COMPOSE_OVERRIDES
            else frozenset()
        )
        beside = {s.file for s in self.services if s.file.parent == compose.parent}
        # A labelled overlay (`docker-compose.prod.yml` completing the base file) runs with its
        # base, and so with the base's front: both are one project, as `-f base -f overlay`.
        bases = dict(self.overlays)
        base = bases.get(compose)
        overlays = {f for f in beside if bases.get(f) == compose}
        return frozenset(
            {compose} | (beside & {compose.parent / p for p in partners}) | overlays
        ) | (self._project(base) if base is not None and base != compose else frozenset())

    def mounting(self, files: Sequence[Path], *, folders: bool = True) -> tuple[Service, ...]:
        """The services that bind-mount one of `files` (or, with `folders`, a folder holding
        one)."""
        wanted = [_real(f) for f in files]
        return tuple(
            s
            for s in self.services
            if any(
                w == m or (folders and w.startswith(m + os.sep))
                for m in map(_real, s.mounts)
                for w in wanted
            )
        )

    def of_front(self, files: Sequence[Path]) -> frozenset[Path] | None:
        """The compose files of the projects a front (its files) belongs to; None when no
        compose file read says (then a host name is resolved among every app read); empty when
        the stacks read leave it out (`_left_out`)."""
        composes = {s.file for s in self.services}
        if files and files[0] in composes:
            return self.project(files[0])
        # The file itself first, by its own name (a folder mount may be another container's
        # copy of the whole configuration); then by its folder; then the files it includes
        # (`locations.conf`, shared by several).
        mounted = self.mounting(files[:1], folders=False)
        if not mounted and self._left_out(files[0]):
            return frozenset()
        mounted = (
            mounted
            or self._mounting_configs(files[:1])
            or self._mounting_configs(files[1:])
            or self.building(files[:1])
        )
        if not mounted:
            if self._image_run_nowhere(files[0]) or self._unplaced_run_nowhere(files[0]):
                return frozenset()
            return self._beside(files[0])
        if not (mounted := tuple(s for s in mounted if self.reads(s, files[0]))):
            return frozenset()  # each holds it as a template its start passes over
        return frozenset().union(*(self.project(s.file) for s in mounted))

    def overlaid_away(self, files: Sequence[Path], app: AppServer) -> bool:
        """Whether the front (its files) runs in a compose project that has not `app`'s
        service as written: the front is mounted only by an overlay's service
        (`docker-compose.dev.yml`'s nginx mounting nginx.dev.conf), and the overlay redefines
        `app`'s service of the base (its development command wins there); or mounted only by
        the base's service, which `app`'s overlay redefines without the front (its nginx
        mounts another file in its place). Seen in neurostuff/neurostore."""
        box = app.container
        runners = self.mounting(files[:1], folders=False)
        if box is None or box.platform != "compose" or not runners:
            return False
        own = _real(box.at.file)
        if any(_real(r.file) == own for r in runners):
            return False
        # A service of `app`'s own file runs an image holding the front (`image:
        # ghcr.io/acme/app-nginx`, the stage copying it): the base runs the front too, beside
        # `app`'s service as written (libretime/libretime).
        if any(_real(r.file) == own for r in self.building(files[:1])):
            return False
        bases = self._bases()
        defined = {(_real(s.file), s.name) for s in self.services}
        for runner in runners:
            there = _real(runner.file)
            if bases.get(there) == own and (there, box.name) in defined:
                return True
            if bases.get(own) == there and (own, runner.name) in defined:
                return True
        return all(self._sibling_overlays(_real(r.file), own) for r in runners)

    def labelled_away(self, compose: Path, app: AppServer) -> bool:
        """Whether the Traefik labels of the compose file `compose` are set by an overlay of a
        base that `app`'s launch merges with another overlay (`_sibling_overlays`): the labels
        are in that other merge's project only. Seen in uwcirg/truenth-portal."""
        box = app.container
        if box is None or box.platform != "compose":
            return False
        return self._sibling_overlays(_real(compose), _real(box.at.file))

    def _bases(self) -> dict[str, str]:
        """Each overlay's base file (labelled ones, and the default `compose.override.yaml`
        of a base beside it), as real paths."""
        bases = {_real(o): _real(b) for o, b in self.overlays}
        for service in self.services:
            if service.file.name.lower() not in _COMPOSE_OVERRIDES:
                continue
            beside = [
                s.file
                for s in self.services
                if s.file.parent == service.file.parent and s.file.name.lower() in _COMPOSE_BASES
            ]
            if beside:
                bases.setdefault(_real(service.file), _real(beside[0]))
        return bases

    def _sibling_overlays(self, there: str, own: str) -> bool:
        """Whether `there` and `own` are two different overlays of one base: each merge
        (`-f base -f overlay`) is a project of its own, so what one overlay mounts or labels
        runs beside the other's services in no merge the files read."""
        bases = self._bases()
        base = bases.get(there)
        return there != own and base is not None and bases.get(own) == base

    def _mounting_configs(self, files: Sequence[Path]) -> tuple[Service, ...]:
        """The services that mount one of `files` or a folder of configs holding it, not the
        whole project (`.:/pyspur:ro` carries every file of the repository: the backend of
        PySpur-Dev/pyspur's staging compose is no container of the dev compose's nginx)."""
        return tuple(
            s
            for s in self.mounting(files)
            if s in self.mounting(files, folders=False)
            or any(
                any(_real(f).startswith(_real(m) + os.sep) for f in files)
                and not (_real(s.file) + os.sep).startswith(_real(m) + os.sep)
                for m in s.mounts
            )
        )

    def _image_run_nowhere(self, file: Path) -> bool:
        """The front is copied (by name or folder) into images that no service read builds or
        runs, while the compose files build the Dockerfiles of the folders beside theirs
        (`compose/production/django/Dockerfile`, not `compose/production/traefik/Dockerfile`,
        whose service the stack no longer has): that front runs nowhere the files say, so it
        joins no launch, with a `not-followed` note on it. Seen in Living-with-machines/lwmdb.
        A manifest of a cluster may run any image by its name: then nothing is said."""
        holders = [i for i in self.images if i.holds(file, whole_context=False) is not None]
        if not holders or self.kube_services:
            return False
        built = [_real(s.dockerfile) for s in self.services if s.dockerfile is not None]
        # A service that builds nothing here runs an image by its name, perhaps this one
        # when it is named for the front's folder (`superdesk-client` for client/: superdesk's
        # compose pulls the image that folder's Dockerfile builds).
        pulled = [
            s.name for s in self.services if s.dockerfile is None or not s.dockerfile.is_file()
        ]
        for holder in holders:
            own = _real(holder.path)
            folder = os.path.dirname(own)
            if any(os.path.basename(folder) in name for name in pulled):
                return False
            # Only a stack whose compose file sits above the front's folder deploys the tree
            # around it: backend/docker-compose.yml is the backend's own (flathub's nginx/ is
            # run by a cluster whose Service names it passes to).
            if not any(
                (folder + os.sep).startswith(os.path.dirname(_real(s.file)) + os.sep)
                for s in self.services
            ):
                return False
            if own in built or not any(
                os.path.dirname(os.path.dirname(b)) == os.path.dirname(folder)
                and os.path.dirname(b) != folder
                for b in built
            ):
                return False
        # (Named from the front's folder: the run's own paths are not the output's.)
        names = ", ".join(sorted({os.path.relpath(h.path, file.parent) for h in holders}))
        note(
            "not-followed",
            Location(file),
            f"not joined to a launch: it runs in the image {names} builds (from its folder), "
            "which no compose service read builds or runs (the stack builds the Dockerfiles "
            "of the folders beside it, not that one); where that image runs is not in these "
            "files",
        )
        return True

    def _unplaced_run_nowhere(self, file: Path) -> bool:
        """The front is in no container at all (no image read copies it, not even in a whole
        build context, and no service mounts it or a folder holding it), while every service
        of the nearest compose files above it (its own stack) builds an image from a
        Dockerfile read here: no container of that stack runs it, and a host name it passes to
        is no service's it reaches, so it joins no launch, with a `not-followed` note on it
        (exadel-inc/CompreFace's `dev/nginx/templates/nginx.conf.template` beside
        `dev/docker-compose.yml`, whose UI image copies `ui/nginx/` instead). A service that
        pulls its image (a proxy built elsewhere, `configs:` into `image: nginx`) may run it:
        then nothing is decided here, nor where a cluster's manifest may run any image."""
        if self.kube_services or self.mounting([file]):
            return False
        if any(image.holds(file) is not None for image in self.images):
            return False
        folder = _real(file.parent)
        above = [
            os.path.dirname(_real(s.file))
            for s in self.services
            if (folder + os.sep).startswith(os.path.dirname(_real(s.file)) + os.sep)
        ]
        if not above:
            return False
        nearest = max(above, key=len)
        stack = [s for s in self.services if os.path.dirname(_real(s.file)) == nearest]
        read = {_real(image.path) for image in self.images}
        # An image copies files of its build context only: a Dockerfile not read here (its
        # folder left out) cannot hold a front outside its context.
        if not all(
            s.dockerfile is not None
            and (
                _real(s.dockerfile) in read
                or (s.context is not None and not _real(file).startswith(_real(s.context) + os.sep))
            )
            for s in stack
        ):
            return False
        note(
            "not-followed",
            Location(file),
            "not joined to a launch: no container here runs it (no image read copies it and "
            "no compose service mounts it), and every service of the compose stack around it "
            "builds an image here that does not hold it; where it runs is not in these files",
        )
        return True

    def _beside(self, file: Path) -> frozenset[Path] | None:
        """The projects of the compose files in a front's own folder, when none of their
        services mounts or builds it (its proxy image is pulled from a registry: `image:
        registry/app-nginx`): it is deployed with them, so a host name it passes to is one of
        their services, never a same-named service of a compose project elsewhere (a root
        `docker-compose.yml` beside `azure_compose_deploy/`, cohere-ai/cohere-toolkit).
        None when no compose file is there (a host's nginx, a front named alone)."""
        folder = _real(file.parent)
        beside = {s.file for s in self.services if _real(s.file.parent) == folder}
        if not beside:
            return None
        return frozenset().union(*(self.project(f) for f in beside))

    def building(self, files: Sequence[Path]) -> tuple[Service, ...]:
        """The services whose image, built here (or the Dockerfile their `image:` names, as
        their reading links it), copies one of `files` by its name or folder (`COPY conf
        /etc/nginx/conf.d/default.conf` in the proxy's Dockerfile): that front runs in their
        containers, in their compose project."""
        found = []
        for service in self.services:
            image = self.built_image(service)
            if image is not None and service.target is not None:
                image = _target_stage(image, service.target)
            if image is not None and any(
                image.holds(f, whole_context=False) is not None for f in files
            ):
                found.append(service)
        return tuple(found)

    def built_image(self, service: Service) -> Image | None:
        """The image of the run the service's Dockerfile builds; None when it has none."""
        if service.dockerfile is None:
            return None
        wanted = _real(service.dockerfile)
        return next((i for i in self.images if _real(i.path) == wanted), None)

    def _unbuilt_image(self) -> Image | None:
        """The one Dockerfile of the run that no compose service builds and that sets a
        command (what a service's `image:` runs, when the files say); None when several or
        none."""
        built = {_real(s.dockerfile) for s in self.services if s.dockerfile is not None}
        unbuilt = [
            image
            for image in self.images
            if _real(image.path) not in built and (image.entrypoint or image.cmd)
        ]
        return unbuilt[0] if len(unbuilt) == 1 else None

    def environment_of_front(self, files: Sequence[Path]) -> dict[str, str]:
        """The variables the containers that run a front (its first file) set to one value:
        the services that bind-mount it, or run the image that holds it (built here, or the
        one image a service's `image:` runs), and the `.envsh` files such an image sources
        before it renders (`nginx_envsh`). An nginx template is rendered with them where
        the container starts (envsubst; the official image's /etc/nginx/templates); a name
        two of them set differently is not known."""
        if not files:
            return {}
        first = files[0]
        running = [s for s in self.mounting([first]) if self.reads(s, first)]
        unbuilt = self._unbuilt_image()
        # The container's environment is its image's `ENV`, then the service's over it.
        image_env: dict[tuple[Path, str], dict[str, str]] = {}
        sourced: dict[tuple[Path, str], list[tuple[str, Path]]] = {}
        images: dict[tuple[Path, str], Image] = {}
        for service in self.services:
            image = self.built_image(service) if service.dockerfile is not None else unbuilt
            if image is not None and image.holds(first) is not None:
                running.append(service)
                image_env[(service.file, service.name)] = dict(image.env)
                # The `.envsh` files its entrypoint sources before it renders the templates.
                sourced[(service.file, service.name)] = image.held_under(ENTRYPOINT_DIR)
                images[(service.file, service.name)] = image
        values: dict[str, set[str]] = {}
        real = _real(first)
        for service in running:
            # The values its start script renders this template with (`export
            # API_HOST="${API_HOST:-api}"` before `envsubst`), else its `environment`.
            rendered = [
                environment
                for r in self._renderings(service)
                for path, environment in r.templates
                if path == real
            ]
            given = image_env.get((service.file, service.name), {}) | dict(service.environment)
            given |= envsh_exports(sourced.get((service.file, service.name), []), given)
            image = images.get((service.file, service.name))
            # Its own ENTRYPOINT script's exports before it renders (`entrypoint_exports`).
            given |= entrypoint_exports(image, given) if image is not None else {}
            for name, value in rendered[0] if len(rendered) == 1 else given.items():
                values.setdefault(name, set()).add(value)
        if not running:
            values = self._image_environment(first)
        return {name: next(iter(v)) for name, v in values.items() if len(v) == 1}

    def _image_environment(self, first: Path) -> dict[str, set[str]]:
        """The values each image of the run that holds the front `first` (no compose service
        running it) renders it with: its `ENV`, its `.envsh` exports, and its own
        ENTRYPOINT script's exports before it renders (`nginx_envsh.entrypoint_exports`)."""
        values: dict[str, set[str]] = {}
        for image in self.images:
            if image.holds(first, whole_context=False) is None:
                continue
            given = dict(image.env)
            given |= envsh_exports(image.held_under(ENTRYPOINT_DIR), given)
            given |= entrypoint_exports(image, given)
            for name, value in given.items():
                values.setdefault(name, set()).add(value)
        return values

    def unbuilt_image_apps(self, apps: Sequence[AppServer]) -> list[AppServer]:
        """The apps of `apps` read from the one Dockerfile of the run that no compose service
        builds and that sets a command of its own (a proxy's image, `FROM nginx` plus its
        config, sets none); [] when there are several such Dockerfiles, or none: which one a
        service's `image:` names is not in these files."""
        unbuilt = self._unbuilt_image()
        if unbuilt is None:
            return []
        path = _real(unbuilt.path)
        return [
            a
            for a in apps
            if a.container is None
            and path in {_real(p) for p in (a.file, *(at.file for at in a.launched_by))}
        ]

    def _left_out(self, file: Path) -> bool:
        """A service mounts files of `file`'s folder one by one, and not this one, and no image
        copies it by name, folder or wildcard: the stacks read deploy its siblings, and this
        file (a test's or another setup's) is none of theirs. An image that copies the whole
        build context (`COPY . /app`) holds it as it holds every file of the repository, and
        deploys it no more than the siblings the service mounts in nginx's place."""
        if any(image.holds(file, whole_context=False) is not None for image in self.images):
            return False
        folder = _real(file.parent)
        # (A mounted path the tree does not hold is a folder: Docker creates a missing bind
        # source as a directory, `./config/postgres:/docker-entrypoint-initdb.d`.)
        return any(
            os.path.dirname(_real(m)) == folder and os.path.isfile(m)
            for s in self.services
            for m in s.mounts
        )


#: The options whose unresolved value is where a server listens: a whole address, or a port.
_ADDRESS_OPTIONS = {"gunicorn": ("-b", "--bind"), "hypercorn": ("-b", "--bind")}
_PORT_OPTIONS = {"daphne": ("-p", "--port"), "uvicorn": ("--port",), "granian": ("--port",)}


def _unknown_sockets(app: AppServer) -> list[str]:
    """The addresses the app's unresolved words bind, as written (`--bind :$(_get_env_var
    "PORT")`, `-p $PORT` on every address): known only when it runs, they reach a front
    address written the same way and nothing else."""
    found = []
    for word in app.unresolved:
        option, _, value = word.value.partition(" ")
        if not value and option.startswith("-"):
            option, _, value = option.partition("=")  # `--bind=ADDR`
        if option in _ADDRESS_OPTIONS.get(app.kind, ()):
            found.append(value)
        elif option in _PORT_OPTIONS.get(app.kind, ()):
            found.append(f":{value}")
    return found


def _in_project(app: AppServer, project: frozenset[Path]) -> bool:
    box = app.container
    return box is not None and box.platform == "compose" and box.at.file in project


def _elsewhere(app: AppServer, project: frozenset[Path]) -> bool:
    """`app` runs in a compose service that is not of the compose `project`."""
    box = app.container
    return box is not None and box.platform == "compose" and box.at.file not in project


def _unbound_in_service(
    target: str,
    services: Sequence[Service],
    apps: Sequence[AppServer],
    project: frozenset[Path],
    stacks: Stacks,
) -> list[AppServer]:
    """The servers of the compose `services` that `target` names, when none of them has a
    socket known here (a bind the config computes, `bind = f"{settings.host}:{settings.port}"`
    in IBM/mcp-context-forge) and the port `target` names is the one port the image they run
    `EXPOSE`s: the name reaches that container, and its image says that port is where it
    listens. They are joined (`port_fronts.unknown_bind_joins` says so in a
    `joined-by-name` note). A server of the service on a known
    socket, an image exposing no port or several, or a pass to another port (a sidecar's in
    the same container) joins nothing: unknown, not guessed."""
    own = {s.name for s in services}
    served = [a for a in apps if _in_project(a, project) and a.container.name in own]  # type: ignore[union-attr]
    if not served or any(a.sockets for a in served):
        return []
    port = normalise(target)[1]
    if _exposed(services, stacks) != {port}:
        return []
    return served


def _exposed(services: Sequence[Service], stacks: Stacks) -> set[str]:
    """The ports the images the compose `services` build `EXPOSE`."""
    built = {_real(s.dockerfile) for s in services if s.dockerfile is not None}
    return {p for i in stacks.images if _real(i.path) in built for p in i.exposed}


def _by_name(
    target: str,
    apps: list[AppServer],
    project: frozenset[Path] | None = None,
    stacks: Stacks | None = None,
) -> list[AppServer]:
    """The app servers a host name at a port reaches: the containers that answer to that
    name, each at the app's port (another container's name resolves to that container's
    address, never to the nginx's own loopback, so what the app's bind line says about its
    host is not what decides; its port is). An app is never reached by its port alone: a
    name nothing here answers to (another setup's host, a variable the deployment sets)
    reaches no app (`unknown_host` says so).

    Within the front's compose project (`project`) the name is that project's service, or a
    network alias of one, and only its app (none when the service runs an image whose command
    is not here, or a stage that starts no server); a container of another project is never
    reached. Otherwise a compose service of that name or alias, a Kubernetes Service of that
    name (its selector and target port), or a container of that name; else the apps started
    from a folder of that name (`backend/Dockerfile` for `backend:8001`); else, only when every
    file was named on the command line and none of them says which containers run (no compose
    file, no Kubernetes Service), the apps on that port: the user put them together."""
    name = _host_name(target)
    if name is None or project == frozenset() or not _NAME.match(name):
        return []  # a front no stack read deploys, or a name only the deployment completes
    _, port = normalise(target)
    on_port = servers_on_port(port, apps)
    names = {name}
    if stacks is not None:
        answering = [s for s in stacks.services if name in (s.name, *s.aliases)]
        if project is not None:
            services = [s for s in answering if s.file in project]
            if services:
                own = {s.name for s in services}
                found = [a for a in on_port if _in_project(a, project) and a.container.name in own]  # type: ignore[union-attr]
                if not found and any(s.dockerfile is not None for s in services):
                    # The image's one EXPOSEd port decides first; with none exposed, the
                    # service's one server of unknown bind (`port_fronts.unknown_bind_joins`
                    # drops it again when the front passes to the service on several ports).
                    found = _unbound_in_service(target, services, apps, project, stacks)
                    if not found and not _exposed(services, stacks):
                        found = _unknown_bind(target, own, apps, project)
                elif not found:
                    found = _unknown_bind(target, own, apps, project)
                if found or any(s.dockerfile is not None for s in services):
                    return found
                # The service runs an image named by `image:`: the project's own only when one
                # Dockerfile here builds an image no service builds (then it is that one).
                return stacks.unbuilt_image_apps(on_port)
            on_port = [a for a in on_port if not _elsewhere(a, project)]
        kube = _KUBE_NAME.match(name)
        if kube is not None:
            through = _through_service(f"{kube[1]}:{port}", apps, stacks.kube_services)
            if through:
                return list(dict.fromkeys(app for _, app in through))
        names |= {s.name for s in answering}
    named = [a for a in on_port if a.container is not None and a.container.name in names]
    if named:
        return named
    # No compose file read names the containers: the apps started from a folder of that
    # name (`backend/Dockerfile` for `backend:8001`, compose's build-context convention).
    # A Kubernetes Service's DNS name (`backend.flathub.svc.cluster.local`) whose manifests
    # are not here names its Service by its first label: the folder of that name builds it.
    kube_name = _KUBE_NAME.match(name)
    service = kube_name[1] if kube_name is not None and kube_name[2] else name
    foldered = [
        a
        for a in on_port
        if a.container is None
        and service in {p.parent.name for p in (a.file, *(at.file for at in a.launched_by))}
    ]
    if foldered and service != name:
        _joined_by_name(target, service, foldered)
    if foldered or stacks is None or not stacks.named or stacks.services or stacks.kube_services:
        return foldered
    return on_port  # files named together, none saying which containers run: theirs


def _unknown_bind(
    target: str, own: set[str], apps: Sequence[AppServer], project: frozenset[Path]
) -> list[AppServer]:
    """The one app server the front's compose service `own` runs (in each compose file of the
    project that says), when that service runs exactly one and its bind is unknown here (gunicorn's `bind` from Python settings, an env
    var not given): the service's name is the link, its port is not checked
    (`port_fronts.unknown_bind_joins` keeps it, with a note, when the front names one port of
    that service: IBM/mcp-context-forge's nginx-tls.conf `map` to `gateway:4444`)."""

    running = [a for a in apps if _in_project(a, project) and a.container.name in own]  # type: ignore[union-attr]
    # The project's compose files may each say what the service runs (an override file's
    # `command:`): one server in each, every one of unknown bind.
    files = [a.container.at.file for a in running]  # type: ignore[union-attr]
    if not running or len(set(files)) != len(files) or any(a.sockets for a in running):
        return []
    return running


def _joined_by_name(target: str, service: str, apps: Sequence[AppServer]) -> None:
    """A `joined-by-name` note: `target`, a Kubernetes Service's DNS name no manifest here
    defines, joined to the servers started from a folder named as its Service, at its port."""

    for app in apps:
        at = app.launched_by[0] if app.launched_by else app.config_file or Location(app.file)
        note(
            "joined-by-name",
            at,
            f"{at}: joined by name and port: the front's {target!r} is the Kubernetes Service "
            f"{service!r}, whose manifests are not here; the server started from the folder "
            f"{service}/ listens on its port",
        )


#: A host name as DNS spells it: a `${HOST}` (or `$host`) left in it is not one.
_NAME = re.compile(r"\A[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\Z")
#: A Kubernetes Service's DNS name: `web`, `web.ns`, `web.ns.svc`, `web.ns.svc.cluster.local`.
_KUBE_NAME = re.compile(r"\A([a-z0-9-]+)(\.[a-z0-9-]+(\.svc(\.cluster\.local)?)?)?\Z")


def unknown_host(
    address: Setting[str],
    apps: Sequence[AppServer],
    project: frozenset[Path] | None,
    stacks: Stacks | None,
    candidates: Sequence[AppServer] = (),
) -> bool:
    """A coverage note for a front's server address whose host nothing read answers to (a
    variable set where the front starts, another setup's name) while app servers listen on its
    port: they are not joined to it by the port alone (the `candidates` a name could have
    chosen among are named). A host a compose service answers to is known when the files say
    which Dockerfile that service runs (its own notes say what it starts), and says nothing
    here; when they do not (`image: registry/x/chalice:1.0`) and servers on that port that no
    compose service runs were read, the note says so and names them (openreplay's
    `proxy_pass http://$upstream_chalice:8000` to the `chalice-openreplay` service). True
    when the note says the host is a name or a variable nothing read answers to (not another
    machine's literal address): the pass `port_fronts` may join by its port alone."""

    host, port = normalise(address.value)
    name = _host_name(address.value)
    remote = _remote_literal(host)
    if host == "unix" or not port.isdigit() or (name is None and "$" not in host and not remote):
        return False
    answering = [
        s
        for s in (stacks.services if stacks is not None else ())
        if name is not None
        and name in (s.name, *s.aliases)
        and (project is None or s.file in project)
    ]
    if any(s.dockerfile is not None for s in answering):
        return False
    on_port = servers_on_port(port, apps)
    if not on_port:
        return False
    if answering:
        # Only when an image read here, which no compose service runs, could be that service's.
        unplaced = [a for a in on_port if a.container is None]
        if unplaced:
            _image_unknown(address, answering[0], port, unplaced)
        return False
    why = (
        "a literal address no container or service read here has"
        if remote
        else "a value set where the front starts, not in these files"
        if "$" in host or name is None or not _NAME.match(name)
        else "no compose service, network alias or Kubernetes Service read here answers to it"
    )
    note(
        "not-followed",
        address.at,
        f"{address.at}: not followed: front host unknown: {address.value!r} ({why}); the app "
        f"servers on port {port} here are not joined to it by the port alone"
        + (f" (candidates: {', '.join(starter(a) for a in candidates)})" if candidates else ""),
    )
    return not remote and not candidates


#: A uwsgi_pass's (or scgi_pass's) target that names an upstream block or a host, with no
#: port or dot: what it reaches is an app server (a proxy_pass's may be any HTTP service).
_BARE_NAME = re.compile(r"\A([A-Za-z_][A-Za-z0-9_-]*)\Z")


def _no_upstream(
    server: Setting[str], project: frozenset[Path] | None, stacks: Stacks | None
) -> None:
    """A `not-followed` note for a pass to a bare name (`uwsgi_pass django;`) that no
    `upstream` block of the config read with it defines and no compose service answers to:
    the block is in a file nginx loads beside it that nothing here includes (a conf.d
    neighbour), or the name is a host set where the front runs. Never silent."""

    found = _BARE_NAME.match(server.value)
    if found is None:
        return
    name = found.group(1)
    services = stacks.services if stacks is not None else ()
    if any(
        name in (s.name, *s.aliases) and (project is None or s.file in project) for s in services
    ):
        return
    note(
        "not-followed",
        server.at,
        f"{server.at}: not followed: front host unknown: {server.value!r} (no `upstream "
        f"{name}` in the config read with this file, and no compose service of that name): "
        "the block may be in a file nginx loads beside it that no file here includes; the app "
        "servers here are not joined to it",
    )


def _image_unknown(
    address: Setting[str], service: Service, port: str, candidates: Sequence[AppServer]
) -> None:
    """The `not-followed` note for a front's host that is a compose service whose image no
    Dockerfile read here is known to build."""

    note(
        "not-followed",
        address.at,
        f"{address.at}: not followed: {address.value!r} is the compose service "
        f"{service.name!r} ({service.file.name}), whose image no Dockerfile read here is known "
        f"to build; the app servers on port {port} here are not joined to it by the port alone"
        + (f" (candidates: {', '.join(starter(a) for a in candidates)})" if candidates else ""),
    )


def starter(app: AppServer) -> str:
    """Where a candidate is started: its container's line, else its first launch step."""
    if app.container is not None:
        what = "service" if app.container.platform == "compose" else "container"
        return f"{app.container.platform} {what} {app.container.name} ({app.container.at})"
    return str(app.launched_by[0]) if app.launched_by else str(app.file)


def _reached(
    address: str,
    apps: list[AppServer],
    project: frozenset[Path] | None,
    stacks: Stacks | None,
    front: Sequence[Path] = (),
) -> list[AppServer]:
    """The apps an address reaches: a host name (another container's) by name within the
    front's project (`_by_name`); an address as the kernel routes it (a socket file only
    where the front's files, `front`, are)."""
    if _host_name(address) is not None:
        return _by_name(address, apps, project, stacks)
    reached = [
        app
        for app in apps
        if any(_serves(s.value, address) for s in app.sockets)
        or (
            stacks is not None
            and "$" in address
            and any(_serves(s, address) for s in stacks.installed_sockets(app))
        )
    ]
    if project and normalise(address)[0] == "unix":
        # A socket file crosses containers on a volume of the front's own compose project
        # only: a service of another project (gnosis' docker-compose.dev.yml, beside the
        # docker-compose.yml whose nginx shares `nginx-shared:/nginx`) has volumes of its own.
        reached = [app for app in reached if not _elsewhere(app, project)]
        if stacks is not None and stacks.mounting(front[:1], folders=False):
            # A config a compose service bind-mounts is there only: a platform's container
            # (a pod's, which runs the same image) has no such file, nor that volume.
            reached = [
                a for a in reached if a.container is None or a.container.platform == "compose"
            ]
    return reached


def _render(text: str, environment: Mapping[str, str]) -> str:
    """`text` as envsubst renders it with `environment`; a name not in it is left as written
    (then the address reaches no app: unknown, not guessed). A bare `$name` is rendered only
    where the environment defines it: nginx's own variables are left to nginx, as the
    official image's template script and `envsubst 'FORMAT'` leave every name not listed."""

    def one(match: re.Match[str]) -> str:
        if match["bare"] is not None and nginx_variable(match["bare"]):
            return match[0]
        return environment.get(match["braced"] or match["bare"], match[0])

    return ENVSUBST_VARIABLE.sub(one, text)


def link(
    nginx_configs: list[NginxConfig],
    apps: list[AppServer],
    stacks: Stacks | None = None,
    unjoined: list[Unjoined] | None = None,
) -> list[Link]:
    """Every (nginx pass, upstream server, app server) triple whose addresses meet: the same
    address as the kernel routes it, or a host name (another container's, of the nginx's own
    compose project when `stacks` says which) at the app's port; a pass to a host nothing
    read answers to is held in `unjoined` (`port_fronts`) when given."""
    links: list[Link] = []
    for config in _whole_configs(nginx_configs, snippets_only=True):
        project = stacks.of_front(config.files or (config.file,)) if stacks else None
        rendered: dict[str, str] | None = None
        passes = (*config.passes, *config.templated_passes)
        if stacks is not None:  # a front rendered once per pass of a loop: each pass's
            passes = stacks.each_pass_target(config.files or (config.file,), passes)
        for passing in passes:
            if "$" in passing.target:
                # `proxy_pass http://$BACKEND;` in a template: the address it renders to.
                if stacks is None:
                    continue
                if rendered is None:
                    rendered = stacks.front_environment(config.files or (config.file,))
                passing = replace(passing, target=_render(passing.target, rendered))
                if "$" in passing.target:
                    # A name the front's containers do not set: unknown. One nginx computes
                    # (Lua, a map) reaches the one server the image running the front starts.
                    if passing.computed:
                        links.extend(_by_image(config, passing, apps, stacks))
                    elif project != frozenset():
                        # `proxy_pass http://${API_HOST}:8000;` that nothing here renders:
                        # the unknown host's note, and its port's one server (`port_fronts`).
                        unrendered = Setting(passing.target, passing.at)
                        speaking = _speaking(passing, apps)
                        alone = (None, unjoined)
                        _hold_unknown(config, passing, unrendered, speaking, project, stacks, alone)
                    continue
            upstream = _sibling_upstream(config, passing.target, nginx_configs)
            servers = upstream.servers if upstream else (Setting(passing.target, passing.at),)
            if stacks is not None:
                servers = stacks.each_pass(config.files or (config.file,), servers)
            for server in servers:
                if stacks is not None:
                    server = stacks.filled(config.files or (config.file,), server)
                if "$" in server.value and stacks is not None:
                    # `server ${BACKEND};` in a template envsubst renders where nginx starts.
                    if rendered is None:
                        rendered = stacks.front_environment(config.files or (config.file,))
                    server = replace(server, value=_render(server.value, rendered))
                # uwsgi_pass speaks the uwsgi protocol: only uWSGI answers it, or a gunicorn
                # set to speak it (`protocol = "uwsgi"`, gunicorn 25+); another gunicorn on the
                # same address is another deployment's, as in `gen all`'s alternatives.
                speaking = _speaking(passing, apps)
                if passing.annotations or (
                    config.in_cluster and not server.value.startswith("unix:")
                ):
                    # An Ingress (or a pod's nginx): its backend is a Service, reached as the
                    # cluster routes it; the Service's port line is the server it passes to.
                    # (A pod's nginx passing to a unix socket reaches the server that makes
                    # it, on a volume the pod's containers share: by its path, below.)
                    services = stacks.kube_services if stacks else ()
                    through = _through_service(
                        server.value, speaking, services, ingress=bool(passing.annotations)
                    )
                    for port, app in through:
                        links.append(Link(config, passing, upstream, port, app))
                    continue
                run = (apps, nginx_configs)
                held = (upstream, unjoined)
                reached = _pass_reaches(
                    config, passing, server, speaking, project, stacks, run, held
                )
                if not reached and upstream is None and apps:
                    _no_upstream(server, project, stacks)
                for app in reached:
                    if passing.protocol == "http" and not _answers_http(app, server.value):
                        continue
                    links.append(Link(config, passing, upstream, server, app))
    return links


def _same_socket_name(
    config: NginxConfig, target: str, apps: Sequence[AppServer], project: frozenset[Path] | None
) -> list[AppServer]:
    """The servers binding a socket file of `target`'s name at a path check cannot place
    against the front's: one holding a variable, or one in a container that may share the
    file on a volume mounted elsewhere (a compose service of the front's own project, a
    container of the front's pod). A literal path of a server beside the front is another
    file: it is not one of them."""
    path = normalise(target)[1]
    name = os.path.basename(path)
    found: list[AppServer] = []
    for app in apps:
        box = app.container
        shared = box is not None and (
            (project is not None and _in_project(app, project))
            or (config.pod is not None and box.pod == config.pod)
        )
        for socket in app.sockets:
            host, bound = normalise(socket.value)
            if host != "unix" or bound == path or os.path.basename(bound) != name:
                continue
            if "$" in bound or shared:
                found.append(app)
                break
    return found


def _speaking(passing: PassTarget, apps: Sequence[AppServer]) -> list[AppServer]:
    """The apps that speak `passing`'s protocol."""
    return [a for a in apps if passing.protocol != "uwsgi" or a.kind == "uwsgi" or a.uwsgi_protocol]


def _pass_reaches(
    config: NginxConfig,
    passing: PassTarget,
    server: Setting[str],
    speaking: list[AppServer],
    project: frozenset[Path] | None,
    stacks: Stacks | None,
    run: tuple[list[AppServer], list[NginxConfig]],
    held: tuple[Upstream | None, list[Unjoined] | None] = (None, None),
) -> list[AppServer]:
    """The app servers one pass's server line reaches outside a cluster: by address or name,
    within the front's own pod or compose project, else by the front's environment or image;
    none reached is said in an `unknown_host` note, held in `held`'s list (with the pass's
    upstream) when its host is a name or variable nothing read answers to."""
    apps, nginx_configs = run
    front = config.files or (config.file,)
    nearest = _nearest_project(server, apps, stacks, front) if project is None else None
    if nearest == frozenset():
        return []
    reached = _reached(server.value, speaking, project, stacks, front)
    if nearest is not None and stacks is not None:
        reached = [a for a in reached if _of_project(a, stacks) in (None, nearest)]
    if config.pod is not None:
        # A pod's nginx reaches a socket file of its own pod's containers only (a
        # server read alone, whose container is not known, is not ruled out).
        reached = [a for a in reached if a.container is None or a.container.pod == config.pod]
    if stacks is not None:
        reached = [a for a in reached if not stacks.overlaid_away(front, a)]
    candidates: list[AppServer] = []
    if not reached and project != frozenset() and "$" in server.value:
        reached, candidates = _named(server, passing.target, speaking)
    if not reached and project != frozenset():
        reached = _remote_of_environment(config, server, speaking) or (
            _unbound_by_image(config, passing, server, apps, stacks, nginx_configs)
        )
    if not reached and project is None:
        reached = _same_placeholder(server, speaking)
    if not reached and project is None:
        reached = _same_template_value(config, passing, server, speaking, nginx_configs)
    if not reached and project and stacks is not None:
        _port_missed(server, project, stacks, apps)
    if not reached and project is None and config.pod is None:
        _socket_missed(server, apps)
        _tcp_missed(server, held[0], apps)
    if not reached and project != frozenset():
        _hold_unknown(config, passing, server, speaking, project, stacks, held, candidates)
    return reached


def _of_project(app: AppServer, stacks: Stacks) -> frozenset[Path] | None:
    """The compose project `app` runs in; None outside compose."""
    box = app.container
    if box is None or box.platform != "compose":
        return None
    return stacks.project(box.at.file)


def _nearest_project(
    server: Setting[str], apps: list[AppServer], stacks: Stacks | None, front: Sequence[Path]
) -> frozenset[Path] | None:
    """For a host name from a front no compose project places (no service mounts or builds
    it, none beside it) that services of several compose projects running apart answer to
    (`docker-compose.full.yml`'s uWSGI `web-api`, `docker-compose.e2e.yml`'s gunicorn one):
    the project whose compose file sits in the deepest folder holding the front (dev/'s for
    dev/nginx/site.conf), the front's nearest; with no single nearest one, empty, after a
    `not-followed` note naming the candidates: Docker's DNS answers the names of the front's
    own project only, and nothing says which that is, so none is joined (never a silent
    pick). None when the name is one project's or none's. Seen in
    cernanalysispreservation/analysispreservation.cern.ch."""
    name = _host_name(server.value)
    if stacks is None or name is None or not front:
        return None
    reached = _reached(server.value, apps, None, stacks, front)
    boxes = [a for a in reached if _of_project(a, stacks) is not None]
    projects = {_of_project(a, stacks) for a in boxes} - {None}
    if len(projects) < 2:
        return None
    where = os.path.realpath(front[0])

    def depth(project: frozenset[Path]) -> int:
        holding = [
            len(Path(folder).parts)
            for folder in (os.path.realpath(f.parent) for f in project)
            if where.startswith(folder + os.sep)
        ]
        return max(holding, default=-1)

    depths = {p: depth(p) for p in projects if p is not None}
    deepest = max(depths.values())
    nearest = [p for p, d in depths.items() if d == deepest]
    if deepest >= 0 and len(nearest) == 1:
        return nearest[0]
    files = sorted({min(p).name for p in depths})
    note(
        "not-followed",
        server.at,
        f"{server.at}: not followed: {server.value!r} names compose service {name!r} of "
        f"{len(projects)} compose projects that run apart ({', '.join(files)}), and no file "
        "places this front in one of them (a service mounting it, an image copying it): not "
        f"joined (candidates: {', '.join(starter(a) for a in boxes)})",
    )
    return frozenset()


def _port_missed(
    server: Setting[str],
    project: frozenset[Path],
    stacks: Stacks,
    apps: Sequence[AppServer],
    refused: str = "nginx: 502, 'connect() failed (111: Connection refused)'",
) -> None:
    """A `FRONT_PORT_MISSED` note when the pass names a compose service of the front's project
    by name, at a literal port (or its scheme's default, `http://sam` at 80), and that
    service's servers, every bind of theirs literal and known and each alone in its container
    (`bound_ports`), bind other ports: the name reaches the container, the port nothing in it.
    Not for a development launch (named for one, or a reloader)."""
    name = _host_name(server.value)
    if name is None or "$" in server.value:
        return
    port = normalise(server.value)[1]
    own = {s.name for s in stacks.services if s.file in project and name in (s.name, *s.aliases)}
    served = [a for a in apps if _in_project(a, project) and a.container.name in own]  # type: ignore[union-attr]
    binds = [known_ports(a) for a in served]
    if any(development_reason(a, apps) is not None for a in served):
        return
    if not served or any(b is None or not alone(a) for a, b in zip(served, binds, strict=True)):
        return
    bound = sorted(set().union(*(b for b in binds if b is not None)))
    if int(port) in bound:
        return
    app = served[0]
    socket = app.sockets[0]
    note(
        FRONT_PORT_MISSED,
        server.at,
        f"{server.value} reaches compose service {app.container.name} at port {port}, but "  # type: ignore[union-attr]
        f"{app.kind} there listens on {', '.join(s.value for s in app.sockets)} ({socket.at}) "
        "and nothing else read runs in that container: every request through this pass is "
        f"refused ({refused})",
        f"pass to {name}:{bound[0]} (the port {app.kind} binds), or bind {app.kind} to "
        f":{port} at {socket.at}",
    )


def _socket_missed(
    server: Setting[str],
    apps: Sequence[AppServer],
    refused: str = "nginx: 502, 'connect() to unix:... failed (2: No such file or directory)'",
) -> None:
    """A `FRONT_PORT_MISSED` note when a front run on the host (no container, no pod) passes
    to a literal unix socket no server read binds, and the one host server that file is named
    for (`/run/daphne.sock`: daphne, or the unit `daphne.service` that starts it) binds TCP
    ports alone, every one literal and known: the socket file is never made, every request
    through the pass fails. Nothing when any server's bind is a variable or a word not read
    (it may be that file), or for a development launch."""
    host, path = normalise(server.value)
    if host != "unix" or "$" in path or not path.startswith("/"):
        return
    stem = os.path.basename(path).rsplit(".", 1)[0]
    if not _binds_known(apps):
        return
    app = _host_server_named(stem, apps)
    bound = known_ports(app) if app is not None else None
    if app is None or not bound:
        return
    socket = app.sockets[0]
    note(
        FRONT_PORT_MISSED,
        server.at,
        f"this pass is to the unix socket {path}, but {app.kind} ({starter(app)}) "
        f"listens on TCP {', '.join(s.value for s in app.sockets)} ({socket.at}) and no "
        f"server read binds that file: every request through this pass fails ({refused})",
        f"pass to 127.0.0.1:{min(bound)} (the port {app.kind} binds), or bind {app.kind} to "
        f"unix:{path} at {socket.at}",
    )


def _host_server_named(name: str, apps: Sequence[AppServer]) -> AppServer | None:
    """The one server run on the host (no container, no pod) a socket file or an `upstream`
    block is named for: its program (`daphne`) or the file that starts it (`daphne.service`);
    None when none or several are, or when it is a development launch."""
    named = [a for a in apps if a.container is None and name in (a.kind, a.file.stem)]
    if len(named) != 1 or development_reason(named[0], apps) is not None:
        return None
    return named[0]


def _binds_known(apps: Sequence[AppServer]) -> bool:
    """Every server read binds only literal TCP ports or only literal socket files, each
    written: none binds through a variable, a default, a config or a word not read, which
    may be the very address a front passes to."""
    return all(known_ports(a) is not None or known_socket_files(a) is not None for a in apps)


def _tcp_missed(server: Setting[str], upstream: Upstream | None, apps: Sequence[AppServer]) -> None:
    """A `FRONT_PORT_MISSED` note when a host front's `upstream` block, named for one host
    server (`upstream daphne`: daphne, or the unit `daphne.service` that starts it), passes to
    a loopback port no server read binds while that server binds literal unix sockets only:
    the port has no listener, every request through the pass is refused. Nothing when any
    server's bind is a variable or a word not read, or for a development launch."""
    host, port = normalise(server.value)
    if upstream is None or not loopback(host) or not port.isdigit():
        return
    if not _binds_known(apps) or servers_on_port(port, apps):
        return
    app = _host_server_named(upstream.name, apps)
    files = known_socket_files(app) if app is not None else None
    if app is None or not files:
        return
    socket = app.sockets[0]
    note(
        FRONT_PORT_MISSED,
        server.at,
        f"upstream {upstream.name} passes to {server.value}, but {app.kind} "
        f"({starter(app)}) listens only on the unix socket {', '.join(sorted(files))} "
        f"({socket.at}) and no server read binds that port: every request through this pass "
        "is refused (nginx: 502, 'connect() failed (111: Connection refused)')",
        f"pass to unix:{min(files)} (the socket {app.kind} binds), or bind {app.kind} to "
        f"127.0.0.1:{port} at {socket.at}",
    )


def _same_placeholder(server: Setting[str], speaking: Sequence[AppServer]) -> list[AppServer]:
    """The one server no container runs whose port was left out as the very placeholder
    token the pass's loopback port is (nginx's `proxy_pass http://localhost:__PORT__/` and
    the unit's `Environment=GRANIAN_PORT=__PORT__`: YunoHost's installer fills both with the
    same port), with a `joined-by-name` note; none when the port is no such token, the host
    is not the loopback, or two servers have it (which one is not in the files)."""

    host, port = normalise(server.value)
    if not _LOOPBACK.match(host) or placeholder(port) != port:
        return []
    same = [
        a
        for a in speaking
        if a.container is None and any(placeholder_port(s.value) == port for s in a.unresolved)
    ]
    if len(same) != 1:
        return []
    note(
        "joined-by-name",
        server.at,
        f"{server.at}: joined to {starter(same[0])} by name: the port is the installer's "
        f"{port} on both sides (the front's loopback and the server's bind), filled with the "
        "same value when it installs them",
    )
    return same


#: A pass's server written as one template value: a unix socket's path or the whole address.
_TEMPLATE_SERVER = re.compile(r"(?:unix:)?(?P<value>\$\{\w+\})")


def _same_template_value(
    config: NginxConfig,
    passing: PassTarget,
    server: Setting[str],
    speaking: Sequence[AppServer],
    nginx_configs: Sequence[NginxConfig],
) -> list[AppServer]:
    """The one host server whose socket is written as the very template value the pass's
    server is (nginx's `server unix:{{ uwsgi_socket }};` and uWSGI's `socket = {{
    uwsgi_socket }}`, both templates read as their kind: the deploy tool fills both with the
    one value it is given), with a `joined-by-name` note; none when that value is not the
    whole socket, or when another server or another front is written with it (which is which
    is then not in the files)."""
    # The server's side is a template read as its kind (`uwsgi._template_sockets`); nginx
    # has no `${name}` of its own, so the front's is a template's value too.
    found = _TEMPLATE_SERVER.fullmatch(server.value)
    if found is None:
        return []
    value = found["value"]
    unix = server.value.startswith("unix:")
    protocols = ("socket",) if passing.protocol == "uwsgi" else ("http-socket", "http")
    same = [
        a
        for a in speaking
        if a.container is None
        and any(v.value == value and (k in protocols or not unix) for k, v in a.template_sockets)
    ]
    fronts = {
        id(c)
        for c in nginx_configs
        if any(value in s.value for u in c.upstreams.values() for s in u.servers)
        or any(value in p.target for p in (*c.passes, *c.templated_passes))
    }
    others = {id(config)} | fronts
    if len(same) != 1 or len(others) != 1:
        return []
    note(
        "joined-by-name",
        server.at,
        f"{server.at}: joined to {starter(same[0])} by name: its socket is the template value "
        f"{value} on both sides (the front's pass and the server's socket), filled with the "
        "same value where they are installed",
    )
    return same


def _hold_unknown(
    config: NginxConfig,
    passing: PassTarget,
    server: Setting[str],
    speaking: Sequence[AppServer],
    project: frozenset[Path] | None,
    stacks: Stacks | None,
    held: tuple[Upstream | None, list[Unjoined] | None],
    candidates: Sequence[AppServer] = (),
) -> None:
    """`unknown_host`'s note for a pass that reaches no app, held in `held`'s list when its
    host is a name or variable nothing read answers to (`port_fronts` may join it)."""

    upstream, unjoined = held
    if normalise(server.value)[0] == "unix":
        if unjoined is not None:
            named = _same_socket_name(config, server.value, speaking, project)
            unjoined.append(Unjoined(config, passing, upstream, server, tuple(named), ()))
        return
    with collect_notes() as said:
        unknown = unknown_host(server, speaking, project, stacks, candidates)
    if unknown and unjoined is not None and project is None:
        # Only a front no compose project places: in one, Docker's DNS answers the
        # project's own names alone, so a name none of them is reaches no app of it.
        own = [a for a in speaking if passing.protocol != "http" or _answers_http(a, server.value)]
        unjoined.append(Unjoined(config, passing, upstream, server, tuple(own), tuple(said)))
    else:
        for said_note in said:
            note(said_note.kind, said_note.at, said_note.message, said_note.fix)


def _sibling_upstream(
    config: NginxConfig, name: str, configs: Sequence[NginxConfig]
) -> Upstream | None:
    """The config's own `upstream NAME` block, else the one that the one other file of the
    same folder and suffix defines: nginx includes a folder's files by one glob (`include
    /etc/nginx/conf.d/*.conf;`), so they are one http context and an upstream in
    upstream.conf serves a `uwsgi_pass NAME` in site.conf (certego/BuffaLogs). Only site files
    are so: not nginx's own config (an `http` block) nor a snippet of locations, whose context
    is the file including it. Two files defining it are alternatives (nginx refuses a
    duplicate upstream): none then."""
    if name in config.upstreams or config.snippet or config.main:
        return config.upstreams.get(name)
    first = (config.files or (config.file,))[0]
    found = [
        c.upstreams[name]
        for c in configs
        if name in c.upstreams
        and not (c.main or c.snippet)
        and c.file != first
        and c.file.parent == first.parent
        and c.file.suffix == first.suffix
    ]
    return found[0] if len(found) == 1 else None


def _by_image(
    config: NginxConfig, passing: PassTarget, apps: Sequence[AppServer], stacks: Stacks
) -> list[Link]:
    """The link of a pass whose address is not known here to the one server the image
    holding its config starts (`image_fronts`), if the files say which."""
    from servertune.check.image_fronts import same_image_server

    app = same_image_server(config, passing, apps, stacks.images)
    server = Setting(passing.target, passing.at)
    return [] if app is None else [Link(config, passing, None, server, app)]


def _on_loopback(target: str) -> bool:
    """`127.0.0.1:8090`, `localhost:8090`: an address of the nginx's own machine."""
    return bool(_LOOPBACK.match(normalise(target)[0]))


def _unbound_by_image(
    config: NginxConfig,
    passing: PassTarget,
    server: Setting[str],
    apps: Sequence[AppServer],
    stacks: Stacks | None,
    configs: Sequence[NginxConfig],
) -> list[AppServer]:
    """The one server of the image holding the front whose socket is not known here, which
    the front's loopback address reaches (`image_fronts.same_image_unbound`)."""
    from servertune.check.image_fronts import same_image_unbound

    if stacks is None or not _on_loopback(server.value):
        return []
    including = [c for c in configs if c.file != config.file and config.file in c.files]
    app = same_image_unbound(config, passing, server.value, apps, stacks.images, including)
    return [] if app is None else [app]


def _remote_of_environment(
    config: NginxConfig, server: Setting[str], apps: Sequence[AppServer]
) -> list[AppServer]:
    """The servers bound to every address on the port of `server`, another machine's literal
    address, that the files of the front's own deployment environment start
    (`environments`: `nginx/production/site` passing to 10.0.3.11:5050, gunicorn on
    0.0.0.0:5050 under `supervisor/production/`), each with a `joined-by-name` note: which
    machines run them is not in the files; that the environment's app hosts do is what the
    layout says."""
    from servertune.check.environments import same_environment

    host, port = normalise(server.value)
    if not _remote_literal(host):
        return []
    first = (config.files or (config.file,))[0]
    found = [
        a
        for a in apps
        if any(normalise(s.value) in ((w, port) for w in _WILDCARDS) for s in a.sockets)
        and same_environment(first, a)
    ]
    for app in found:
        note(
            "joined-by-name",
            server.at,
            f"{server.at}: joined by environment and port: {server.value!r} is another "
            f"machine's address; the server started at {starter(app)}, of the same "
            f"environment's folder, listens on every address of port {port} (the "
            "environment's app hosts run it)",
        )
    return found


def _named(
    server: Setting[str], upstream: str, apps: Sequence[AppServer]
) -> tuple[list[AppServer], list[AppServer]]:
    """([the one production starter on the server's port that the upstream's name or the
    host's variable names (`front_names`)], []); else ([], the candidates, for the
    not-followed note)."""
    from servertune.check.front_names import named_starters

    _, port = normalise(server.value)
    on_port = servers_on_port(port, apps)
    variables = [m["braced"] or m["bare"] for m in ENVSUBST_VARIABLE.finditer(server.value)]
    found, production = named_starters([upstream, *variables], on_port)
    return (found, []) if len(found) == 1 else ([], found or production)


def _answers_http(app: AppServer, target: str) -> bool:
    """Whether the app answers HTTP where `target` reaches it: not a uWSGI whose sockets
    there all speak the uwsgi protocol (`socket = :8001` answers only `uwsgi_pass`; an HTTP
    front to it is another deployment's, or a 502)."""
    if not app.uwsgi_protocol:
        return True
    port = normalise(target)[1]
    named = _host_name(target) is not None
    reached = [
        s.value
        for s in app.sockets
        if _serves(s.value, target) or (named and normalise(s.value)[1] == port)
    ]
    return not reached or any(value not in app.uwsgi_protocol for value in reached)


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


def _whole_configs(
    fronted: Sequence[NginxConfig], *, snippets_only: bool = False
) -> list[NginxConfig]:
    """The configs nginx runs: a site file that another of `fronted` includes (`include
    /etc/nginx/conf.d/*.conf;` over the file its image copies there) is served as part of that
    config, under its http block's settings, not also alone with nginx's defaults
    (`snippets_only`: only a file of locations, `NginxConfig.snippet`, is left out so)."""
    return [
        n
        for n in fronted
        if (snippets_only and not n.snippet)
        or not any(other.file != n.file and n.file in other.files for other in fronted)
    ]


#: What a proxy answers when its server's port refuses the connection.
_REFUSED = {
    "haproxy": "HAProxy marks the server DOWN and answers 503",
    "caddy": "Caddy: 502, 'dial ...: connect: connection refused' or 'no such file'",
    "traefik": "Traefik: 502 Bad Gateway",
    "apache": "Apache: 503, 'AH00957: ... attempt to connect to ... failed'",
}


def link_balancers(
    balancers: list[Balancer],
    nginx_configs: list[NginxConfig],
    apps: list[AppServer],
    stacks: Stacks | None = None,
    held: list[HeldBalancer] | None = None,
) -> list[BalancerLink]:
    """Every (balancer, server, nginx or app server) whose addresses meet (or a host name,
    another container's, at the app's port); nginx first: an address nginx listens on is
    nginx's even when an app server there would also match. A server whose host nothing read
    answers to is held in `held` (`port_fronts`) when given, as `link` holds a pass."""
    links: list[BalancerLink] = []
    for balancer in balancers:
        limits = balancer.maxconns or (None,) * len(balancer.servers)
        pools = balancer.pools or (None,) * len(balancer.servers)
        project = stacks.of_front((balancer.file,)) if stacks else None
        for server, maxconn, pool in zip(balancer.servers, limits, pools, strict=True):
            fronted = _whole_configs(
                [n for n in nginx_configs if any(_serves(a.value, server.value) for a in n.listens)]
            )
            name = _host_name(server.value)
            if stacks is not None and name is not None:
                # `nginx:80`: the nginx configs the service of that name mounts, when some are
                # (a config in the same folder that no service mounts is another setup's).
                mounted = [
                    n for n in fronted if any(s.name == name for s in stacks.mounting([n.file]))
                ]
                fronted = mounted or fronted
            links.extend(BalancerLink(balancer, server, nginx=n) for n in fronted)
            if fronted:
                continue
            # `server web1 web:8000` in a compose file's HAProxy: another container's name.
            reached = _reached(server.value, apps, project, stacks)
            if not reached and project and stacks is not None:
                _port_missed(server, project, stacks, apps, _REFUSED[balancer.kind])
            if not reached and project is None:
                _socket_missed(server, apps, _REFUSED[balancer.kind])
            if not reached and project != frozenset():
                at = BalancerLink(balancer, server, maxconn=maxconn, pool=pool)
                _unknown_balancer_host(at, apps, project, stacks, held)
            for app in reached:
                if not _answers_http(app, server.value):
                    continue
                if stacks is not None and stacks.labelled_away(balancer.file, app):
                    continue
                links.append(BalancerLink(balancer, server, app=app, maxconn=maxconn, pool=pool))
    return links


def _unknown_balancer_host(
    at: BalancerLink,
    apps: Sequence[AppServer],
    project: frozenset[Path] | None,
    stacks: Stacks | None,
    held: list[HeldBalancer] | None,
) -> None:
    """`unknown_host`'s note for a balancer's server that reaches no app, held in `held` when
    its host is a name or variable nothing read answers to and no compose project places the
    balancer (in one, Docker's DNS answers the project's own names alone)."""

    with collect_notes() as said:
        unknown = unknown_host(at.server, apps, project, stacks)
    if unknown and held is not None and project is None:
        speaking = tuple(a for a in apps if _answers_http(a, at.server.value))
        held.append(
            HeldBalancer(at.balancer, at.server, at.maxconn, at.pool, speaking, tuple(said))
        )
        return
    for said_note in said:
        note(said_note.kind, said_note.at, said_note.message, said_note.fix)


def _through_service(
    target: str,
    apps: Sequence[AppServer],
    services: Sequence[KubeService],
    *,
    ingress: bool = False,
) -> list[tuple[Setting[str], AppServer]]:
    """The app servers an Ingress backend `service:port` reaches, each with the Service port
    it goes through (`name:port` at its entry): the Service of that name, the port of that
    number or name, its targetPort in the pods its selector matches, the container listening
    there. [] when no Service of that name was read.

    ingress-nginx (`ingress`) takes the backend's port as the Service port's number, name or
    targetPort, the first that matches (its controller's serviceEndpoints), so an Ingress
    naming the pods' port 8000 of a Service `port: 80, targetPort: 8000` reaches them
    (kernelci-api's kube/aks); a name the cluster's DNS resolves is routed by port number or
    name only."""
    name, _, port = target.rpartition(":")
    found: list[tuple[Setting[str], AppServer]] = []
    for service in services:
        if service.name != name or not service.selector:
            continue
        for entry in service.ports:
            number, port_name, target_port = entry.value
            if port not in (number, port_name, *((target_port,) if ingress else ())):
                continue
            for app in apps:
                box = app.container
                if box is None or box.platform != "kubernetes":
                    continue
                labels = dict(box.labels)
                if any(labels.get(k) != v for k, v in service.selector):
                    continue
                listening = dict(box.named_ports).get(target_port, target_port)
                if any(normalise(s.value)[1] == str(listening) for s in app.sockets) and all(
                    app is not other for _, other in found
                ):
                    found.append((Setting(f"{name}:{number}", entry.at), app))
    return found


def _target_stage(image: Image, target: str) -> Image:
    """The stage of `image`'s Dockerfile a service's `build.target` builds: what that
    container holds is its COPYs, not the final stage's (xerrors/Yuxi-Know: the dev compose
    file's `web` builds the `development` stage, not the `production` one that copies
    nginx's config)."""
    from servertune.check.dockerfile import read_image
    from servertune.check.source import read_text

    # Asked once per service for every front file looked for in a build: read once a run.
    return memo.recall(
        memo.run_table("target stages"),
        (image.path, image.context, target),
        lambda: read_image(image.path, read_text(image.path), image.context, target),
    )
