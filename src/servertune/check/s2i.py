"""OpenShift source-to-image: the container command `.s2i/environment` decides.

`.s2i/environment` is an env file (`KEY=value` lines) that s2i bakes into the image it builds
from the repository, so its variables are the container's environment. Under the s2i Python
builder (sclorg/s2i-python-container, `src/s2i/bin/run`, and its README's "Environment
variables") they also choose the container's command, in this order, run in `APP_HOME`
(default: the repository's root):

1. `APP_SCRIPT` (default `app.sh`), when the file exists: `exec`'d;
2. `APP_FILE` (default `app.py`), when the file exists: `exec python APP_FILE`;
3. `APP_MODULE` (else `wsgi` when `wsgi.py` exists): `exec gunicorn APP_MODULE
   --bind=0.0.0.0:8080 --access-logfile=- --config APP_CONFIG`, `WEB_CONCURRENCY` workers
   (when unset, the builder derives it from the container's cgroup limits).

An `APP_SCRIPT` / `APP_FILE` set to a file that is not there makes the builder exit with an
error: not followed, said so. Other builders (Node, Ruby, ...) read other variables; a file
that sets none of the Python builder's variables and has none of its default files is not a
launch here.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from servertune.check.commands import FollowWords, Word
from servertune.check.model import AppServer, Location, NotFollowed, NothingToCheck, note

__all__ = ["looks_like_s2i_environment", "read_s2i_environment"]

#: The builder's own gunicorn line (`src/s2i/bin/run`).
_GUNICORN = "gunicorn {module} --bind=0.0.0.0:8080 --access-logfile=-"


def looks_like_s2i_environment(path: Path, text: str) -> bool:
    """`environment` in a `.s2i/` folder."""
    del text
    return path.name == "environment" and path.parent.name == ".s2i"


def _command(
    path: Path, values: Mapping[str, str], where: Mapping[str, Location], folder: Path
) -> Word | None:
    """The command the Python builder's run script execs, as a line of this file (None:
    none of its variables or default files is here)."""
    for key, default, runs in (("APP_SCRIPT", "app.sh", "{}"), ("APP_FILE", "app.py", "python {}")):
        written = values.get(key)
        name = written if written else default
        target = Path(name) if name.startswith("/") else folder / name
        if name.startswith("/") or not target.is_file():
            if written:
                raise NotFollowed(
                    f"{where[key]}: not followed: {key}={written} (OpenShift s2i) names a file "
                    "that is not among the files here"
                )
            continue
        shown = name if name.startswith(("/", "./", "../")) else f"./{name}"
        at = where.get(key, Location(path, 1))
        return Word(runs.format(shlex.quote(shown)), at)
    module = values.get("APP_MODULE") or ("wsgi" if (folder / "wsgi.py").is_file() else None)
    if not module:
        return None
    line = _GUNICORN.format(module=shlex.quote(module))
    if values.get("APP_CONFIG"):
        line += f" --config {shlex.quote(values['APP_CONFIG'])}"
    at = where.get("APP_MODULE", Location(path, 1))
    if "WEB_CONCURRENCY" not in values:
        note(
            "unresolved-variable",
            at,
            "OpenShift s2i's Python builder sets WEB_CONCURRENCY (gunicorn's workers) from "
            "the container's cgroup limits when unset: the worker count here is gunicorn's "
            "own default, not the builder's",
        )
    return Word(line, at)


def read_s2i_environment(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The server the s2i Python builder's image starts, under the file's variables."""
    del text
    from servertune.check.envfile import read_env_file
    from servertune.check.platforms import command_server

    values, where = read_env_file(path)
    environment = {**values, **(env or {})}
    home = values.get("APP_HOME", "")
    folder = path.parent.parent / home if home and not home.startswith("/") else path.parent.parent
    command = _command(path, environment, where, folder)
    if command is None:
        raise NothingToCheck(
            f"{path}: sets none of OpenShift s2i's Python builder's APP_SCRIPT, APP_FILE or "
            "APP_MODULE, and app.sh, app.py and wsgi.py are not here: nothing to check"
        )
    found = command_server(path, command, folder, environment, dict(where), follow)
    if found is None:
        raise NotFollowed(
            f"{command.at}: not followed: OpenShift s2i runs `{command.text}`, which starts no "
            "server check reads from the files here"
        )
    return (found,)
