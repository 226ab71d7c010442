"""systemd `.socket` and `.timer` units: what they start, and the listening socket a socket
unit hands its service.

With socket activation (systemd.socket(5)) systemd opens the socket a `.socket` unit's
`ListenStream=` names and passes it to the service it activates: the service named by its
`Service=`, else the `.service` of the same name; the service names it in `Sockets=` too.
gunicorn takes the sockets systemd passes (`LISTEN_FDS`) instead of its `bind`, and uWSGI
takes them as its sockets: the server's bind is the socket unit's. A `.timer` starts its
service (`Unit=`, else the `.service` of the same name) on a schedule: a oneshot job, not a
server, read and named as such.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from servertune.check.model import AppServer, Location, NothingToCheck, Setting

__all__ = ["SOCKET_SERVERS", "activated_by_socket", "looks_like_unit", "read_unit"]

#: The servers that take the sockets systemd passes in place of their own bind (gunicorn's
#: `systemd` support, uWSGI's socket activation); the others bind what they are told.
SOCKET_SERVERS = frozenset({"gunicorn", "uwsgi"})

#: The unit kinds read here, by suffix, with the section that holds their settings.
_SECTIONS = {".socket": "Socket", ".timer": "Timer"}


def looks_like_unit(path: Path, text: str) -> bool:
    """A `.socket` unit with a [Socket] section, or a `.timer` with a [Timer] one."""
    section = _SECTIONS.get(Path(_installed_name(path.name)).suffix.lower())
    return section is not None and bool(re.search(rf"^[ \t]*\[{section}\][ \t]*$", text, re.M))


def _section(path: Path, text: str, name: str) -> list[tuple[str, str, int]]:
    """(key, value, line) of the units's `[name]` section, as systemd reads a unit."""
    from servertune.check.systemd_syntax import unit_entries

    return [(k, v, n) for section, k, v, n in unit_entries(path, text) if section == name]


def _template(name: str) -> str:
    """A unit name as its template file is named: `webapp@%i.service` -> `webapp@.service`
    (the file an instance is started from; a specifier is the instance's name)."""
    stem, at, rest = name.partition("@")
    if not at:
        return name
    return f"{stem}@{rest[rest.find('.') :]}" if "." in rest else f"{stem}@"


def _started_unit(path: Path, text: str) -> str:
    """The service a socket or timer unit starts: `Service=` / `Unit=`, else its namesake."""
    installed = Path(_installed_name(path.name))  # `gunicorn.socket.j2`: `gunicorn.socket`
    key = "Service" if installed.suffix.lower() == ".socket" else "Unit"
    named = [v for k, v, _ in _section(path, text, _SECTIONS[installed.suffix.lower()]) if k == key]
    return _template(named[-1]) if named and named[-1] else f"{installed.stem}.service"


def _listens(path: Path, text: str) -> list[Setting[str]]:
    """The socket unit's `ListenStream=` addresses as nginx would write them: a path (or an
    `@abstract` name) is a unix socket, a bare port every address's, else `host:port`."""
    found: list[Setting[str]] = []
    for key, value, line in _section(path, text, "Socket"):
        if key != "ListenStream":
            continue
        if not value:  # an empty assignment resets the list
            found = []
        elif value.startswith(("/", "@")):
            found.append(Setting(f"unix:{value}", Location(path, line)))
        elif value.isdigit():
            found.append(Setting(f"0.0.0.0:{value}", Location(path, line)))
        else:
            found.append(Setting(value, Location(path, line)))
    return found


def read_unit(path: Path, text: str) -> NoReturn:
    """A socket or timer unit read alone: it starts no server itself, which one note says
    (with what it starts); a socket unit's address is read with the service it activates."""
    started = _started_unit(path, text)
    if Path(_installed_name(path.name)).suffix.lower() == ".timer":
        raise NothingToCheck(
            f"{path}: a systemd timer: starts {started} on a schedule (a oneshot job), no server"
        )
    addresses = ", ".join(s.value for s in _listens(path, text)) or "no ListenStream="
    raise NothingToCheck(
        f"{path}: a systemd socket unit ({addresses}): the listening socket of {started}, "
        "read with that unit; it starts no server of its own"
    )


def activated_by_socket(service: Path, sockets: list[str], app: AppServer) -> AppServer:
    """`app` with the listening sockets of the socket units that activate its unit: the ones
    `Sockets=` names, else the `.socket` of the unit's name, found beside it and pointing
    back at it. Unchanged when none is here, or for a server that binds its own."""
    if app.kind not in SOCKET_SERVERS:
        return app
    installed = _installed_name(service.name)
    stem = installed.rsplit(".", 1)[0]
    names = [_template(n) for value in sockets for n in value.split()] or [f"{stem}.socket"]
    listens: list[Setting[str]] = []
    for name in dict.fromkeys(names):
        for unit in _written_as(service, name):
            text = _unit_text(unit)
            if looks_like_unit(unit, text) and _started_unit(unit, text) == installed:
                listens += _listens(unit, text)
                break
    if not listens:
        return app
    # uWSGI takes the inherited socket for its uwsgi-protocol `socket`; its HTTP router's own
    # `--http :8000` beside it is another listener, which it still binds (uWSGI's Systemd page).
    routers = tuple(
        s for s in app.sockets if app.uwsgi_protocol and s.value not in app.uwsgi_protocol
    )
    return replace(app, sockets=(*listens, *routers))


#: Suffixes a unit file carries in a repository that deploys it rendered or copied
#: (`gunicorn.service.j2`, an ansible role's template): the unit is installed without it.
_TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".tpl", ".tmpl", ".template")

#: An ansible role's folders of files to install: `copy` takes `files/`, `template` takes
#: `templates/`, and a role's units are split between the two.
_ROLE_FOLDERS = ("files", "templates")


def _unit_text(unit: Path) -> str:
    """A unit file's text, a template whose templating is only in values read with those its
    ansible play gives (`check.ansible_vars`) and the others unresolved
    (`check.value_templates`: `ListenStream={{ listen }}` beside a literal one)."""
    from servertune.check.ansible_vars import ansible_values
    from servertune.check.template_markers import template_line
    from servertune.check.value_templates import read_values

    text = unit.read_text(encoding="utf-8", errors="replace")
    if template_line(text) is None:
        return text
    found = read_values(text, ansible_values(unit))
    return found.text if found is not None else ""


def _installed_name(name: str) -> str:
    """A unit file's name as installed: without a template suffix (`gunicorn.service.j2`)."""
    for suffix in _TEMPLATE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _written_as(service: Path, name: str) -> list[Path]:
    """The files here that install as unit `name` beside the service unit: in its folder, or
    in an ansible role the other folder of files it installs (`files/gunicorn.socket` beside
    `templates/gunicorn.service.j2`, tournesol-app/tournesol), with a template suffix or
    without."""
    folders = [service.parent]
    if service.parent.name in _ROLE_FOLDERS:
        folders += [service.parent.parent / f for f in _ROLE_FOLDERS if f != service.parent.name]
    return [
        folder / written
        for folder in folders
        for written in (name, *(name + suffix for suffix in _TEMPLATE_SUFFIXES))
        if (folder / written).is_file()
    ]
