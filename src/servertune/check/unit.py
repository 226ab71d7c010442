"""An NGINX Unit config (the JSON a script PUTs to Unit's control socket) read as the app server it
configures: each Python application, its processes and threads, and the listeners that reach it.

Unit is configured through its API, not a file named on `unitd`'s command line
(https://unit.nginx.org/controlapi/): a script starts `unitd` and loads a JSON file with
`curl -X PUT --data-binary @FILE --unix-socket SOCKET http://localhost/config`. Both are read
here: the script's `unitd` line is the launch, the file the server's config.

What is read, with Unit's documented defaults (https://unit.nginx.org/configuration/):
- `listeners` ("*:8080", "127.0.0.1:8300", "unix:/path") whose `pass` reaches the application,
  directly (`applications/NAME`) or through `routes` steps' `action.pass`; a listener's
  `backlog` (else `listen(2)`'s 511, Unit's NXT_LISTEN_BACKLOG on Linux);
- `applications.NAME` of `type` `python ...`: `processes` (an integer, or `{max, spare,
  idle_timeout}` whose `max` is the most it runs; 1 by default: #application-processes),
  `threads` (1 by default: #python), `protocol` (asgi or wsgi);
- `settings.http.idle_timeout`, how long Unit keeps an idle keep-alive connection open (180 s
  by default: #settings): the keep-alive a front's idle pool is compared with.
`limits.timeout` answers 503 to the client but does not stop the Python code running the
request, so it is no request cap the timeout chain can order; it is not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from servertune.check.commands import FindConfig, Word, expand_shell, program_name
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Location,
    NotFollowed,
    NothingToCheck,
    Setting,
)

__all__ = [
    "DEFAULT_BACKLOG",
    "DEFAULT_IDLE_TIMEOUT_S",
    "UNIT_DOCS",
    "looks_like_unit",
    "read_unit",
    "unit_started",
]

UNIT_DOCS = "https://unit.nginx.org/configuration/"
#: `settings.http.idle_timeout`: "Maximum number of seconds between requests in a keep-alive
#: connection ... The default is 180." (UNIT_DOCS#settings)
DEFAULT_IDLE_TIMEOUT_S = 180.0
#: The backlog Unit passes to listen(2) on Linux when a listener sets none (nginx/unit
#: src/nxt_listen_socket.h: NXT_LISTEN_BACKLOG 511, "a safe default").
DEFAULT_BACKLOG = 511
#: How deep routes may pass to routes before the config is refused (Unit refuses a loop).
_MAX_ROUTE_DEPTH = 16

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def looks_like_unit(path: Path, text: str) -> bool:
    """A JSON object whose top level has Unit's `listeners` or `applications`."""
    if path.suffix.lower() != ".json" or not re.search(r'"(listeners|applications)"\s*:', text):
        return False
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and ("listeners" in data or "applications" in data)


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line each object key is written on, by its path (`("applications", "app",
    "processes")`; an array's elements add nothing to it), for a setting's file:line."""
    lines: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, str | None]] = []  # each open `{` / `[` with its key in its parent
    expecting_key = False
    pending: str | None = None
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token in ("{", "["):
            stack.append((token, pending))
            pending, expecting_key = None, token == "{"
        elif token in ("}", "]"):
            if stack:
                stack.pop()
            pending, expecting_key = None, False
        elif token == ",":
            pending, expecting_key = None, bool(stack) and stack[-1][0] == "{"
        elif token == ":":
            continue
        elif expecting_key and token.startswith('"'):
            pending = json.loads(token)
            path = tuple(key for _, key in stack if key is not None)
            lines.setdefault((*path, pending), text.count("\n", 0, match.start()) + 1)
            expecting_key = False
        else:
            pending = None
    return lines


def _int(value: Any, what: str, at: Location, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise CheckInputError(
            f"{at}: {what} {value!r}: Unit takes a whole number, at least {least}"
        )
    return value


def _applications(route: Any, routes: Any, depth: int, at: Location) -> set[str]:
    """The applications a `pass` value reaches, through routes' steps."""
    if not isinstance(route, str):
        return set()
    parts = route.split("/")
    if parts[0] == "applications" and len(parts) >= 2:
        return {parts[1]}
    if parts[0] != "routes" or depth > _MAX_ROUTE_DEPTH:
        return set()
    steps = (
        routes
        if len(parts) == 1
        else (routes or {}).get(parts[1])
        if isinstance(routes, dict)
        else None
    )
    found: set[str] = set()
    for step in steps if isinstance(steps, list) else []:
        action = step.get("action") if isinstance(step, dict) else None
        if isinstance(action, dict):
            found |= _applications(action.get("pass"), routes, depth + 1, at)
    return found


#: The line a key is written on, by its path (`_key_lines`), found up the path when absent.
At = Callable[..., Location]


def _sizing(application: dict[str, Any], name: str, at: At) -> tuple[Setting[int], Setting[int]]:
    """An application's processes (the most it runs) and threads, each at its line (the
    application's when left at Unit's default of 1)."""
    processes = application.get("processes", 1)
    where = at("applications", name, "processes")
    if isinstance(processes, dict):
        where = at("applications", name, "processes", "max")
        most = processes.get("max", 1)
        workers = Setting(
            _int(most, "processes.max", where, 1), where, default="max" not in processes
        )
    else:
        workers = Setting(
            _int(processes, "processes", where, 1), where, default="processes" not in application
        )
    where = at("applications", name, "threads")
    threads = Setting(
        _int(application.get("threads", 1), "threads", where, 1),
        where,
        default="threads" not in application,
    )
    return workers, threads


def _listening(
    name: str, listeners: dict[str, Any], routes: Any, at: At
) -> tuple[tuple[Setting[str], ...], Setting[int] | None]:
    """The listeners whose `pass` reaches the application, and the first backlog they set."""
    sockets: list[Setting[str]] = []
    backlog: Setting[int] | None = None
    for address, listener in listeners.items():
        if not isinstance(listener, dict):
            continue
        reached = _applications(listener.get("pass"), routes, 0, at("listeners"))
        if listener.get("application") == name or name in reached:
            sockets.append(Setting(address, at("listeners", address)))
            if "backlog" in listener and backlog is None:
                where = at("listeners", address, "backlog")
                backlog = Setting(_int(listener["backlog"], "backlog", where, 1), where)
    return tuple(sockets), backlog


def _object(data: dict[str, Any], key: str, at: At) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise CheckInputError(f"{at(key)}: {key} is a JSON object in Unit's config")
    return value


def read_unit(path: Path, text: str, env: Mapping[str, str] | None = None) -> tuple[AppServer, ...]:
    """An AppServer for each Python application of the config; NothingToCheck when it has none."""
    del env  # Unit's JSON has no variables of its own
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise CheckInputError(f"{path}: not JSON Unit reads ({error})") from None
    if not isinstance(data, dict):
        raise CheckInputError(f"{path}: a Unit config is a JSON object")
    lines = _key_lines(text)

    def at(*keys: str) -> Location:
        for end in range(len(keys), 0, -1):
            if keys[:end] in lines:
                return Location(path, lines[keys[:end]])
        return Location(path, 1)

    listeners = _object(data, "listeners", at)
    http = _object(_object(data, "settings", at), "http", at)
    if "idle_timeout" in http:
        where = at("settings", "http", "idle_timeout")
        keepalive = Setting(float(_int(http["idle_timeout"], "idle_timeout", where, 0)), where)
    else:
        keepalive = Setting(DEFAULT_IDLE_TIMEOUT_S, Location(path, 1), default=True)
    apps: list[AppServer] = []
    for name, application in _object(data, "applications", at).items():
        if not isinstance(application, dict) or not str(application.get("type", "")).startswith(
            "python"
        ):
            continue
        workers, threads = _sizing(application, name, at)
        sockets, backlog = _listening(name, listeners, data.get("routes"), at)
        apps.append(
            AppServer(
                kind="unit",
                file=path,
                workers=workers,
                threads=threads,
                sockets=sockets,
                mapped_sockets=False,
                keepalive=keepalive,
                request_timeout=None,
                graceful_timeout=None,
                max_requests=Setting(0, at("applications", name), default=True),
                max_requests_jitter=Setting(0, at("applications", name), default=True),
                backlog=backlog or Setting(DEFAULT_BACKLOG, Location(path, 1), default=True),
                interface="asgi" if application.get("protocol") == "asgi" else "wsgi",
                config_file=Location(path, 1),
            )
        )
    if not apps:
        raise NothingToCheck(
            f"{path}: an NGINX Unit config with no Python application: nothing to check"
        )
    return tuple(apps)


#: curl's options that send a file as the request body (`--data-binary @FILE`, `-T FILE`).
_BODY_OPTIONS = {"-d": "@", "--data": "@", "--data-binary": "@", "-T": "", "--upload-file": ""}


def _loaded_file(words: Sequence[Word], env: Mapping[str, str]) -> Word | None:
    """The file a `curl ... --unix-socket SOCKET http://localhost/config` sends to Unit's
    control API, None when the command is no such load."""
    texts = [expand_shell(w.text, env) or w.text for w in words]
    if "curl" not in [program_name(t) for t in texts] or "--unix-socket" not in texts:
        return None
    if not any(t.rstrip("/").endswith("/config") or "/config/" in t for t in texts if "://" in t):
        return None
    for index, text in enumerate(texts[:-1]):
        prefix = _BODY_OPTIONS.get(text)
        value = texts[index + 1]
        if prefix is not None and value.startswith(prefix):
            return Word(value[len(prefix) :], words[index + 1].at)
    return None


def unit_started(
    path: Path, commands: Sequence[Sequence[Word]], env: Mapping[str, str], find_config: FindConfig
) -> AppServer | None:
    """The Unit application a script starts: its `unitd` line, with the config a `curl` of the
    same script loads into it; None when no line runs `unitd`; NotFollowed when the config it
    loads is not here (or none is loaded: Unit then runs its state directory's)."""
    started = next(
        (
            command[0] if program_name(command[0].text) == "unitd" else command[1]
            for command in commands
            if command
            and (
                program_name(command[0].text) == "unitd"
                or (
                    command[0].text == "exec"
                    and len(command) > 1
                    and program_name(command[1].text) == "unitd"
                )
            )
        ),
        None,
    )
    if started is None:
        return None
    loaded = next((w for c in commands if (w := _loaded_file(c, env)) is not None), None)
    if loaded is None:
        raise NotFollowed(
            f"{started.at}: not followed: runs unitd, and no line here loads a config into its "
            "control socket (curl --data-binary @FILE ... /config): the applications it runs are "
            "those of its state directory or the image's, not known"
        )
    config = find_config(loaded.text, loaded.at)
    if config is None:
        raise NotFollowed(
            f"{loaded.at}: not followed: loads {loaded.text} into unitd, a file not in the "
            "files read, so the applications it runs are not known"
        )
    apps = read_unit(config.file, config.text)
    # The `unitd` line is the launch (the `curl` only feeds it its config, the next step).
    return replace(
        apps[0],
        file=path,
        launched_by=(Location(path, started.at.line),),
        config_file=Location(config.file, 1),
    )
