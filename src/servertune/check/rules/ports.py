"""A published port or a front that reaches no port the server listens on: compose's `ports:`
publishes container ports, and a request to one where nothing in the container listens is
refused (Docker's proxy accepts, then resets it), whatever the server's own settings."""

from __future__ import annotations

import re
from collections.abc import Iterator

from servertune.check.chain import loopback, normalise
from servertune.check.model import AppServer, CheckInputError, Container, Finding, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.source import read_text

_COMPOSE_PORTS = "https://docs.docker.com/reference/compose-file/services/#ports"
_DOCKER_PUBLISH = "https://docs.docker.com/engine/network/port-publishing/"

#: Programs a script may start beside the server, listening on a port of the container that
#: check does not read (a front, a process manager's other programs, a port forwarder).
_OTHER_LISTENERS = re.compile(
    r"\b(nginx|openresty|caddy|haproxy|traefik|envoy|socat|apache2|httpd|supervisord|honcho|"
    r"circusd|s6-svscan|runsvdir|node|npm|java)\b"
)


def _known_ports(app: AppServer) -> set[int] | None:
    """The TCP ports the server binds, every one literal and written (no default a variable
    could change, no unix socket, no word left to the running container); None otherwise."""
    if (
        not app.sockets
        or app.unresolved
        or app.unexpanded
        or app.emptied
        or app.missing_config is not None
        or app.unknown
        or app.unknown_settings
        or app.started_with is not None
        or app.supervised is not None
        or app.front_stops_with is not None
        or app.backgrounded is not None
        or app.reloads is not None  # a developer's run, which may publish any port
    ):
        return None
    ports: set[int] = set()
    for socket in app.sockets:
        host, port = normalise(socket.value)
        if socket.default or host == "unix" or "$" in socket.value or not port.isdigit():
            return None
        ports.add(int(port))
    return ports


def _alone(app: AppServer) -> bool:
    """Nothing else read as the container's command: a script that starts the server names no
    other program that may listen beside it."""
    if app.file.name.startswith(("Dockerfile", "Containerfile")) or app.file.suffix in (
        ".yml",
        ".yaml",
    ):
        return True
    try:
        text = read_text(app.file)
    except CheckInputError:
        return False
    return not _OTHER_LISTENERS.search(text)


@check_rule(
    "front-port-mismatch",
    Severity.warning,
    "a published port reaches no port the server in the container listens on",
    f"{_COMPOSE_PORTS} (`ports:` maps a host port to a container port, its `target`); "
    f"{_DOCKER_PUBLISH} (the published port forwards to that port of the container: with "
    "nothing listening there, the connection is refused or reset)",
    kind="fault",
)
def front_port_mismatch(rule: Rule, c: Context) -> Iterator[Finding]:
    groups: dict[tuple[str, str], tuple[Container, list[AppServer]]] = {}
    for app in c.apps:
        box = app.container
        if box is not None and box.platform == "compose" and box.ports:
            groups.setdefault((box.name, str(box.at)), (box, []))[1].append(app)
    inside = {id(link.app) for link in c.links if _local_pass(link.server.value)}
    for box, apps in groups.values():
        binds = [_known_ports(a) for a in apps]
        if any(b is None for b in binds) or any(id(a) in inside or not _alone(a) for a in apps):
            continue
        bound = set().union(*(b for b in binds if b is not None))
        if any(p.value in bound for p in box.ports or ()) or box.development is not None:
            continue
        yield _finding(rule, box, apps[0])


def _local_pass(target: str) -> bool:
    """A pass to the front's own machine (a loopback port, a unix socket): a front in the
    container, which may be what the published port reaches."""
    host, _ = normalise(target)
    return host == "unix" or loopback(host)


def _finding(rule: Rule, box: Container, app: AppServer) -> Finding:
    published = ", ".join(sorted({str(p.value) for p in box.ports or ()}, key=int))
    socket = app.sockets[0]
    port = normalise(socket.value)[1]
    first = (box.ports or ())[0]
    return rule.finding(
        first.at,
        f"compose service {box.name} publishes container port {published}, but {app.kind} in "
        f"it listens on {', '.join(s.value for s in app.sockets)} ({socket.at}) and nothing "
        "else read runs in that container: a request to the published port finds no listener "
        "there (Docker's proxy resets it, the client sees 'connection reset' or 'empty reply')",
        f"publish container port {port}, the one {app.kind} binds (`ports:` entry at "
        f"{first.at}: the same host port, `:{port}` after it), or bind {app.kind} to "
        f":{first.value} at {socket.at}",
        related=(socket.at,),
    )
