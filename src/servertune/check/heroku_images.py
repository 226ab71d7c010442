"""Images a repository's heroku.yml builds: Heroku runs them on dynos, whose manager sends
SIGTERM to every process of the dyno (https://devcenter.heroku.com/articles/dyno-shutdown-behavior),
so a shell left as PID 1 in front of the server (a shell-form CMD, a script without `exec`)
does not keep the signal from it (wagtail-torchbox's `CMD gunicorn ...` built by heroku.yml).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from servertune.check.model import Location, Setting
from servertune.check.source import read_text

__all__ = ["DYNO_MANAGER", "heroku_built"]

DYNO_MANAGER = "Heroku's dyno manager (SIGTERM to every process of the dyno)"

#: `build: docker: NAME: Dockerfile` or `NAME: {dockerfile: Dockerfile, target: ...}`: the
#: Dockerfile paths a heroku.yml names, each at its line.
_DOCKERFILE = re.compile(r"^[ \t]+(?:[\w.-]+|dockerfile):[ \t]*['\"]?([^'\"#\s{}]+)", re.M)

#: How many folders above a Dockerfile its heroku.yml may sit (the repository's root).
_LEVELS = 4


def heroku_built(dockerfile: Path, started: Location) -> Setting[str] | None:
    """Heroku's dyno manager, naming the heroku.yml line that builds `dockerfile` (under its
    `build:` section, in the Dockerfile's folder or one above), at `started`, the line that
    starts the server: the launch goes through the Dockerfile, not heroku.yml. None when no
    heroku.yml builds it."""
    folder = dockerfile.parent
    for _ in range(_LEVELS):
        for name in ("heroku.yml", "heroku.yaml"):
            at = _names(folder / name, dockerfile)
            if at is not None:
                return Setting(f"{DYNO_MANAGER}, the image built by {at}", started)
        if folder.parent == folder or (folder / ".git").exists():
            break
        folder = folder.parent
    return None


def _names(heroku: Path, dockerfile: Path) -> Location | None:
    """Where `heroku`'s `build:` section names `dockerfile` (relative to its own folder)."""
    if not heroku.is_file():
        return None
    try:
        text = read_text(heroku)
    except (OSError, ValueError):
        return None
    build = re.search(r"^build:[ \t]*\n((?:[ \t]+.*\n|[ \t]*\n)*)", text + "\n", re.M)
    if build is None:
        return None
    target = os.path.normpath(dockerfile)
    for match in _DOCKERFILE.finditer(build[1]):
        if os.path.normpath(heroku.parent / match[1]) == target:
            line = text.count("\n", 0, build.start(1) + match.start(1)) + 1
            return Location(heroku, line)
    return None
