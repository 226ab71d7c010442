"""Procfiles (Heroku, Dokku, honcho, foreman): `web: gunicorn -w 9 proj.wsgi`.

The format as Heroku documents it: one `<process type>: <command>` per line, the type made of
letters, digits, `_` and `-`; `#` starts a comment line. Each command is run by a shell, so its
words are split and expanded as the shell does (`commands.shell_commands`, then the server's
own parser through `commands.read_command`): `$PORT`, which the platform sets when the dyno
starts, is left out and named. Every process whose command starts a server is an app server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from servertune.check.commands import (
    START_NGINX,
    FollowWords,
    Word,
    beside,
    read_command,
    server_command,
    shell_commands,
)
from servertune.check.model import (
    IGNORED_BY_PLATFORM,
    SERVERS_READ,
    AppServer,
    CheckInputError,
    Location,
    NothingToCheck,
    Setting,
    note,
)
from servertune.check.unfollowed import nothing_started

__all__ = [
    "looks_like_procfile",
    "on_platform_port",
    "procfile_running",
    "read_procfile",
    "read_procfile_entries",
]

_PROCESS = re.compile(r"\A([A-Za-z0-9_-]+):\s*(.*)\Z")


def looks_like_procfile(path: Path, text: str) -> bool:
    """`Procfile`, or `Procfile.dev`, `Procfile.web`, ...; not `Procfile.sh`, a shell script."""
    del text
    if path.suffix in (".sh", ".bash"):
        return False
    return path.name == "Procfile" or path.name.startswith("Procfile.")


def read_procfile(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    follow: FollowWords | None = None,
) -> tuple[AppServer, ...]:
    """The app servers the Procfile's processes start (`follow` reads a script an entry runs)."""
    return tuple(app for _, app in read_procfile_entries(path, text, env, follow))


#: Programs of a Procfile line that start nginx beside the server, in the line's process
#: group (heroku-buildpack-nginx's `bin/start-nginx` starts nginx, then runs the command
#: after it).
_NGINX_STARTERS = START_NGINX | {"nginx", "start-nginx-solo"}


def _front_beside(app: AppServer, command: list[Word], signals_group: bool) -> AppServer:
    """The app with the nginx its Procfile line also starts (`web: bin/start-nginx uwsgi
    ...`), when what runs the Procfile signals the whole line: Heroku's dyno manager sends
    SIGTERM to every process of the dyno (honcho and foreman to the line's process group),
    so nginx is stopped at the same moment as the server."""
    if not signals_group:
        return app
    for word in command:
        if word.text.rsplit("/", 1)[-1] in _NGINX_STARTERS:
            return replace(app, front_stops_with=(word.at, word.text))
    return app


