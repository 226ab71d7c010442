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
    FollowWords,
    Word,
    beside,
    read_command,
    server_command,
    shell_commands,
)
from servertune.check.model import AppServer, CheckInputError, Location, NothingToCheck

__all__ = ["looks_like_procfile", "read_procfile", "read_procfile_entries"]

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


def read_procfile_entries(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    follow: FollowWords | None = None,
) -> tuple[tuple[str, AppServer], ...]:
    """Each process type that starts an app server, with it. A process that runs a script
    here (`web: bash Procfile.sh`, `web: bin/run_web.sh`) is that script's server, with the
    Procfile's line first in its chain; its `without_exec` is dropped: the platforms that run
    a Procfile signal every process of it (Heroku sends SIGTERM to all the dyno's processes;
    honcho and foreman signal each process group), not only the shell."""
    apps: list[tuple[str, AppServer]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PROCESS.match(line)
        if match is None:
            raise CheckInputError(
                f"{path}:{number}: not a `<process type>: <command>` line: {line[:60]!r}"
            )
        script = Word(match[2], Location(path, number))
        for command in shell_commands(script):
            found = server_command(command)
            if found is not None:
                apps.append(
                    (
                        match[1],
                        read_command(
                            path, found, env or {}, {}, shell=True, find_config=beside(path)
                        ),
                    )
                )
                break
            try:
                started = follow(path, command, env or {}, beside(path)) if follow else None
            except CheckInputError:  # a script here that is not one (`./manage.py migrate`)
                started = None
            if started is not None:
                steps = (Location(path, number), *started.launched_by)
                apps.append((match[1], replace(started, without_exec=None, launched_by=steps)))
                break
    if not apps:
        raise NothingToCheck(
            f"{path}: no process starts a server check reads (gunicorn, uvicorn, granian, "
            "uWSGI): nothing to check"
        )
    return tuple(apps)
