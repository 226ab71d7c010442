"""The TCP ports a server binds when every one is literal and written, and whether it runs
alone in its container: what a published port or a front's pass is compared with
(`front-port-mismatch`), never a guess."""

from __future__ import annotations

import re

from servertune.check.model import AppServer, CheckInputError
from servertune.check.source import read_text

#: Programs a script may start beside the server, listening on a port of the container that
#: check does not read (a front, a process manager's other programs, a port forwarder).
_OTHER_LISTENERS = re.compile(
    r"\b(nginx|openresty|caddy|haproxy|traefik|envoy|socat|apache2|httpd|supervisord|honcho|"
    r"circusd|s6-svscan|runsvdir|node|npm|java)\b"
)


def known_ports(app: AppServer) -> set[int] | None:
    """The TCP ports the server binds, every one literal and written (no default a variable
    could change, no unix socket, no word left to the running container); None otherwise."""
    if not _fully_read(app):
        return None
    ports: set[int] = set()
    for socket in app.sockets:
        port = socket.value.rpartition(":")[2]
        if socket.default or socket.value.startswith(("unix:", "/")) or not port.isdigit():
            return None
        ports.add(int(port))
    return ports


def known_socket_files(app: AppServer) -> set[str] | None:
    """The unix socket files the server binds when it binds nothing else, every path literal
    and written; None otherwise (a TCP bind, a default, a variable)."""
    if not _fully_read(app):
        return None
    paths: set[str] = set()
    for socket in app.sockets:
        path = socket.value.removeprefix("unix:")
        if socket.default or not path.startswith("/") or "$" in path:
            return None
        paths.add(path)
    return paths


def _fully_read(app: AppServer) -> bool:
    """Every bind of the server written and read: none left to the running container, a
    config not read, a process manager or a reloader."""
    return not (
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
    )


def alone(app: AppServer) -> bool:
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