def read_procfile_entries(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    follow: FollowWords | None = None,
    env_at: Mapping[str, Location] | None = None,
    *,
    signals_group: bool = True,
) -> tuple[tuple[str, AppServer], ...]:
    """Each process type that starts an app server, with it. A process that runs a script
    here (`web: bash Procfile.sh`, `web: bin/run_web.sh`) is that script's server, with the
    Procfile's line first in its chain; its `without_exec` is dropped: the platforms that run
    a Procfile signal every process of it (Heroku sends SIGTERM to all the dyno's processes;
    honcho and foreman signal each process group), not only the shell. `signals_group` False
    is a runner that takes the `web` line as a start command and signals its process alone
    (Cloud Foundry): the script's `without_exec` stays. `env_at` says where the platform set
    each variable of `env` (app.json's `env`)."""
    apps: list[tuple[str, AppServer]] = []
    unstarted: list[list[Word]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PROCESS.match(line)
        if match is None:
            # Heroku reads only `type: command` lines: this one declares no process (a `web`
            # meant here is not started), a fault of the deployment, the rest still read.
            note(
                IGNORED_BY_PLATFORM,
                Location(path, number),
                f"not a `<process type>: <command>` line, so it declares no process (Heroku "
                f"skips it): {line[:60]!r}",
                "put a colon after the process type: `web: <command>`",
            )
            continue
        script = Word(match[2], Location(path, number))
        for command in shell_commands(script):
            unstarted.append(command)
            found = server_command(command)
            if found is not None:
                app = read_command(
                    path, found, env or {}, env_at or {}, shell=True, find_config=beside(path)
                )
                app = _front_beside(app, command, signals_group)
                apps.append((match[1], on_platform_port(app, Location(path, number))))
                break
            try:
                started = follow(path, command, env or {}, beside(path)) if follow else None
            except CheckInputError:  # a script here that is not one (`./manage.py migrate`)
                started = None
            if started is not None:
                steps = (Location(path, number), *started.launched_by)
                started = replace(
                    started,
                    without_exec=None if signals_group else started.without_exec,
                    launched_by=steps,
                )
                started = _front_beside(started, command, signals_group)
                apps.append((match[1], on_platform_port(started, Location(path, number))))
                break
    if not apps:
        launched = nothing_started(unstarted, beside(path))
        if launched is not None:
            raise launched
        raise NothingToCheck(
            f"{path}: no process starts a server check reads ({SERVERS_READ}): nothing to check"
        )
    return tuple(apps)


def on_platform_port(app: AppServer, at: Location) -> AppServer:
    """A gunicorn whose bind is its default, as a Procfile's runner starts it: every one sets
    PORT (Heroku's and Dokku's routers send the web process's traffic to `$PORT`; honcho and
    foreman give each process its own from 5000), and with PORT set gunicorn's default bind is
    `0.0.0.0:$PORT` (its `bind` setting's docs), not 127.0.0.1:8000. The port is the
    platform's, known only when it runs: no address is claimed, so no front of the repository
    is joined to the server by gunicorn's default address alone."""
    defaults = [s for s in app.sockets if s.default and s.value == "127.0.0.1:8000"]
    if app.kind != "gunicorn" or not defaults or len(defaults) != len(app.sockets):
        return app  # its bind is written, or the environment read gives PORT
    if any(w.value.split()[0].partition("=")[0] in ("-b", "--bind") for w in app.unresolved):
        return replace(app, sockets=())  # its bind names the variable already (`-b :$PORT`)
    bound = Setting("--bind 0.0.0.0:$PORT (gunicorn's default once the platform sets PORT)", at)
    return replace(app, sockets=(), unresolved=(*app.unresolved, bound))


#: How many folders above a script a Procfile that runs it is looked for (`bin/run_web.sh`
#: run by the repository's `Procfile` as `/app/bin/run_web.sh`): as far as a Dockerfile's
#: build context reaches (resolve.REPOSITORY_LEVELS), never outside the tree check reads.
_PROCFILE_LEVELS = 2


def procfile_running(script: Path) -> Setting[str] | None:
    """The Procfile process line that runs `script` (`web: bash Procfile.sh`, `web:
    /app/bin/run_web.sh`), in the script's folder or up to _PROCFILE_LEVELS above it, inside
    the tree check reads; None when no Procfile there names it.

    What runs a Procfile signals the whole process, not only its shell: Heroku's dyno manager
    sends SIGTERM to every process of the dyno, honcho puts each entry in its own session and
    stops it with `os.killpg`, foreman signals each entry's process group. A script a
    Procfile runs needs no `exec` for the server to get SIGTERM."""
    from servertune.check.resolve import inside
    from servertune.check.source import read_text

    start = script.absolute().parent
    for folder in [start, *start.parents][: _PROCFILE_LEVELS + 1]:
        try:
            names = sorted(p.name for p in folder.iterdir() if looks_like_procfile(p, ""))
        except OSError:
            continue
        wanted = script.absolute().relative_to(folder).as_posix()
        for name in names:
            procfile = folder / name
            if not inside(procfile, script) or not procfile.is_file():
                continue
            try:
                text = read_text(procfile)
            except CheckInputError:
                continue  # not a file the user named: one that cannot be read names nothing
            found = _line_running(procfile, text, wanted)
            if found is not None:
                return found
    return None


def _line_running(procfile: Path, text: str, wanted: str) -> Setting[str] | None:
    """The process line of `procfile` whose command runs the script at `wanted` (its path
    relative to the Procfile's folder): a word that is that path, `./` before it or an
    absolute path ending in it (the image's copy of the repository)."""
    for number, raw in enumerate(text.splitlines(), start=1):
        match = _PROCESS.match(raw.strip())
        if match is None:
            continue
        try:
            commands = shell_commands(Word(match[2], Location(procfile, number)))
        except CheckInputError:
            continue
        for word in (w.text for command in commands for w in command):
            if word.removeprefix("./") == wanted or word.endswith("/" + wanted):
                return Setting(raw.strip(), Location(procfile, number))
    return None
