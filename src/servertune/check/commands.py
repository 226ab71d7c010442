"""A server's command line -> the AppServer it starts, read by that server's own parser.

Every file kind that starts a server with a command line (a Dockerfile's `CMD`/`ENTRYPOINT`, a
compose service's `command`, a Procfile's process, a shell entrypoint that `exec`s the server,
a Kubernetes container's `command`/`args`) hands its words here, each with the file:line it
was written on. `server_command` finds which server runs (past `exec`, `env`, `VAR=value`,
`python -m`, process managers such as `tini --` or `gosu USER`, and `sh -c "...; exec ..."`);
`read_command` hands its arguments to that server's own parser:

* gunicorn: its `Application.load_config()` and argparse, built from its own `Config`, in a child
  interpreter (`_gunicorn_probe.py`), after the `-c` config file when one is found;
* uvicorn, granian: their click commands' `make_context()` in a child interpreter
  (`_cli_probe.py`), their `UVICORN_*` / `GRANIAN_*` variables included;
* uWSGI: its command line is its ini file spelled as options (`--name value`, `--name=value`,
  a lone `--flag` is true, uWSGI's documented short options), and `UWSGI_<NAME>` variables are
  options too; read with the ini reader's rules.

The environment is the one the server will see (the image's `ENV`, compose's `environment` and
`env_file`, `--env-file`, the manifest's `env`), so `WEB_CONCURRENCY` and `GUNICORN_CMD_ARGS`
count as the server counts them. Where a word is given to a shell (shell-form `CMD`, a Procfile,
`sh -c`), `$VAR` / `${VAR}` / `${VAR:-default}` are expanded from that environment; a variable
only the running container knows (`--bind :$PORT`) cannot be read: the option and its value are
left out, and the AppServer says which (`unresolved`) so a finding can name it.
"""

from __future__ import annotations

import contextvars
import os
import posixpath
import re
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

from servertune.check.asgi_cli import parse_command_lines
from servertune.check.model import (
    SERVERS,
    AppServer,
    CheckInputError,
    Location,
    NotFollowed,
    NothingToCheck,
    Setting,
    server_program,
)
from servertune.check.placeholders import placeholder
from servertune.check.uwsgi_flags import UWSGI_NO_VALUE

__all__ = [
    "COMMAND_COMPLETE",
    "ENVIRONMENT_COMPLETE",
    "IMAGE_ENV_AT",
    "IN_IMAGES",
    "SERVERS",
    "START_NGINX",
    "WRITTEN_BY_SCRIPTS",
    "ConfigFile",
    "FindConfig",
    "FollowWords",
    "JoinedWord",
    "ServerCommand",
    "Word",
    "beside",
    "child_env",
    "expand_shell",
    "joined_words",
    "one_string_split",
    "place_words",
    "read_command",
    "server_command",
    "shell_commands",
    "without_comments",
    "wrapped",
]

#: heroku-buildpack-nginx's wrappers that start nginx with the rendered config and then the
#: command after them (`start-nginx-solo` and `start-nginx-static` run nginx alone, with no app
#: command).
START_NGINX = frozenset({"start-nginx", "start-nginx-debug"})
#: Programs that run the command after them: how many positional words of their own they
#: take (`gosu USER cmd`, `newrelic-admin run-program cmd`); their options (`tini --`,
#: `uv run --with x`) are skipped too. What runs is the first server word after them.
WRAPPERS: dict[str, int] = {
    "exec": 0,
    "env": 0,
    "nice": 0,
    "nohup": 0,
    "tini": 0,
    "dumb-init": 0,
    "catatonit": 0,
    "gosu": 1,
    # phusion/baseimage's `/sbin/setuser USER cmd`.
    "setuser": 1,
    "su-exec": 1,
    "setpriv": 0,
    "ddtrace-run": 0,
    "opentelemetry-instrument": 0,
    "newrelic-admin": 1,
    "doppler": 1,
    "poetry": 1,
    "pipenv": 1,
    "uv": 1,
    "pdm": 1,
    "hatch": 1,
    "rye": 1,
    # `pyenv exec python3 -m gunicorn ...`: the command with pyenv's selected Python.
    "pyenv": 1,
    # s6-overlay's privilege drop and environment loaders (paperless-ngx's run scripts).
    "s6-setuidgid": 1,
    "s6-envuidgid": 1,
    "with-contenv": 0,
    "s6-env": 0,
    # runit's `chpst -u user cmd` (options only; -u's value is skipped with them).
    "chpst": 0,
    # daemontools' `envdir DIR cmd`, `setuidgid USER cmd`, `envuidgid USER cmd`, `softlimit
    # -m N cmd`; s6's `s6-envdir DIR cmd` (azavea/model-my-watershed's unit: envdir gunicorn).
    "envdir": 1,
    "s6-envdir": 1,
    "setuidgid": 1,
    "envuidgid": 1,
    "softlimit": 0,
    # util-linux's `ionice -c 2 -n 7 cmd` and `taskset [-c] MASK cmd` (scheduling only).
    "ionice": 0,
    "taskset": 1,
    # heroku-buildpack-nginx: starts nginx, then runs the command after it (the app server).
    **dict.fromkeys(START_NGINX, 0),
    # `sudo -u app -EH uwsgi ...` (its options' values are skipped as the server is searched);
    # coreutils' `timeout DURATION cmd`.
    "sudo": 0,
    "timeout": 1,
    # watchdog's `watchmedo auto-restart [OPTIONS] -- COMMAND ARGS`: runs the command after
    # its options (and `--`), restarting it when a watched file changes (RELOADERS).
    "watchmedo": 0,
}
#: Wrappers that run a command only under one subcommand of theirs (`watchmedo auto-restart`;
#: `watchmedo shell-command`, `tricks`, `log` run no command of their arguments).
WRAPPER_SUBCOMMANDS: dict[str, str] = {"watchmedo": "auto-restart"}
#: Wrappers that restart the command on every code change: what they run is a development
#: launch (the AppServer's `reloads`), as a server's own `--reload` makes it.
RELOADERS = frozenset({"watchmedo"})
#: The options of WRAPPERS written with their value as the next word (`nice -n 10 su ...`,
#: `timeout -s KILL 30 ...`, `env -u NAME ...`): the value is no program the wrapper runs.
WRAPPER_VALUED: dict[str, frozenset[str]] = {
    "nice": frozenset({"-n", "--adjustment"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "-D", "-h", "-p", "-R", "-U"}),
    "chpst": frozenset({"-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p"}),
    "tini": frozenset({"-p", "-e"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata"}),
    "softlimit": frozenset({"-m", "-d", "-s", "-l", "-a", "-o", "-p", "-f", "-c", "-r", "-t"}),
    "dumb-init": frozenset({"-r", "--rewrite"}),
    # watchmedo auto-restart's options with a value (watchdog's watchmedo.py, `auto_restart`).
    "watchmedo": frozenset(
        {"-d", "--directory", "-p", "--pattern", "--patterns", "-i", "--ignore-pattern"}
        | {"--ignore-patterns", "--interval", "--timeout", "--signal", "--kill-after"}
        | {"--debounce-interval"}
    ),
}
#: How many folders above the file naming it a `-c python:module` config is looked for.
_MODULE_LEVELS = 3
#: Programs that run a command string as another user, through that user's shell.
_SWITCH_USER = frozenset({"su", "runuser"})
#: A project's own command that runs a server in-process with the arguments after it, as
#: that server's command line: Nautobot's `nautobot-server start` is django-webserver's
#: `start`, uWSGI embedded (pyuwsgi), documented as `nautobot-server start --ini uwsgi.ini`.
#: django-pyuwsgi's `manage.py pyuwsgi` runs pyuwsgi likewise, with uWSGI's options.
LAUNCHERS: dict[tuple[str, str], Literal["uwsgi"]] = {
    ("nautobot-server", "start"): "uwsgi",
    ("manage.py", "pyuwsgi"): "uwsgi",
}
#: The shells a `sh -c "script"` runs: their script's commands are searched for the server.
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "busybox"})
_ASSIGNMENT = re.compile(r"\A([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z", re.S)
#: POSIX parameter expansion as `sh` does it on a word: `$NAME`, `${NAME}`, `${NAME:-word}`,
#: `${NAME-word}` (and `:=`/`=`, which also default); `$$` and `$1` are left to the shell.
_PARAMETER = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-=+?])"
    # the word may hold one nested expansion: `${A:-${B:-8000}}` (paperless-ngx's run script)
    r"(?P<word>(?:[^}$]|\$(?!\{)|\$\{[^{}]*\})*))?\}"
    r"|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))"
)


@dataclass(frozen=True)
class Word:
    """A word of a command line, as the program receives it, with where it was written."""

    text: str
    at: Location


@dataclass(frozen=True)
class JoinedWord(Word):
    """The first word of an exec-form command whose one string is a whole command line
    (`CMD ["uwsgi --ini uwsgi.ini"]`), split into words as a guess at what was meant; Docker
    runs a program named by the whole string (`written`), which no image has."""

    written: str = ""


def one_string_split(words: list[Word]) -> list[Word]:
    """An exec form whose one string is a whole command line (a Dockerfile's `CMD ["uwsgi
    --ini uwsgi.ini"]`, reanahub/reana-server; a compose or Kubernetes `command:` list of one
    item) split into its words, the first a `JoinedWord` keeping the string
    (its rule says Docker runs a program of that name); other words as written."""
    if len(words) != 1 or not re.search(r"\S\s+\S", words[0].text.strip()):
        return words
    try:
        split = shlex.split(words[0].text)
    except ValueError:
        return words
    at = words[0].at
    return [JoinedWord(split[0], at, words[0].text), *(Word(w, at) for w in split[1:])]


@dataclass(frozen=True)
class ServerCommand:
    """The server a command line starts: its name, the words after it, and the `VAR=value`
    assignments written before it (the server's environment too)."""

    server: Literal["gunicorn", "uvicorn", "granian", "uwsgi", "hypercorn", "daphne", "waitress"]
    program: Word
    args: tuple[Word, ...]
    assignments: tuple[tuple[str, Word], ...] = ()
    #: The code of a `python -c CODE SERVER ...` launcher, None when the server runs directly.
    launcher: Word | None = None
    #: The working directory a `cd DIR` before it sets (execline's chain-loading `cd DIR
    #: prog...`, a script's `cd DIR` line): relative config paths are found there.
    directory: str | None = None
    #: The word of a wrapper that restarts the server on code changes (`watchmedo
    #: auto-restart -- gunicorn ...`, RELOADERS): a development launch. None otherwise.
    reloader: Word | None = None
    #: The program that runs it expands `$VAR` / `${VAR}` in its words itself, without a
    #: shell (monofy, even in a Dockerfile's exec form).
    expands: bool = False


@dataclass(frozen=True)
class ConfigFile:
    """A config file a command line names (`gunicorn -c`, `uwsgi --ini`), found by the caller:
    its text, the file it lives in, and the line its text starts on there (a ConfigMap key or
    a Dockerfile heredoc starts below its header)."""

    text: str
    file: Path
    first_line: int = 1


class FindConfig(Protocol):
    """Finds the file a command line names (the path as written, relative to the working
    directory the server runs in, named at `at`); None when it is not among the files here."""

    def __call__(self, wanted: str, at: Location | None = None, /) -> ConfigFile | None: ...


#: How a process manager's entry that runs a script of the project (`web: bash Procfile.sh`)
#: is followed to the server the script starts: `scripts.follow_words`, which the readers
#: hand to the Procfile and supervisord readers (they cannot import it: it reads them).
FollowWords = Callable[[Path, Sequence["Word"], Mapping[str, str], FindConfig], "AppServer | None"]

#: How a file read on its own finds what it names in the images of the run in progress:
#: (the file, the path it names, where) -> the file, set by `images.images_of_run`.
IN_IMAGES: contextvars.ContextVar[
    Callable[[Path, str, Location | None], ConfigFile | None] | None
] = contextvars.ContextVar("servertune_check_in_images", default=None)

#: The files the run's scripts write with a here-document (`cat > /srv/start <<EOF`), by
#: absolute path, set by `written_files.written_by_scripts`.
WRITTEN_BY_SCRIPTS: contextvars.ContextVar[Callable[[str], ConfigFile | None] | None] = (
    contextvars.ContextVar("servertune_check_written_by_scripts", default=None)
)

#: A path that one variable begins and no other expansion is in (`$LNDG_DIR/lndg.ini`,
#: `${LNDG_DIR}/lndg.ini`).
_UNKNOWN_FOLDER = re.compile(
    r"\A\$(?:\{(?P<braced>[A-Za-z_]\w*)\}|(?P<plain>[A-Za-z_]\w*))(?P<rest>/[^$`]+)\Z"
)


def unknown_folder_key(script: Path, path: str) -> str | None:
    """How a file a script writes below a folder only the running script knows
    (`cat > $LNDG_DIR/lndg.ini <<EOF`) is found again: by that script and the path as written
    (one spelling for `$DIR` and `${DIR}`), never by another file, whose `$LNDG_DIR` may be
    another folder; None for any other path."""
    found = _UNKNOWN_FOLDER.match(path)
    if found is None:
        return None
    name = found["braced"] or found["plain"]
    return f"{script}\0${name}{posixpath.normpath(found['rest'])}"


#: The `ENV` line that sets a variable in the image of the run that copies a file: (the
#: file, the variable) -> its line, set by `images.images_of_run`.
IMAGE_ENV_AT: contextvars.ContextVar[Callable[[Path, str], Location | None] | None] = (
    contextvars.ContextVar("servertune_check_image_env_at", default=None)
)


#: Whether the command being followed is all its process gets: a compose service's
#: `entrypoint` with no `command` clears the image's `CMD` (the Compose Specification,
#: `entrypoint`), and so does an image that sets its own ENTRYPOINT and no CMD
#: (`compose._no_arguments`), so a launcher it runs gets no arguments, which is known, not
#: "not given".
COMMAND_COMPLETE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "servertune_check_command_complete", default=False
)


#: Whether the environment the command runs in is all in the files read: an image built
#: here (its ENV read) started by a compose service or a k8s container whose whole
#: environment was read (no env_file missing, no value from the deployment's shell or a
#: Secret). Then a variable no file sets is unset where it runs, not merely unknown.
ENVIRONMENT_COMPLETE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "servertune_check_environment_complete", default=False
)


def beside(file: Path) -> FindConfig:
    """Finds a relative path in `file`'s directory (a config a script or Procfile names, in
    the repository it lives in), inside the tree check reads; else (and for an absolute path,
    which names the server's filesystem) in the image of the run that copies `file`."""

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        if "\n" in wanted or len(wanted) > 4096:
            return None  # a script's whole text (`sh -c "..."`), not a file's name
        if not wanted.startswith("/"):
            here, candidate = _beside_here(file, wanted, at)
            if candidate is not None:
                from servertune.check.source import read_text

                try:
                    return ConfigFile(read_text(candidate), candidate, 1)
                except OSError:
                    return None
            if here:
                return None
        # Not beside it (an absolute path names the server's filesystem): the image of this
        # run that copies the file may hold it (`servertune.check.images` sets the lookup).
        lookup = IN_IMAGES.get()
        found = lookup(file, wanted, at) if lookup is not None else None
        written = WRITTEN_BY_SCRIPTS.get()
        if found is None and written is not None and wanted.startswith("/"):
            # A start script a setup script of the repository writes (`cat > PATH <<EOF`).
            return written(posixpath.normpath(wanted))
        key = unknown_folder_key(file, wanted) if written is not None else None
        if found is None and written is not None and key is not None:
            # A config the same script writes below the same unknown folder (a unit it
            # writes runs `--ini $LNDG_DIR/lndg.ini`, its `cat > $LNDG_DIR/lndg.ini <<EOF`).
            return written(key)
        return found

    return find


def _beside_here(file: Path, wanted: str, at: Location | None) -> tuple[bool, Path | None]:
    """What the tree itself says of the relative path `wanted` beside `file`: (True, the
    file) when it holds it, (True, None) when it may not be read (outside the tree, noted at
    `at`), (False, None) when it holds no such file. Worked out once per run for each
    question (`memo`): a chain's lookups climb from every folder up to the root for every
    command of every script on it, and ask the same paths of the same file thousands of
    times (bunkerity/bunkerweb's supervisord programs, judged from every launcher)."""
    from servertune.check import memo
    from servertune.check.resolve import root

    # Keyed by the folder, not the file: the launchers of one chain (N scripts that each
    # run `supervisord -c supervisord.conf` beside them) ask the same question of it.
    where = at or Location(file)
    key = (root(), file.parent, wanted, where)
    return memo.recall(
        memo.run_table("beside"), key, lambda: _look_beside(file.parent, wanted, where)
    )


def _look_beside(folder: Path, wanted: str, at: Location) -> tuple[bool, Path | None]:
    """`_beside_here`, worked out."""
    from servertune.check import resolve

    candidate = Path(os.path.normpath(folder / wanted))  # `a/../b`: `b`, once
    if resolve.admit(candidate, wanted, at, "file") is None:
        return True, None
    try:
        return (True, candidate) if candidate.is_file() else (False, None)
    except OSError:
        return True, None


def expand_shell(text: str, env: Mapping[str, str]) -> str | None:
    """`text` with its `$VAR` expansions done as `sh` does from `env`; None when it names a
    variable `env` does not hold and gives no default (only the running container knows it)."""
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        name = match["braced"] or match["plain"]
        op, word = match["op"], match["word"] or ""
        value = env.get(name)
        if op is None:
            if value is None:
                missing = True
                return ""
            return value
        unset = value is None or (op.startswith(":") and value == "")
        kind = op[-1]
        if "$" in word and ((kind == "+" and not unset) or (kind in "-=" and unset)):
            inner = expand_shell(word, env)  # the word is expanded too, as sh does
            if inner is None:
                missing = True
                return ""
            word = inner
        if kind == "+":
            return "" if unset else word
        if kind == "?":
            if unset:
                missing = True
                return ""
            return value or ""
        return word if unset else (value or "")

    expanded = _PARAMETER.sub(one, text)
    return None if missing else expanded


def expand_known(text: str, env: Mapping[str, str]) -> str:
    """`text` with the expansions `env` knows done and the others kept as written
    (`--harakiri $UWSGI_HARAKIRI` when only the running container sets it)."""

    def one(match: re.Match[str]) -> str:
        expanded = expand_shell(match[0], env)
        return match[0] if expanded is None else expanded

    return _PARAMETER.sub(one, text)


def place_words(
    words: Sequence[str], lines: Sequence[str], file: Path, first: int, last: int
) -> list[Word]:
    """Words written on lines `first`..`last` of `lines`, each on the first of them that holds
    its text (the first line when none does: a word built by quotes or joins)."""
    placed = []
    for text in words:
        number = next((n for n in range(first, last + 1) if text in lines[n - 1]), first)
        placed.append(Word(text, Location(file, number)))
    return placed


def dockerfile_name(path: Path) -> bool:
    """Named as a Dockerfile is (`dockerfile.looks_like_dockerfile`'s test, here for the
    readers below it): `Dockerfile`, `Containerfile`, `Dockerfile.prod`, `web.Dockerfile`."""
    name = path.name.lower()
    if name.endswith(".dockerignore"):
        # BuildKit's per-Dockerfile ignore file (`Dockerfile.dockerignore`, ResearchHub/
        # researchhub-backend): patterns, never instructions.
        return False
    return (
        name in ("dockerfile", "containerfile")
        or name.startswith(("dockerfile.", "containerfile.", "dockerfile-", "dockerfile_"))
        or name.endswith((".dockerfile", ".containerfile"))
    )


#: Names a Dockerfile is given that another file may have too, so its first instruction tells:
#: `DockerfileCelery`, `Docker-geonode` (kartoza/django-bims), `docker_web`, `api.docker`
#: (alphagov/digitalmarketplace-docker-base). (`docker-compose`, `docker-entrypoint` are not.)
_MAYBE_DOCKERFILE = re.compile(r"\A(?:(?:docker|container)(?:file)?[^.]*|[^.].*\.docker)\Z", re.I)

#: The bytes of a file read to find its first instruction.
_HEAD_BYTES = 8192


#: The suffixes of a shell script: a file so named is a script whatever the rest of its name.
SCRIPT_SUFFIXES = (".sh", ".bash", ".envsh")


def written_as_script(path: Path, text: str | None = None) -> bool:
    """A script by its form: a shell suffix, or (when `text` is given) a `#!` first line, which
    no Dockerfile or Caddyfile has. A name that tells a kind (`dockerfile_exec_uwsgi.sh`,
    `Caddyfile.sh`) yields to it: the file is run, not read by docker or caddy."""
    return path.suffix.lower() in SCRIPT_SUFFIXES or (text is not None and text.startswith("#!"))


def is_dockerfile(path: Path, text: str | None = None) -> bool:
    """A Dockerfile: named as one is (`dockerfile_name`), or with a name a Dockerfile may have
    (`_MAYBE_DOCKERFILE`) when its first instruction is FROM or ARG, as a Dockerfile's must be
    (the Dockerfile reference, "Format"). `text` is the file's, read from `path` when None.
    A script is never one, whatever its name (`dockerfile_exec_gunicorn.sh`, GovReady/govready-q:
    `written_as_script`)."""
    named = dockerfile_name(path)
    if not named and not _MAYBE_DOCKERFILE.match(path.name):
        return False
    if written_as_script(path):
        return False
    if text is None:
        try:
            with path.open("rb") as head:
                text = head.read(_HEAD_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return named
    if written_as_script(path, text):
        return False
    if named:
        return True
    first = next(
        (s for line in text.splitlines() if (s := line.strip()) and not s.startswith("#")), ""
    )
    return bool(first) and first.split(maxsplit=1)[0].upper() in ("FROM", "ARG")


def without_comments(text: str) -> str:
    """`text` without its shell comments: from a `#` that begins a word, outside quotes, to
    the end of its line. A `#` inside a word is the word's (`egg:meinheld#gunicorn_worker`,
    `${NAME#prefix}`, `$#`), as `sh` reads it; shlex's own comments would end the line there."""
    out: list[str] = []
    quote, escaped, skipping, previous = "", False, False, "\n"
    for char in text:
        if skipping:
            if char == "\n":
                skipping = False
                out.append(char)
                previous = char
            continue
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (previous.isspace() or previous in ";&|()"):
            skipping = True
            continue
        out.append(char)
        previous = char
    return "".join(out)


def program_name(word: str) -> str:
    """`/usr/local/bin/gunicorn` -> `gunicorn`: the program a word runs, whatever its path;
    also behind a folder held in a variable not known here (`${PYTHON_BIN_DIR}gunicorn`:
    whatever folder it names, the program is gunicorn)."""
    return _FOLDER_VARIABLE.sub("", PurePosixPath(word).name)


#: A variable before a program's name in one word (`${BIN_DIR}gunicorn`): the folder it is
#: run from (unbraced, `$BIN_DIRgunicorn` would be another variable's name).
_FOLDER_VARIABLE = re.compile(r"\A\$\{[A-Za-z_][A-Za-z0-9_]*\}(?=[A-Za-z])")


#: The interpreter's options before `-m` / `-c` (`-u`, `-OO`, `-bB`, `-X dev`, `-W error`, and
#: `-Xfrozen_modules=off`, `-Werror` with the value attached).
_INTERPRETER_OPTION = re.compile(r"\A-(?:(?![mc]\Z)[bBdEhiIOPqsSuvVxXW]+|[XW]\S+)\Z")


def _server_of(words: Sequence[Word]) -> int | None:
    """The index of the server's own word (`gunicorn`, `python -m` before it counted)."""
    for index, word in enumerate(words):
        name = program_name(word.text)
        if server_program(name) is not None:
            return index
        if name == "fastapi" and index + 1 < len(words) and words[index + 1].text == "run":
            return index  # FastAPI's CLI running uvicorn (`_fastapi_run`)
        if name == "litestar" and _litestar_run_at(words[index:]) is not None:
            return index  # Litestar's CLI running uvicorn (`_litestar_run`)
        if index + 1 < len(words) and (name, words[index + 1].text) in LAUNCHERS:
            return index
        if name.startswith("python") and index + 2 < len(words):
            # The interpreter's own options first (`python -u -m gunicorn`, `-X dev`).
            option = index + 1
            while option < len(words) and _INTERPRETER_OPTION.match(words[option].text):
                option += 2 if words[option].text in ("-X", "-W") else 1
            if option < len(words) and _console_script_path(words[option].text):
                return option  # `python ../venv/bin/gunicorn`: the console script, run
            if option + 1 >= len(words):
                return None
            # `python -m gunicorn`, and gunicorn's own entry module `gunicorn.app.wsgiapp`
            # (what its console script imports), `uvicorn.main`, `granian.cli`.
            module = words[option + 1].text.split(".")[0]
            if words[option].text == "-m" and server_program(module) is not None:
                return option + 1  # (`python -m pyuwsgi` too)
            if (program_name(words[option].text), words[option + 1].text) in LAUNCHERS:
                return option  # `python manage.py pyuwsgi`
            if words[option].text == "-m" and module == "debugpy":
                return _debugged(words, option + 2)
            if _DEBUGGER_PATH.search(words[option].text):
                # `python /tmp/debugpy --listen ... -m SERVER`: debugpy installed at a path
                # (`pip install debugpy -t /tmp`) and run as a script is the same launcher.
                return _debugged(words, option + 1)
            # `python -c CODE uvicorn ARGS`: a launcher that runs the server it names with the
            # words after it (servertune's uvicorn.sh, which sets TCP_NODELAY first).
            launcher = words[option].text == "-c" and option + 2 < len(words)
            if launcher and words[option + 2].text in SERVERS:
                return option + 2
            return None  # python runs a script or other module: not a server check reads
    return None


def _console_script_path(word: str) -> bool:
    """A server's console script named by its path (`../venv/bin/gunicorn`,
    `/usr/local/bin/uvicorn`): the interpreter running it as a script runs that server, as
    the script's own `#!` line would."""
    return "/" in word and server_program(program_name(word)) is not None


#: A path naming debugpy's package (or its `__main__.py`), run by Python as a script
#: (`python /tmp/debugpy`, `python vendor/debugpy/`).
_DEBUGGER_PATH = re.compile(r"(?:\A|/)debugpy(?:/__main__\.py|/)?\Z")


#: debugpy's options that take a value (`python -m debugpy --listen 0.0.0.0:5678 -m uvicorn`).
_DEBUGPY_VALUED = frozenset({"--listen", "--connect", "--log-to", "--pid", "--parent-session-pid"})


def _debugged(words: Sequence[Word], start: int) -> int | None:
    """The index of the server `python -m debugpy [OPTIONS] -m SERVER ...` runs under the
    debugger (debugpy runs the module in the same process, as `python -m SERVER` would), its
    options from `start`; None when it runs anything else."""
    index = start
    while index < len(words):
        text = words[index].text
        if text == "-m":
            found = index + 1 < len(words) and words[index + 1].text.split(".")[0] in SERVERS
            return index + 1 if found else None
        if text in _DEBUGPY_VALUED or text.startswith("--configure-"):
            index += 2
        elif text.startswith("--"):
            index += 1  # `--wait-for-client`, `--log-to-stderr`
        else:
            return None
    return None


def _from_server(words: list[Word], index: int) -> list[Word]:
    """The words from the server's own (at `index`) on; from its interpreter when Python runs
    it by its module (`ddtrace-run python -m gunicorn.app.wsgiapp`), which names it so."""
    interpreter = next(
        (i for i in range(index - 1, -1, -1) if program_name(words[i].text).startswith("python")),
        None,
    )
    if interpreter is not None and words[index - 1].text == "-m":
        return words[interpreter:]
    return words[index:]


def _launcher(words: Sequence[Word], index: int) -> Word | None:
    """The CODE of `python -c CODE SERVER` when `index` is that server's word, else None."""
    launched = index >= 3 and words[index - 2].text == "-c"
    return words[index - 1] if launched else None


#: A project's own launcher script: `wait_for_deps.sh`, `/app/bin/wait-for-it.sh`.
_LAUNCHER_SCRIPT = re.compile(r"\A(\S*/)?[\w.-]+\.(sh|bash)\Z")


def _after_thin_launcher(words: list[Word]) -> list[Word]:
    """The words after a project's launcher script that runs its arguments (`wait_for_deps.sh
    python3 -m uvicorn ...`, `wait-for-it.sh db:5432 -- gunicorn ...`, as thin scripts ending
    in `exec "$@"` do): the server command itself; `words` when there is none."""
    if len(words) < 2 or not _LAUNCHER_SCRIPT.match(words[0].text):
        return words
    rest = words[1:]
    separator = next((i for i, w in enumerate(rest) if w.text == "--"), None)
    if separator is not None:
        rest = rest[separator + 1 :]
    index = _server_of(rest)
    if index == 0 and len(rest) == 1:
        # `run-fastapi.sh uvicorn`: a lone server name is the script's own argument (which
        # server it picks), not a command line: every server needs its app or config named.
        return words
    if index == 0 or (index is not None and program_name(rest[0].text).startswith("python")):
        return rest
    return words


def _as_user(words: Sequence[Word], assignments: list[tuple[str, Word]]) -> ServerCommand | None:
    """`su - app -c 'exec gunicorn ...'` (`--command CMD`, `--command=CMD`), `runuser -u app -c
    CMD`: the server the user's shell runs from the command string."""
    texts = [w.text for w in words]
    for index, text in enumerate(texts[1:], 1):
        if text.startswith("--command="):  # `su app --command=CMD`
            words = [*words[:index], Word("-c", words[index].at), Word(text[10:], words[index].at)]
            texts = [w.text for w in words]
            break
    texts = ["-c" if t in ("--command", "--session-command") else t for t in texts]
    if "-c" not in texts[1:-1]:
        return None
    for command in shell_commands(words[texts.index("-c", 1) + 1]):
        found = server_command(command)
        if found is not None:
            return replace(found, assignments=(*assignments, *found.assignments))
    return None


#: start-stop-daemon's options naming the program it starts, the first preferred (`--startas`
#: is what runs; `--exec` also matches the running process).
_DAEMON_PROGRAM = ("--startas", "-a", "--exec", "-x")


def _daemon_started(words: Sequence[Word]) -> list[Word]:
    """The command `start-stop-daemon --start ... --exec PROGRAM -- ARGS` (Debian's helper
    of SysV init scripts) runs: the program `--startas` (else `--exec`) names, with the
    words after `--`; nothing for another action (`--stop`) or a dry run (`--test`)."""
    texts = [w.text for w in words]
    cut = texts.index("--") if "--" in texts else len(texts)
    own = texts[1:cut]
    if not any(t in ("--start", "-S") or t.startswith("-S") for t in own):
        return []
    if any(t in ("--test", "-t") for t in own):
        # start-stop-daemon(8): `--test` prints what it would do and starts nothing (an init
        # script's "already running?" probe before the real start line).
        return []
    for option in _DAEMON_PROGRAM:
        for index, text in enumerate(own):
            if text == option and index + 1 < len(own):
                return [words[index + 2], *words[cut + 1 :]]
            if option.startswith("--") and text.startswith(f"{option}="):
                program = Word(text[len(option) + 1 :], words[index + 1].at)
                return [program, *words[cut + 1 :]]
    return []


def _shell_server(words: list[Word], name: str) -> ServerCommand | None:
    """The server `sh -c SCRIPT [ARG0 ARG1 ...]` starts: the first command of SCRIPT that
    starts one, the words after SCRIPT its `$0 $1 ...`; None for a shell running a script."""
    rest = words[1:]
    if name == "busybox" and rest and rest[0].text in SHELLS:
        rest = rest[1:]
    while rest and rest[0].text.startswith("-") and "c" not in rest[0].text:
        rest = rest[1:]
    if len(rest) >= 2 and rest[0].text.startswith("-") and "c" in rest[0].text:
        directory: str | None = None  # where a `cd DIR;` / `cd DIR &&` before it moved
        for command in shell_commands(rest[1], rest[2:]):
            found = server_command(command)
            if found is not None:
                if found.directory is None and directory is not None:
                    found = replace(found, directory=directory)
                return found
            if [w.text for w in command[:1]] == ["cd"]:
                directory = _cd_folder(directory, [w.text for w in command[1:]])
    return None


def _cd_folder(current: str | None, args: list[str]) -> str | None:
    """The folder `cd ARGS` moves to from `current` (None: where the shell started), as
    written: absolute, or relative to `current`; None when not known from the words
    (`cd "$APP_DIR"`, `cd -`, `cd` alone)."""
    if len(args) != 1 or not args[0] or args[0].startswith(("-", "~")):
        return None
    folder = args[0]
    if "$" in folder or "`" in folder:
        return None
    if folder.startswith("/") or current is None:
        return posixpath.normpath(folder)
    return posixpath.normpath(posixpath.join(current, folder))


def _shell_after(words: list[Word], name: str) -> list[Word] | None:
    """The words from the shell a process wrapper runs (`tini -- bash /entrypoint.sh
    gunicorn`, whose `gunicorn` is the script's argument, not a gunicorn started with no
    options); None when the wrapper runs no shell."""
    after = wrapped(words, name)
    return after if after and program_name(after[0].text) in SHELLS else None


def wrapped(words: Sequence[Word], name: str) -> list[Word]:
    """The command the wrapper `words[0]` (named `name`) runs: the words after its options,
    their values (WRAPPER_VALUED) and its own positional words (`gosu USER`)."""
    after = list(words[1:])
    if name in WRAPPER_SUBCOMMANDS:
        if not after or after[0].text != WRAPPER_SUBCOMMANDS[name]:
            return []  # `watchmedo shell-command --command=...`: runs no command of its words
        after = after[1:]
    valued = WRAPPER_VALUED.get(name, frozenset())
    while after and after[0].text.startswith("-") and after[0].text != "--":
        after = after[2:] if after[0].text in valued else after[1:]
    if after and after[0].text == "--":
        after = after[1:]
    return after[WRAPPERS[name] :]


def server_command(words: Sequence[Word]) -> ServerCommand | None:
    """The server `words` start, or None when they start no server check reads.

    What runs is the first word after `VAR=value` assignments, `exec`/`env` and the process
    wrappers of WRAPPERS; `sh -c SCRIPT` runs the one command of SCRIPT that starts a server.
    """
    words = list(words)
    assignments: list[tuple[str, Word]] = []
    launcher: Word | None = None
    directory: str | None = None
    reloader: Word | None = None
    while words:
        first = words[0]
        match = _ASSIGNMENT.match(first.text)
        if match:
            assignments.append((match[1], Word(match[2], first.at)))
            words = words[1:]
            continue
        name = program_name(first.text)
        if name in SHELLS:
            found = _shell_server(words, name)
            if found is not None:
                return replace(found, assignments=(*assignments, *found.assignments))
            return None
        if name in _SWITCH_USER:
            return _as_user(words, assignments)
        if name == "monofy":
            return _monofied(words, assignments)
        if name == "start-stop-daemon":
            found = server_command(_daemon_started(words))
            return replace(found, assignments=(*assignments, *found.assignments)) if found else None
        if (
            name in WRAPPERS
            and (rest := wrapped(words, name))
            and program_name(rest[0].text) == ("monofy")
        ):
            words = rest  # `tini -- monofy ...`: monofy splits its words into commands
            continue
        if name in RELOADERS and wrapped(words, name):
            reloader = reloader or first
        if name in WRAPPERS and (shell := _shell_after(words, name)) is not None:
            words = shell  # `tini -- bash /entrypoint.sh gunicorn`: the shell runs next
            continue
        if name in WRAPPERS:
            index = _server_of(words[1:])
            if index is None:
                # `exec env VAR=1 gunicorn`: assignments after a wrapper; `nice -n 5 su
                # app -c CMD`: a shell or another user's shell after one
                rest = wrapped(words, name)
                if rest and (
                    _ASSIGNMENT.match(rest[0].text)
                    or program_name(rest[0].text) in SHELLS | _SWITCH_USER
                ):
                    words = rest
                    continue
                return None
            launcher = _launcher(words[1:], index)
            directory = _chained_cd(words[1 : index + 1])
            reloader = reloader or reloading_wrapper(words[: index + 1])
            words = _from_server(words[1:], index)
            break
        break
    return _started(words, tuple(assignments), launcher, directory, reloader)


def _started(
    words: list[Word],
    assignments: tuple[tuple[str, Word], ...],
    launcher: Word | None,
    directory: str | None,
    reloader: Word | None,
) -> ServerCommand | None:
    """The server `words` start once past wrappers and assignments (`server_command`), with
    what the wrappers before them said: a `python -c` launcher, a `cd DIR`, a reloader."""
    words = _after_thin_launcher(words)
    index = _server_of(words)
    if index is None or (index > 0 and not program_name(words[0].text).startswith("python")):
        return None
    if program_name(words[index].text) == "fastapi":
        return _fastapi_run(words[index:], assignments)
    if program_name(words[index].text) == "litestar":
        return _litestar_run(words[index:], assignments)
    launched = (
        LAUNCHERS.get((program_name(words[index].text), words[index + 1].text))
        if index + 1 < len(words)
        else None
    )
    if launched is not None:
        return ServerCommand(
            server=launched,
            program=words[index],
            args=tuple(words[index + 2 :]),
            assignments=assignments,
        )
    server = server_program(program_name(words[index].text))
    if index >= 2 and words[index - 1].text == "-m":
        server = server_program(words[index].text.split(".")[0])  # `-m gunicorn.app.wsgiapp`
    assert server in SERVERS
    if serves_not(server, words[index + 1 :]):
        return None
    return ServerCommand(
        server=server,  # type: ignore[arg-type]
        program=words[index],
        args=tuple(words[index + 1 :]),
        assignments=assignments,
        launcher=launcher or _launcher(words, index),
        directory=directory,
        reloader=reloader,
    )


#: Options after which a server prints or builds something and exits, serving nothing:
#: `--version` and `--help` everywhere; uWSGI's build and introspection options (uwsgi.c:
#: `--build-plugin` compiles a plugin, `--cflags`, `--dot-h`, `--config-py` print its build);
#: gunicorn's `--check-config` and `--print-config` (gunicorn/app/base.py: checked, printed,
#: then `sys.exit`), and `-v` / `-h` its version and help; uWSGI's controls of a running
#: instance (uwsgi.c's immediate options: `--stop PIDFILE` signals it and exits, as do
#: `--reload`, `--pause`, `--suspend`, `--resume`; `--connect-and-read`, `--extract` and
#: `--signal` talk to a socket): a stop script's `uwsgi --stop $PIDFILE` starts nothing.
_NOT_SERVING: dict[str, frozenset[str]] = {
    "uwsgi": frozenset(
        {"--build-plugin", "--cflags", "--dot-h", "--config-py", "--usage", "-h"}
        | {"--stop", "--reload", "--pause", "--suspend", "--resume"}
        | {"--connect-and-read", "--extract", "--signal"}
    ),
    "gunicorn": frozenset({"--check-config", "--print-config", "-v", "-h"}),
}


def serves_not(server: str, args: Sequence[Word]) -> bool:
    """Whether `server` run with `args` exits without serving (`uwsgi --build-plugin x.c`,
    `gunicorn --check-config`): not a launch (seen in MIT-LCP/physionet-build's
    build_plugin.sh, taken for a uWSGI server)."""
    options = _NOT_SERVING.get(server, frozenset()) | {"--version", "--help"}
    return any(word.text.partition("=")[0] in options for word in args)


def monofy_children(words: Sequence[Word]) -> list[list[Word]] | None:
    """The commands `monofy PRE && PRE ... && CHILD ||| CHILD ...` runs side by side (its
    README, https://github.com/bugsink/monofy: the `&&`-separated pre-commands run first, in
    order, then every `|||`-separated command at once, their fates connected); None when
    `words` are not monofy's."""
    if not words or program_name(words[0].text) != "monofy":
        return None
    texts = [w.text for w in words]
    last = max((i for i, t in enumerate(texts) if t == "&&"), default=0)
    children: list[list[Word]] = [[]]
    for word in words[last + 1 :]:
        if word.text == "|||":
            children.append([])
        else:
            children[-1].append(word)
    return [c for c in children if c]


def _monofied(words: Sequence[Word], assignments: list[tuple[str, Word]]) -> ServerCommand | None:
    """The server among the commands monofy runs side by side (`monofy_children`), the first
    that starts one; monofy expands `$VAR` in their words itself."""
    for child in monofy_children(words) or []:
        found = server_command(child)
        if found is not None:
            return replace(found, assignments=(*assignments, *found.assignments), expands=True)
    return None


def reloading_wrapper(words: Sequence[Word]) -> Word | None:
    """The word of the first wrapper among those `words` start with (`exec watchmedo
    auto-restart -- ...`) that restarts what it runs on code changes (RELOADERS); None when
    no wrapper before the command does."""
    rest = list(words)
    while rest and (name := program_name(rest[0].text)) in WRAPPERS:
        if name in RELOADERS and wrapped(rest, name):
            return rest[0]
        rest = wrapped(rest, name)
    return None


def _chained_cd(words: Sequence[Word]) -> str | None:
    """The folder of the last `cd DIR` among the words a wrapper runs before the server
    (`s6-notifyoncheck ... cd /app s6-setuidgid abc uwsgi`): a program in an argument list
    is execline's `cd`, which changes directory and execs into the rest of the line."""
    texts = [w.text for w in words]
    found = [i for i, t in enumerate(texts[:-1]) if t == "cd" and not texts[i + 1].startswith("-")]
    folder = texts[found[-1] + 1] if found else None
    return None if folder is None or "$" in folder or "`" in folder else folder


#: `fastapi run`'s options that are uvicorn's too (fastapi-cli's `run` passes them to
#: `uvicorn.run`); what else it takes (`--app`, `--entrypoint`, `--reload`) sets nothing checked.
_FASTAPI_UVICORN_OPTIONS = frozenset(
    {"--host", "--port", "--workers", "--root-path", "--forwarded-allow-ips"}
)


def _fastapi_run(words: Sequence[Word], assignments: tuple[tuple[str, Word], ...]) -> ServerCommand:
    """`fastapi run [PATH] [--workers N] ...` (FastAPI's own CLI, its templates' CMD): uvicorn,
    run by fastapi-cli with its production defaults: host 0.0.0.0, port 8000, proxy headers
    on. Read as the uvicorn command line it amounts to."""
    program, rest = words[0], list(words[2:])
    args: list[Word] = []
    app = Word("main:app", program.at)  # the app fastapi-cli discovers in PATH: not imported
    given: set[str] = set()
    proxy = True
    index = 0
    while index < len(rest):
        word = rest[index]
        name, sep, _ = word.text.partition("=")
        if name in _FASTAPI_UVICORN_OPTIONS:
            given.add(name)
            if sep:
                args.append(word)
            elif index + 1 < len(rest):
                args += [word, rest[index + 1]]
                index += 1
        elif word.text in ("--proxy-headers", "--no-proxy-headers"):
            proxy = word.text == "--proxy-headers"
        elif word.text in ("--app", "--entrypoint", "-e"):
            index += 1  # its value names the app, not a setting
        elif not word.text.startswith("-"):
            app = Word("main:app", word.at)  # PATH: the app's module, found at run time
        index += 1
    defaults = [("--host", "0.0.0.0"), ("--port", "8000")]
    args += [
        w
        for flag, value in defaults
        if flag not in given
        for w in (Word(flag, program.at), Word(value, program.at))
    ]
    args.append(Word("--proxy-headers" if proxy else "--no-proxy-headers", program.at))
    return ServerCommand(
        server="uvicorn", program=program, args=(*args, app), assignments=assignments
    )


#: `litestar run`'s options as the uvicorn options it passes them on as (litestar's
#: cli/commands/core.py `run_command`: `uvicorn.run(...)`, or `python -m uvicorn` with its
#: `--workers`/`--reload`); its defaults, host 127.0.0.1 and port 8000, are uvicorn's own.
_LITESTAR_VALUED = {
    **dict.fromkeys(("-p", "--port"), "--port"),
    **dict.fromkeys(("-H", "--host"), "--host"),
    **dict.fromkeys(("-W", "--wc", "--web-concurrency"), "--workers"),
    **dict.fromkeys(("-U", "--uds", "--unix-domain-socket"), "--uds"),
    **dict.fromkeys(("-F", "--fd", "--file-descriptor"), "--fd"),
    **dict.fromkeys(("-R", "--reload-dir"), "--reload-dir"),
    "--ssl-certfile": "--ssl-certfile",
    "--ssl-keyfile": "--ssl-keyfile",
}
#: Litestar's own options before its subcommand (`litestar --app app:app run`), with a value.
_LITESTAR_GLOBAL = frozenset({"--app", "--app-dir"})


def _litestar_run_at(words: Sequence[Word]) -> int | None:
    """The index of `run` in `litestar [--app X] [--app-dir D] run ...`; None for another
    subcommand (`litestar routes`, `litestar database upgrade`)."""
    index = 1
    while index < len(words):
        name = words[index].text.partition("=")[0]
        if name in _LITESTAR_GLOBAL:
            index += 1 if "=" in words[index].text else 2
        elif words[index].text == "run":
            return index
        else:
            return None
    return None


def _litestar_run(
    words: Sequence[Word], assignments: tuple[tuple[str, Word], ...]
) -> ServerCommand:
    """`litestar [--app MODULE:APP] run [-p PORT] [-H HOST] [-W N] [--reload] ...` (Litestar's
    CLI, https://docs.litestar.dev/2/usage/cli.html): uvicorn, which its `run` starts (in a
    child `python -m uvicorn` for workers or reload). Read as that uvicorn command line; the
    app, when `--app` does not name it, is the one Litestar discovers (app.py and the like)."""
    program, run = words[0], _litestar_run_at(words) or 1
    app = Word("app:app", program.at)  # discovered at run time: not imported
    for index, word in enumerate(words[1:run], 1):
        if word.text.startswith("--app="):
            app = Word(word.text[6:], word.at)
        elif word.text == "--app" and index + 1 < run:
            app = words[index + 1]
    args: list[Word] = []
    rest = list(words[run + 1 :])
    index = 0
    while index < len(rest):
        word = rest[index]
        name, sep, value = word.text.partition("=")
        uvicorn = _LITESTAR_VALUED.get(name)
        if uvicorn is not None and sep:
            args.append(Word(f"{uvicorn}={value}", word.at))
        elif uvicorn is not None and index + 1 < len(rest):
            args += [Word(uvicorn, word.at), rest[index + 1]]
            index += 1
        elif word.text in ("-r", "--reload"):
            args.append(Word("--reload", word.at))
        elif "$" in word.text:
            args.append(word)  # `${RELOAD}`: unknown here, said as such by the reader
        index += 1
    if any(w.text.startswith("--reload-dir") for w in args):
        args.append(Word("--reload", program.at))  # litestar: `reload or bool(reload_dirs)`
    return ServerCommand(
        server="uvicorn", program=program, args=(*args, app), assignments=assignments
    )


def _braced(tokens: list[str]) -> list[str]:
    """shlex's tokens with a `${NAME:?message with spaces}` kept one word, as sh keeps it
    (the braces of a parameter expansion hold its word together)."""
    joined: list[str] = []
    for token in tokens:
        if joined and joined[-1].count("${") > joined[-1].count("}"):
            joined[-1] += " " + token
        else:
            joined.append(token)
    return joined


#: A redirection word: `>`, `2>`, `>>`, `<`, `&>`, alone or with its target (`2>/dev/null`).
_REDIRECTION = re.compile(r"\A[0-9]*(>>?|<|&>)(\S*)\Z")


def _without_redirections(tokens: list[str]) -> list[str]:
    """The tokens without the shell's redirections, which are no argument of the command:
    `cmd 2>&1 | tee log` (shlex cuts `2>&1` into `2>`, `&`, `1`), `> out`, `2>/dev/null`."""
    kept: list[str] = []
    index = 0
    while index < len(tokens):
        match = _REDIRECTION.match(tokens[index])
        if match is None:
            kept.append(tokens[index])
            index += 1
            continue
        index += 1
        if match[2]:
            continue  # `2>/dev/null`: its target is in the word
        if index < len(tokens) and tokens[index] == "&":
            index += 1  # `2>&1`: the descriptor follows the `&`
        index += 1  # the target
    return kept


#: A word that is one positional parameter of the shell: `$0`, `$1`, `${2}`.
_POSITIONAL = re.compile(r"\A\$(?:(?P<plain>[0-9])|\{(?P<braced>[0-9]+)\})\Z")


def _positional(words: list[Word], positional: Sequence[Word], quoted: bool) -> list[Word]:
    """`words` with the positional parameters of `sh -c SCRIPT ARG0 ARG1 ...` put in: `$0` is
    ARG0, `$1` ARG1, `$@` / `$*` the words from ARG1 on (split again at blanks unless the
    script quotes it, `"$@"`, as the shell splits an unquoted expansion); an unset one is
    dropped, as the shell drops an empty unquoted word."""
    placed: list[Word] = []
    for word in words:
        found = _POSITIONAL.match(word.text)
        if found is not None:
            number = int(found["plain"] or found["braced"])
            if number < len(positional):
                placed.append(positional[number])
        elif word.text in CALLER_ARGUMENTS or word.text in ("${@}", "${*}"):
            for given in positional[1:]:
                if quoted:
                    placed.append(given)
                else:
                    placed.extend(Word(part, given.at) for part in given.text.split())
        else:
            placed.append(word)
    return placed


def shell_commands(script: Word, positional: Sequence[Word] = ()) -> list[list[Word]]:
    """The simple commands of a `sh -c` script (split at `;`, `&&`, `||`, `|`, `&` and
    newlines), each word on the line of the script's word plus its own line in the script.
    `positional` are the words after the script (`sh -c SCRIPT ARG0 ARG1 ...`): its `$0`, `$1`
    ... and `$@`, as a shell-form ENTRYPOINT (`/entrypoint.sh $0 $@`) gets the image's CMD."""
    if positional:
        quoted = '"$@"' in script.text or '"${@}"' in script.text
        return [_positional(command, positional, quoted) for command in shell_commands(script)]
    commands: list[list[Word]] = [[]]
    for offset, raw in _quoted_lines(script.text.split("\n")):
        at = Location(script.at.file, script.at.line + offset)
        # A backslash at the end continues the command on the next line (an even run of
        # them is literal): the words go on, each on its own line.
        trailing = len(raw) - len(raw.rstrip("\\"))
        continued = trailing % 2 == 1
        line = raw[:-1] if continued else raw
        lexer = shlex.shlex(without_comments(line), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        try:
            tokens = list(lexer)
        except ValueError:
            raise CheckInputError(
                f"{at}: cannot split the shell script as sh does (an unclosed quote)"
            ) from None
        for token in _without_redirections(_braced(tokens)):
            if token and set(token) <= set(";&|"):
                commands.append([])
            else:
                commands[-1].append(Word(token, at))
        if not continued and commands[-1]:
            commands.append([])
    return [c for c in commands if c]


def _quoted_lines(lines: list[str]) -> list[tuple[int, str]]:
    """`lines` with each quoted string that spans lines joined into the line it begins on
    (newlines kept inside the quotes), each with its offset: `sh -c 'echo "{` then `}" > f'`
    is one command, as sh reads on to the closing quote (intuitem/ciso-assistant-community's
    compose `command: |`). A quote never closed takes the rest, for the lexer to refuse."""
    joined: list[tuple[int, str]] = []
    quote = ""
    for offset, line in enumerate(lines):
        if quote:
            joined[-1] = (joined[-1][0], f"{joined[-1][1]}\n{line}")
        else:
            joined.append((offset, line))
        quote = _quote_after(line, quote)
    return joined


def _quote_after(line: str, quote: str) -> str:
    """The quote still open after `line`, read from inside `quote` (`""` for none), as sh
    reads quotes; a comment outside quotes ends the line's code."""
    escaped, previous = False, "\n"
    for char in line:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (previous.isspace() or previous in ";&|()"):
            break
        previous = char
    return quote


@dataclass
class _Reading:
    """What is known while reading one command line."""

    file: Path
    command: ServerCommand
    env: dict[str, str]
    env_at: dict[str, Location]
    shell: bool
    unresolved: list[Setting[str]] = field(default_factory=list)
    #: Words of a Dockerfile's exec form holding `$`: passed as written, never expanded.
    unexpanded: list[Setting[str]] = field(default_factory=list)
    #: Words left out that may be the app (`uvicorn $APP`): one stands for it when the
    #: server's parser finds no app.
    unknown_positional: list[Word] = field(default_factory=list)
    #: Config paths read with the variables no file sets expanded to empty (`EMPTIED`).
    emptied: list[Setting[tuple[str, str]]] = field(default_factory=list)


#: A word that is one variable and nothing else (`$EXTRA`, `${EXTRA}`, `${EXTRA:-}`).
_LONE_EXPANSION = re.compile(
    r"\A\$(\{[A-Za-z_][A-Za-z0-9_]*(:?-[^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)\Z"
)

#: Words that stand for the caller's own arguments (`exec gunicorn ... "$@"`): words of their
#: own, never the value of the flag before them.
CALLER_ARGUMENTS = frozenset({"$@", "$*"})


#: A `$NAME` or `${NAME}` in a word, with no operator (`${NAME:-x}` says what an unset one is).
_PLAIN_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))"
)


def _emptied_config(
    reading: _Reading, word: Word, flag: str, find_config: FindConfig | None
) -> Word | None:
    """`--ini "${SCRIPTPATH}/uwsgi.ini"` with SCRIPTPATH set by no file read: the path the
    shell runs with it unset, expanded to empty (`/uwsgi.ini`), when that names a file the
    image or the repository provides; remembered so a note says so. None otherwise (the
    variable may be the container's, and the path is then not known here)."""
    if find_config is None or flag not in _CONFIG_FLAGS or not reading.shell:
        return None
    names = {m["braced"] or m["plain"] for m in _PLAIN_VARIABLE.finditer(word.text)}
    unset = {n: "" for n in names if n not in reading.env}
    if not unset:
        return None
    path = expand_shell(word.text, {**reading.env, **unset})
    if not path or "$" in path or find_config(path, word.at) is None:
        return None
    reading.emptied.append(Setting((word.text, path), word.at))
    return Word(path, word.at)


def _emptied_value(args: Sequence[Word], index: int, expanded: str) -> bool:
    """Whether `args[index]`, a lone `$VAR` the shell expands to `expanded`, is a uWSGI
    option's value set to nothing here (`--workers $WORKERS` with a bare `ARG WORKERS` the build fills): the
    shell would leave the flag without its value, which no server starts with, so the value
    is the build's or the platform's, known only where it runs (higlass-docker)."""
    previous = args[index - 1].text if index else ""
    return (
        previous.startswith("--")
        and "=" not in previous
        and previous[2:] not in UWSGI_NO_VALUE
        and not expanded.strip()
        and _LONE_EXPANSION.match(args[index].text) is not None
    )


def _written_below_unknown_folder(word: Word) -> bool:
    """`word` is a path below a folder only the running script knows (`${APP_DIR}/app.ini`,
    braced or not) that the script holding `word` writes (`unknown_folder_key`)."""
    written = WRITTEN_BY_SCRIPTS.get()
    key = unknown_folder_key(word.at.file, word.text) if written is not None else None
    return written is not None and key is not None and written(key) is not None


def _resolve(reading: _Reading, find_config: FindConfig | None = None) -> list[Word]:
    """The arguments with shell expansions done; a word (and the flag before it) needing a
    variable nobody here knows is left out and remembered, unless it is a config path the
    shell's empty expansion of it names (`_emptied_config`). A lone `-` (stdout, stdin) is a
    flag's value, never a flag; the caller's `"$@"` never takes the flag before it."""
    words: list[Word] = []
    args = list(reading.command.args)
    for index, word in enumerate(args):
        if not reading.shell and "$" in word.text and is_dockerfile(word.at.file):
            # Docker's exec form runs no shell: the server gets `${W:-4}` as written (a
            # fault of the file, said by its rule); read without it, as an unknown value.
            reading.unexpanded.append(Setting(word.text, word.at))
            previous = args[index - 1].text if index else ""
            flag = previous.startswith("-") and "=" not in previous
            if flag and words and words[-1].text == previous:
                words.pop()  # `--workers ${W:-4}`: the flag goes with its value
            continue
        if _written_below_unknown_folder(word):
            # `--ini ${APP_DIR}/app.ini` in a unit the installer writes, as `$APP_DIR/...`:
            # the file the same script writes there (`cat > ${APP_DIR}/app.ini <<EOF`).
            words.append(word)
            continue
        if "$" not in word.text and _unknown_value(word.text):
            # `--port __PORT__`: an installer's placeholder, unknown as a variable set nowhere.
            _leave_out(reading, words, args, index, special=True)
            continue
        if not reading.shell and "${" not in word.text:
            # No shell: the words are the arguments, except a `${NAME}` compose left for a
            # `${NAME:?}` it could not fill here (noted where it is written).
            words.append(word)
            continue
        if "$" not in word.text and "`" not in word.text:
            words.append(word)
            continue
        special = "`" in word.text or re.search(r"\$[@*#?!0-9(]", word.text)
        expanded = None if special or not reading.shell else expand_shell(word.text, reading.env)
        if expanded is not None and _unknown_value(expanded):
            expanded = None  # `$((2 * $(nproc)))`, `__PORT__` in a variable: known where it runs
        if (
            expanded is not None
            and reading.command.server == "uwsgi"
            and _emptied_value(args, index, expanded)
        ):
            expanded = None
            special = True  # not a config path the empty expansion names
        if expanded is not None:
            previous = args[index - 1].text if index else ""
            takes_value = previous.startswith("-") and "=" not in previous
            if word.text.startswith("${") and word.text.endswith("}") and " " in word.text:
                # `${OPTS:- --workers 4 --timeout 180}`: a default of several words, which
                # the shell splits into fields after expanding it (openlibrary's start script).
                words += [Word(part, word.at) for part in expanded.split()]
            elif (
                _LONE_EXPANSION.match(word.text)
                and not takes_value
                and (not expanded.strip() or expanded.lstrip().startswith("-"))
            ):
                # `gunicorn ${EXTRA_ARGS} app` with EXTRA_ARGS="" or "--preload --threads=4":
                # a variable of options, split into fields by the shell (empty: no word).
                words += [Word(part, word.at) for part in expanded.split()]
            else:
                words.append(Word(expanded, word.at))
            continue
        previous = args[index - 1].text if index else ""
        if not special:
            emptied = _emptied_config(reading, word, previous, find_config)
            if emptied is not None:
                words.append(emptied)
                continue
        _leave_out(reading, words, args, index)
    return words


def _unknown_value(text: str) -> bool:
    """A value only the running shell (`$(nproc)`) or another tool (`__PORT__`) fills. A path
    below a placeholder folder (`--config __DATA_DIR__/gunicorn.conf.py`, YunoHost) is not one:
    its file's name is known, and a config so named is looked for by it."""
    marker = placeholder(text)
    return marker is not None and (marker in ("$(", "`") or "/" not in text)


def _leave_out(
    reading: _Reading, words: list[Word], args: Sequence[Word], index: int, *, special: bool = False
) -> None:
    """`args[index]`, a value not known here, left out of `words` and remembered as unresolved,
    with the flag before it (`--bind $ADDR`); a lone `$APP` may stand for the app (`special`:
    never, a placeholder or a command's output is no app's name)."""
    word = args[index]
    previous = args[index - 1].text if index else ""
    reading.unresolved.append(Setting(word.text, word.at))
    if (
        words
        and word.text not in CALLER_ARGUMENTS
        and previous.startswith("-")
        and previous != "-"
        and "=" not in previous
        and words[-1].text == previous
    ):
        reading.unresolved[-1] = Setting(f"{previous} {word.text}", word.at)
        words.pop()  # `--bind $ADDR`: the flag goes with its value
    elif not special and _LONE_EXPANSION.match(word.text):
        reading.unknown_positional.append(word)


#: Each server's options whose value is a count or time a rule judges, by the `AppServer`
#: field they set (short options are each server's own: gunicorn's `-p` is its pidfile).
_OPTION_FIELDS: dict[str, dict[str, str]] = {
    "gunicorn": {
        "-w": "workers", "--workers": "workers", "--threads": "threads",
        "--keep-alive": "keepalive", "-t": "request_timeout", "--timeout": "request_timeout",
        "--graceful-timeout": "graceful_timeout", "--max-requests": "max_requests",
        "--max-requests-jitter": "max_requests_jitter", "--backlog": "backlog",
        "-k": "worker_class", "--worker-class": "worker_class",
    },
    "uvicorn": {
        "--workers": "workers", "--timeout-keep-alive": "keepalive", "--backlog": "backlog",
        "--timeout-graceful-shutdown": "graceful_timeout",
        "--limit-concurrency": "concurrency_limit", "--limit-max-requests": "max_requests",
    },
    "granian": {
        "--workers": "workers", "--blocking-threads": "threads", "--backlog": "backlog",
        "--backpressure": "concurrency_limit",
    },
    "uwsgi": {
        "-p": "workers", "--processes": "workers", "--workers": "workers",
        "--threads": "threads", "--harakiri": "request_timeout", "-t": "request_timeout",
        "--max-requests": "max_requests", "--listen": "backlog", "-l": "backlog",
    },
}  # fmt: skip


def _unknown_fields(app: AppServer, reading: _Reading) -> frozenset[str]:
    """`unknown_fields` of the launch, but for uWSGI a field its ini sets stands: uWSGI reads
    the ini's `processes = 4` and a `--workers $WORKERS` left out here may change it where
    it runs (its note says so), which is not the same as not knowing it (higlass-docker)."""
    fields = unknown_fields(app.kind, reading.unresolved)
    if app.kind != "uwsgi" or app.config_file is None:
        return fields
    from_ini = (app.config_file.file, *app.config_parts)
    return frozenset(
        f
        for f in fields
        if not (
            isinstance(setting := getattr(app, f, None), Setting)
            and not setting.default
            and setting.at.file in from_ini
        )
    )


def unknown_fields(kind: str, unresolved: Sequence[Setting[str]]) -> frozenset[str]:
    """The fields of a `kind` server the unresolved words of its command line would set
    (`--timeout-keep-alive $KA`, `--workers=$W`): written, but known only when it runs."""
    options = _OPTION_FIELDS.get(kind, {})
    names = (re.split(r"[ =]", word.value, maxsplit=1)[0] for word in unresolved)
    return frozenset(options[n] for n in names if n in options)


#: What a child interpreter needs besides the server's own variables.
BASE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
#: Variables of a file's environment that would change the child interpreter that reads the
#: server's command line on this machine rather than the server's settings (an image's
#: `ENV LD_PRELOAD=...` or `PYTHONHOME` must not load anything into check's child).
CHILD_UNSAFE = ("LD_", "PYTHON", "DYLD_")


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` as the child interpreter gets it: the server's variables, minus what would load
    code into the child, with a plain PATH."""
    safe = {k: v for k, v in env.items() if not k.startswith(CHILD_UNSAFE) and k != "PATH"}
    return {**safe, **BASE_ENV}


def _asgi_app(reading: _Reading, args: list[Word]) -> AppServer:
    """uvicorn's or granian's settings from `args`; when its parser finds no app and a word
    left out could be it (`uvicorn $APP`, supervisord's `%(ENV_APP)s`), the last such word
    stands for the app, whatever its name: a value not known never refuses the file."""
    command = reading.command
    try:
        return asgi_server(
            reading.file, command.server, [args], reading.env, reading.env_at, command.program.at
        )
    except CheckInputError as error:
        if "Missing argument" not in str(error) or not reading.unknown_positional:
            raise
    return asgi_server(
        reading.file,
        command.server,
        [[*args, reading.unknown_positional[-1]]],
        reading.env,
        reading.env_at,
        command.program.at,
    )


def in_directory(directory: str, find_config: FindConfig) -> FindConfig:
    """`find_config` for a server started in `directory` (a `cd DIR` before it): a relative
    path is that folder's file first (then, as before the `cd` was read, the path as
    written: the file beside the script, or the WORKDIR's)."""
    inner = find_config

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        if wanted and not wanted.startswith(("/", "$", "~")) and "\n" not in wanted:
            found = inner(posixpath.normpath(posixpath.join(directory, wanted)), at)
            if found is not None:
                return found
        return inner(wanted, at)

    return find


#: The variables a server's own parser reads (`auto_envvar_prefix`, `GUNICORN_CMD_ARGS`,
#: uvicorn's `WEB_CONCURRENCY`), by the option each stands for where it is one.
_OPTION_PREFIXES = ("GRANIAN_", "UVICORN_")
_READ_BY_SERVERS = (*_OPTION_PREFIXES, "UWSGI_", "GUNICORN_CMD_ARGS", "WEB_CONCURRENCY")


def _without_placeholders(
    command: ServerCommand, env: Mapping[str, str] | None, env_at: Mapping[str, Location] | None
) -> tuple[dict[str, str], dict[str, Location], list[Setting[str]]]:
    """`env` without the variables whose value is a placeholder another tool fills
    (`GRANIAN_PORT=__PORT__` in a YunoHost unit, `LEVEL="$(echo ...)"`): unknown, as if set
    nowhere, so never handed to the server's parser. Those the server reads itself are
    returned as options left out (`--port GRANIAN_PORT=__PORT__`), unless the command line
    names them (its own word is then the one left out)."""
    environment = dict(env or {})
    where = dict(env_at or {})
    left_out: list[Setting[str]] = []
    named = " ".join(w.text for w in command.args)
    for name, value in list(environment.items()):
        if not _unknown_value(value):
            continue
        del environment[name]
        if not name.startswith(_READ_BY_SERVERS) or re.search(rf"\$\{{?{name}\b", named):
            continue
        prefix = next((p for p in _OPTION_PREFIXES if name.startswith(p)), None)
        option = "--" + name.removeprefix(prefix).lower().replace("_", "-") + " " if prefix else ""
        at = where.get(name, command.program.at)
        left_out.append(Setting(f"{option}{name}={value[:60]}", at))
    return environment, where, left_out


def read_command(
    file: Path,
    command: ServerCommand,
    env: Mapping[str, str] | None = None,
    env_at: Mapping[str, Location] | None = None,
    *,
    shell: bool = False,
    find_config: FindConfig | None = None,
    unknown: Sequence[Setting[str]] = (),
) -> AppServer:
    """The AppServer `command` starts, read by the server's own parser under `env`.

    `env_at` says where each variable was set (a finding on `WEB_CONCURRENCY` points there);
    `shell` when a shell expands the words first; `find_config` finds a `-c` / `--ini` file;
    `unknown` the options already left out, with their values, by whoever built the words
    (a Python launcher's `port=settings.PORT`): unresolved as a variable no file sets.
    """
    environment, where, left_out = _without_placeholders(command, env, env_at)
    unknown = [*unknown, *left_out]
    for name, word in command.assignments:
        # `WORKERS=$WORKERS gunicorn ...`: the value is expanded first, with the variables
        # set so far (a name it reads that is not known here leaves the name unknown).
        value = expand_shell(word.text, environment) if "$" in word.text else word.text
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
        where[name] = word.at
    reading = _Reading(file, command, environment, where, shell or command.expands, list(unknown))
    if command.directory is not None and find_config is not None:
        find_config = in_directory(command.directory, find_config)
    args = _resolve(reading, find_config)
    try:
        app = _parsed(reading, args, find_config)
    except NothingToCheck:
        raise
    except CheckInputError as refused:
        if "refuses its command line" not in str(refused) or not _held_back(reading, args):
            raise
        # The words left out (or a `$VAR` only the running shell expands) may be what the
        # parser misses: a value check cannot know never refuses a file.
        raise NotFollowed(
            f"{file}: not followed: {command.server}'s command line, read without the values "
            "only the running shell knows, is refused by its parser "
            f"({str(refused).partition('refuses its command line: ')[2][:120]})"
        ) from None
    if command.launcher is not None:
        code = expand_shell(command.launcher.text, environment)
        app = replace(app, listener_nodelay=code is not None and "TCP_NODELAY" in code)
    if command.reloader is not None and app.reloads is None:
        app = replace(app, reloads=Setting(True, command.reloader.at))
    return replace(
        app,
        daemonizes=app.daemonizes or _daemonizes_unknown(app, reading.unresolved),
        sockets=_known_sockets(app, reading.unresolved),
        unresolved=tuple(reading.unresolved),
        emptied=tuple(reading.emptied),
        unknown=app.unknown | _unknown_fields(app, reading),
        unexpanded=tuple(reading.unexpanded),
        missing_config=app.missing_config or _unresolved_config(app, reading.unresolved),
        command_line=True,
        repeated_options=repeated_options(command),
        joined_options=joined_options(command),
        numeric_pidfile=numeric_pidfile(command),
        one_string_exec=(
            Setting(command.program.written, command.program.at)
            if isinstance(command.program, JoinedWord)
            else None
        ),
    )


#: The options that set where a server listens: one left out (its value a variable no file
#: sets) leaves the address unknown, whatever the parser's default would be.
_ADDRESS_FLAGS = {
    "gunicorn": frozenset({"-b", "--bind"}),
    "uvicorn": frozenset({"--host", "--port", "--uds", "--fd"}),
    "granian": frozenset({"--host", "--port", "--uds"}),
    "hypercorn": frozenset({"-b", "--bind", "--insecure-bind"}),
    "daphne": frozenset(
        {"-b", "--bind", "-p", "--port", "-u", "--unix-socket", "--fd", "-e", "--endpoint"}
    ),
    "waitress": frozenset({"--host", "--port", "--listen", "--unix-socket"}),
}


def _parsed(reading: _Reading, args: list[Word], find_config: FindConfig | None) -> AppServer:
    """The AppServer the server's own parser reads from `args`."""
    command, file = reading.command, reading.file
    if command.server == "gunicorn":
        return _gunicorn(reading, args, find_config)
    if command.server == "uwsgi":
        return _uwsgi(reading, args, find_config)
    if command.server == "hypercorn":
        return _hypercorn(reading, args, find_config)
    if command.server == "daphne":
        return _daphne(reading, args)
    if command.server == "waitress":
        from servertune.check.waitress import waitress_server

        return waitress_server(file, [(w.text, w.at) for w in args], command.program.at)
    return _asgi_app(reading, args)


def _daphne(reading: _Reading, args: list[Word]) -> AppServer:
    """daphne's settings from `args`; with no application and a word left out that could be
    it (`daphne $ASGI_APP`), that word stands for it, as for `_asgi_app`."""
    from servertune.check.daphne import daphne_server

    at = reading.command.program.at
    try:
        return daphne_server(reading.file, [(w.text, w.at) for w in args], at)
    except CheckInputError as error:
        if "no application (a required" not in str(error) or not reading.unknown_positional:
            raise
    words = [*args, reading.unknown_positional[-1]]
    return daphne_server(reading.file, [(w.text, w.at) for w in words], at)


def _held_back(reading: _Reading, args: list[Word]) -> bool:
    """Whether words were left out of the command line, or a `$VAR` is still in it."""
    return bool(reading.unresolved or reading.unexpanded) or any("$" in w.text for w in args)


def _daemonizes_unknown(app: AppServer, unresolved: Sequence[Setting[str]]) -> Setting[bool] | None:
    """uWSGI's `--daemonize=$HOME/logs/uwsgi.log`: the log file is known only when it runs, but
    a path there, whatever it is, detaches uWSGI from what started it (only an empty or false
    value would not, and a `$VAR` log path is neither)."""
    if app.kind != "uwsgi":
        return None
    for word in unresolved:
        name = re.split(r"[ =]", word.value, maxsplit=1)[0]
        if name in ("--daemonize", "--daemonize2") and "$" in word.value:
            return Setting(True, word.at)
    return None


def _known_sockets(app: AppServer, unresolved: Sequence[Setting[str]]) -> tuple[Setting[str], ...]:
    """The app's sockets, less those its parser defaulted when an address option's value is
    not known here (`--uds ${GRANIAN_SOCKET}`, `--port $PORT`): such an address is the one
    the running server gets, not the parser's default (granian's 127.0.0.1:8000 would join a
    front on 8000 that never reaches it). A gunicorn bind written beside it is kept. waitress's
    getopt takes a prefix only one option has for it (`--list=127.0.0.1:$PORT` is `--listen`)."""
    from servertune.check.waitress import full_option

    flags = _ADDRESS_FLAGS.get(app.kind, frozenset())
    written = (w.value.split(" ")[0].partition("=")[0] for w in unresolved)
    named = (full_option(f) if app.kind == "waitress" else f for f in written)
    if not any(flag in flags for flag in named):
        return app.sockets
    if app.kind in ("gunicorn", "hypercorn"):
        return tuple(s for s in app.sockets if not s.default)
    return ()  # uvicorn's, granian's, daphne's, waitress' address: host and port from one parse


#: The options that name a server's config file (gunicorn's, uWSGI's).
_CONFIG_FLAGS = frozenset({"-c", "--config", "--ini", "--yaml", "--json", "--xml"})


def _unresolved_config(app: AppServer, unresolved: Sequence[Setting[str]]) -> Setting[str] | None:
    """A config file named through a variable no file read sets (`--ini
    ${SRC_DIR}/uwsgi.ini`): its settings are not known, as for a file not here, so the rules
    that need them do not judge the server's defaults. So are the arguments a script passes on
    from its caller when nothing here calls it (arXiv/arxiv-browse's `/usr/bin/uwsgi -H .venv
    "$@"`): they may set anything (`--ini`, `--processes`), so what the command line leaves
    out is unknown, not the server's default."""
    if app.config_file is not None:
        return None
    for word in unresolved:
        if word.value in CALLER_ARGUMENTS:
            return word
        flag, _, value = word.value.partition(" ")
        if flag.partition("=")[0] in _CONFIG_FLAGS or (not value and flag.endswith(".ini")):
            return word
    return None


#: Options that take one value, which the server's parser overwrites when given again
#: (argparse's `store`, click's single-value options, uWSGI's scalar options); options that
#: add up (`--bind`, `--socket`, `-e`, `--env`, `--header`, `--reload-dir`) are not here.
SINGLE_VALUE: dict[str, dict[str, str]] = {
    "gunicorn": {
        **dict.fromkeys(("-w", "--workers"), "workers"),
        "--threads": "threads",
        **dict.fromkeys(("-t", "--timeout"), "timeout"),
        "--graceful-timeout": "graceful_timeout",
        "--keep-alive": "keepalive",
        "--max-requests": "max_requests",
        "--max-requests-jitter": "max_requests_jitter",
        "--backlog": "backlog",
        **dict.fromkeys(("-k", "--worker-class"), "worker_class"),
        "--worker-connections": "worker_connections",
        **dict.fromkeys(("-c", "--config"), "config"),
    },
    "uvicorn": {
        f"--{n}": n
        for n in (
            "workers",
            "port",
            "host",
            "timeout-keep-alive",
            "timeout-graceful-shutdown",
            "limit-max-requests",
            "limit-concurrency",
            "backlog",
            "loop",
            "http",
        )
    },
    "granian": {
        **{
            f"--{n}": n
            for n in ("workers", "blocking-threads", "port", "host", "interface", "backlog")
        },
        "-w": "workers",
    },
    "hypercorn": {
        **{f"--{n}": n for n in ("keep-alive", "graceful-timeout", "backlog", "max-requests")},
        **dict.fromkeys(("-w", "--workers"), "workers"),
        **dict.fromkeys(("-c", "--config"), "config"),
    },
    "daphne": {
        **dict.fromkeys(("-p", "--port"), "port"),
        **dict.fromkeys(("-b", "--bind"), "bind"),
        **dict.fromkeys(("-u", "--unix-socket"), "unix-socket"),
        **dict.fromkeys(("-t", "--http-timeout"), "http-timeout"),
    },
    # waitress' getopt keeps the last of each but `--listen`, which adds up (its parse_args).
    "waitress": {
        f"--{n}": n
        for n in (
            "host",
            "port",
            "unix-socket",
            "threads",
            "channel-timeout",
            "connection-limit",
            "backlog",
        )
    },
    "uwsgi": {
        **{
            f"--{n}": n
            for n in ("processes", "workers", "threads", "harakiri", "listen", "max-requests")
        },
        "-p": "processes",
        "-t": "harakiri",
        "-l": "listen",
    },
}
#: uWSGI's aliases of one option.
_SAME_OPTION = {"workers": "processes"}


#: An argument that is a long option, blanks, then more (`--bind 0.0.0.0:8000`). A short
#: one is not: argparse, click and getopt all read `-w 4` as `-w` with the value ` 4`.
_JOINED_OPTION = re.compile(r"\A--[A-Za-z][\w.-]*\s+\S")


def joined_options(command: ServerCommand) -> tuple[Setting[str], ...]:
    """The words of the command line that hold a long option and its value in one argument
    (an exec-form item `"--bind 0.0.0.0:8000"`, a quoted word): no shell splits a word, so the
    server gets one argument that starts with the option's name and goes on past it. A
    word the program itself splits (`expands`, monofy's) is none, nor `--opt=a b`, which
    every parser splits at its `=`."""
    return () if command.expands else joined_words(command.args)


def numeric_pidfile(command: ServerCommand) -> Setting[str] | None:
    """gunicorn's `-p`/`--pid` given a bare number (`-p 8000`, `--pid=8000`, `-p8000`): the
    option is its pidfile (gunicorn's settings, `pidfile`: "-p FILE, --pid FILE"), so the
    number, likely meant as a port, names a file. None for any other server or value."""
    if command.server != "gunicorn":
        return None
    args = command.args
    for index, word in enumerate(args):
        flag, sep, value = word.text.partition("=")
        if flag in ("-p", "--pid") and not sep and index + 1 < len(args):
            value, at = args[index + 1].text, args[index + 1].at
        elif (flag == "--pid" and sep) or (flag.startswith("-p") and flag[2:].isdigit()):
            value, at = (value if sep else flag[2:]), word.at
        else:
            continue
        if value.isdigit():
            return Setting(value, at)
    return None


def joined_words(words: Sequence[Word]) -> tuple[Setting[str], ...]:
    """`joined_options` of words as a program gets them (a Kubernetes container's `args`)."""
    return tuple(Setting(w.text, w.at) for w in words if _JOINED_OPTION.match(w.text))


def repeated_options(command: ServerCommand) -> tuple[tuple[Setting[str], Setting[str]], ...]:
    """Single-value options given twice on the command line, as written (before any shell
    expansion: `-w $WORKERS -w $THREADS` is a repeat whatever the variables hold): (first,
    last) with the value each one carries."""
    options = SINGLE_VALUE.get(command.server, {})
    first: dict[str, Setting[str]] = {}
    last: dict[str, Setting[str]] = {}
    args = list(command.args)
    for index, word in enumerate(args):
        flag, sep, value = word.text.partition("=")
        if flag not in options:
            continue
        at = word.at
        if not sep and index + 1 < len(args):
            # The value's line: a flag as short as `-w` may be placed on an earlier line
            # that also holds those characters.
            value, at = args[index + 1].text, args[index + 1].at
        name = options[flag]
        name = _SAME_OPTION.get(name, name)
        written = Setting(f"{flag}{'=' if sep else ' '}{value}".strip(), at)
        if name in first:
            last[name] = written
        else:
            first[name] = written
    return tuple((first[name], last[name]) for name in last)


def config_argument(args: list[Word], flags: tuple[str, ...]) -> tuple[Word | None, list[Word]]:
    """The value of the config flag (`-c X`, `--config=X`) and the other words."""
    rest: list[Word] = []
    found: Word | None = None
    skip = False
    for index, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word.text in flags and index + 1 < len(args):
            found, skip = args[index + 1], True
            continue
        long = next(
            (f for f in flags if f.startswith("--") and word.text.startswith(f + "=")), None
        )
        if long is not None:
            found = Word(word.text.partition("=")[2], word.at)
            continue
        rest.append(word)
    return found, rest


def _config_from_environment(reading: _Reading) -> Word | None:
    """The config file `GUNICORN_CMD_ARGS` names (`-c gunicorn_config.py`), placed where the
    variable is set: gunicorn loads it when the command line names none (`load_config`: the
    command's `-c`, else the environment's, else ./gunicorn.conf.py; its docs, "config")."""
    from servertune.check.gunicorn import full_flags

    try:
        words = full_flags(shlex.split(reading.env.get("GUNICORN_CMD_ARGS", "")))
    except ValueError:  # an unbalanced quote: gunicorn's parser says so when it reads them
        return None
    at = reading.env_at.get("GUNICORN_CMD_ARGS", reading.command.program.at)
    named, _ = config_argument([Word(w, at) for w in words], ("-c", "--config"))
    return named


#: Where a repository keeps the packages it installs: at its root, or under `src/` (the src
#: layout of setuptools, hatch, poetry and flit).
_PACKAGE_ROOTS = ("", "src/")


def _module_config(
    file: Path, named: Word, wanted: str, find_config: FindConfig
) -> ConfigFile | None:
    """The file of gunicorn's `-c python:package.module` when the working directory has none:
    gunicorn imports the module (`importlib.import_module`), from the working directory or the
    installed packages. The working directory is often the project's root above the script
    naming it (`docker/django/gunicorn.sh` naming `python:docker.django.gunicorn_config`); an
    image that installs the project (`pip install .`) imports it from the repository's package,
    `package/module.py` at the tree's root or under `src/` (datacube-ows)."""
    from servertune.check.resolve import admit, inside, root
    from servertune.check.source import read_text

    for up in range(1, _MODULE_LEVELS + 1):
        if not inside(file.parents[min(up, len(file.parents) - 1)], named.at.file):
            break  # never above the tree check reads (nor a note that it was looked at)
        config = find_config("../" * up + wanted, named.at)
        if config is not None:
            return config
    tree = root()
    if tree is None:
        return None
    # The project's folder holding the file that names the module, or one above it up to the
    # tree's root (a monorepo's sub-project): named as the run names its files, so the file
    # found is the same one when it is also read on its own.
    home = named.at.file.parent
    levels = len(home.resolve().relative_to(tree).parts) if inside(home, named.at.file) else 0
    for folder in [home, *[home / ("../" * n) for n in range(1, levels + 1)]]:
        for package_root in _PACKAGE_ROOTS:
            candidate = Path(os.path.normpath(folder / f"{package_root}{wanted}"))
            try:
                if candidate.is_file() and admit(candidate, named.text, named.at, "file"):
                    return ConfigFile(read_text(candidate), candidate, 1)
            except (OSError, CheckInputError):
                return None
    return None


def _gunicorn(reading: _Reading, args: list[Word], find_config: FindConfig | None) -> AppServer:
    from servertune.check.gunicorn import (
        GUNICORN_FLAGS,
        _lines,
        full_flags,
        read_gunicorn_command,
    )

    # `--conf` is `--config` to gunicorn's argparse: every reading below sees the full option.
    written = full_flags([w.text for w in args])
    args = [w if w.text == t else replace(w, text=t) for w, t in zip(args, written, strict=True)]
    named, rest = config_argument(args, ("-c", "--config"))
    if named is None:
        named = _config_from_environment(reading)
    # Without -c gunicorn reads ./gunicorn.conf.py when the working directory has one.
    wanted = named.text if named is not None else "gunicorn.conf.py"
    if wanted.startswith("python:"):
        # gunicorn's `-c python:config.gunicorn`: a module, imported from the working
        # directory (its docs, "config"): the file `config/gunicorn.py` there.
        wanted = wanted.removeprefix("python:").replace(".", "/") + ".py"
    # `-c file:gunicorn.conf.py`: the path, said to be one (gunicorn's `load_config_from_file`).
    wanted = wanted.removeprefix("file:")
    config = (
        find_config(wanted, named.at if named is not None else None)
        if find_config is not None
        else None
    )
    python = named is not None and named.text.startswith("python:")
    if config is None and find_config is not None and named is not None and python:
        config = _module_config(reading.file, named, wanted, find_config)
    missing: Setting[str] | None = None
    if named is not None and config is None:
        missing = Setting(named.text, named.at)
    config_lines: dict[str, int] = {}
    if config is not None:
        config_lines = {
            k: config.first_line + v - 1 for k, v in _lines(config.text, config.file).items()
        }
    env, env_at = reading.env, reading.env_at
    start = reading.command.program.at

    def locate(name: str) -> tuple[Location, bool]:
        flags = GUNICORN_FLAGS.get(name, ())
        found = None
        for word in args:
            text = word.text
            if text in flags or any(text.startswith(f + "=") for f in flags if f[:2] == "--"):
                found = word.at
            elif any(len(text) > 2 and f[:2] == text[:2] for f in flags if f[:2] != "--"):
                found = word.at  # `-w9`
        if found is not None:
            return found, False
        cmd_args = env.get("GUNICORN_CMD_ARGS", "").split()
        if "GUNICORN_CMD_ARGS" in env_at and any(
            w in flags or w.startswith(tuple(f + "=" for f in flags)) for w in cmd_args
        ):
            return env_at["GUNICORN_CMD_ARGS"], False
        if name in config_lines and config is not None:
            return Location(config.file, config_lines[name]), False
        if name == "workers" and "WEB_CONCURRENCY" in env_at:
            return env_at["WEB_CONCURRENCY"], False
        return start, True

    from servertune.check.py_imports import importing_beside

    with (
        tempfile.TemporaryDirectory(prefix="servertune-check-") as directory,
        importing_beside(config.file if config is not None else reading.file),
    ):
        conf = Path(directory) / "gunicorn.conf.py"
        conf.write_text(config.text if config is not None else "")
        app = read_gunicorn_command(
            conf, tuple(w.text for w in rest), child_env(env), reading.file, locate, start
        )
    found_at = Location(config.file, config.first_line) if config is not None else None
    app = replace(app, missing_config=missing, config_file=found_at)
    return _with_paste_ini(app, args, find_config)


def _with_paste_ini(app: AppServer, args: list[Word], find_config: FindConfig | None) -> AppServer:
    """`app` with the PasteDeploy ini its `--paste FILE` (`--paster`) loads the application
    from among its config's parts: a step of its launch, never a server of its own (gunicorn
    ignores the file's `[server:main]`, `paste.read_paste`)."""
    named, _ = config_argument(args, ("--paste", "--paster"))
    if named is None or find_config is None:
        return app
    ini = find_config(named.text.removeprefix("config:").split("#", 1)[0], named.at)
    if ini is None or ini.file in app.config_parts:
        return app
    return replace(app, config_parts=(*app.config_parts, ini.file))


def _hypercorn(reading: _Reading, args: list[Word], find_config: FindConfig | None) -> AppServer:
    """Hypercorn over the config file its `-c` names, when that is found: a TOML file, or the
    Python file `file:path.py` / `python:package.module` names (read without running it);
    one not found leaves what it sets unknown (`hypercorn_server` says so)."""
    from servertune.check.hypercorn import (
        hypercorn_server,
        read_hypercorn_config,
        read_hypercorn_python,
    )

    named, _ = config_argument(args, ("-c", "--config"))
    python = named is not None and named.text.startswith(("python:", "file:"))
    path = named.text if named is not None else ""
    if path.startswith("file:"):
        path = path[5:]
    elif path.startswith("python:"):
        path = path[7:].replace(".", "/") + ".py"  # `python:conf.hypercorn`: conf/hypercorn.py
    found = find_config(path, named.at) if named is not None and find_config is not None else None
    read = read_hypercorn_python if python else read_hypercorn_config
    config = read(found.file, found.text, found.first_line) if found is not None else None
    words = [(w.text, w.at) for w in args]
    app = hypercorn_server(reading.file, words, reading.command.program.at, config)
    if named is not None and found is None and not python:
        app = replace(app, missing_config=Setting(named.text, named.at))
    return app


#: uWSGI's short options (uwsgi.c's option table): which take a value.
UWSGI_SHORT = {
    "s": ("socket", True),
    "p": ("processes", True),
    "t": ("harakiri", True),
    "l": ("listen", True),
    "w": ("module", True),
    "b": ("buffer-size", True),
    "H": ("home", True),
    "z": ("socket-timeout", True),
    "M": ("master", False),
    "T": ("enable-threads", False),
    "L": ("disable-logging", False),
    "d": ("daemonize", True),
    "C": ("chmod-socket", False),
    "i": ("optimize", True),
}


def uwsgi_command_options(args: list[Word]) -> list[tuple[str, str, Location]]:
    """A uWSGI command line as (option, value, where): `--name value`, `--name=value`, a
    lone `--flag` (next word another option, or none, or a flag uWSGI declares without a value:
    `--die-on-term /etc/app.ini`) is true; a `*.ini` positional is `ini`."""
    options: list[tuple[str, str, Location]] = []
    index = 0
    while index < len(args):
        word = args[index]
        text = word.text
        following = args[index + 1] if index + 1 < len(args) else None
        if text.startswith("--"):
            name, sep, value = text[2:].partition("=")
            if sep:
                options.append((name, value, word.at))
            elif (
                following is not None
                and not following.text.startswith("-")
                and name not in UWSGI_NO_VALUE
            ):
                options.append((name, following.text, word.at))
                index += 1
            else:
                options.append((name, "true", word.at))
        elif text.startswith("-") and len(text) >= 2:
            name, takes = UWSGI_SHORT.get(text[1], (text[1], True))
            if len(text) > 2:
                options.append((name, text[2:], word.at))
            elif takes and following is not None and not following.text.startswith("-"):
                options.append((name, following.text, word.at))
                index += 1
            else:
                options.append((name, "true", word.at))
        elif text.endswith((".ini", ".yaml", ".yml", ".json", ".xml")):
            options.append(("ini" if text.endswith(".ini") else "config", text, word.at))
        index += 1
    return options


def _uwsgi(reading: _Reading, args: list[Word], find_config: FindConfig | None) -> AppServer:
    from servertune.check.uwsgi import uwsgi_app, uwsgi_settings

    # UWSGI_<NAME> variables are options (uWSGI's "Configuring uWSGI": environment variables),
    # read before the command line, which repeats or overrides them; UWSGI_INI loads its file
    # as `--ini` does (aether's `export UWSGI_INI=...; uwsgi --stats :1717`).
    options: list[tuple[str, str, Location]] = []
    env_options: list[tuple[str, str, Location]] = []
    #: The option each UWSGI_<NAME> variable sets, by the variable's name.
    from_env: dict[str, str] = {}
    for name, value in reading.env.items():
        if name.startswith("UWSGI_") and name not in ("UWSGI_ORIGINAL_PROC_NAME",):
            option = name[len("UWSGI_") :].lower().replace("_", "-")
            in_image = IMAGE_ENV_AT.get()  # a supervisord config in an image: its ENV line
            at = (
                reading.env_at.get(name)
                or (in_image(reading.file, name) if in_image is not None else None)
                or reading.command.program.at
            )
            env_options.append((option, value, at))
            from_env[option] = name
    missing: Setting[str] | None = None
    config_file: Location | None = None
    parts: list[Path] = []  # the files the config reads in place (`ini =`, `include`)
    command = uwsgi_command_options(args)
    # `--set-ph name=value` (`--set-placeholder`, `--set`): the lines of the ini it loads
    # expand `%(name)` to it (agdsn/sipa: `--ini uwsgi.ini:prefixed --set-ph prefix=/sipa`).
    placeholders = {
        name.strip(): value.strip()
        for option, setting, _ in command
        if option in ("set-ph", "set-placeholder", "set")
        for name, _, value in [setting.partition("=")]
    }
    for option, value, at in [*env_options, *command]:
        if option in ("ini", "config"):
            found = find_config(value, at) if find_config is not None else None
            # `--ini wsgi.ini:web`: that section of the file (uWSGI splits at the last colon).
            name, colon, section = value.rpartition(":")
            opened = value  # the path uWSGI opens
            if found is None and colon and name and find_config is not None:
                found, opened = find_config(name, at), name
            else:
                section = "uwsgi"
            if found is None:
                missing = Setting(value, at)
                continue
            config_file = config_file or Location(found.file, found.first_line)
            # Where uWSGI opens it (its magic `%d` is that folder, not the checkout's).
            directory = reading.command.directory or ""
            if not opened.startswith(("/", "$")) and directory.startswith("/"):
                opened = posixpath.join(directory, opened)
            read = uwsgi_settings(
                found.file,
                found.text,
                reading.env,
                section or "uwsgi",
                placeholders,
                opened if "$" not in opened else None,
            )
            parts += [w.file for _, _, w in read if w.file not in (found.file, *parts)]
            for key, resolved, where in read:
                if where.file == found.file:  # a line of the text found (a heredoc's, a file's)
                    where = Location(found.file, found.first_line + where.line - 1)
                options.append((key, resolved, where))
            continue
        options.append((option, value, at))
    app = uwsgi_app(reading.file, options, reading.command.program.at)
    # `processes` set last by UWSGI_PROCESSES (the image's documented knob): its fix is
    # that variable, not a flag on the command line.
    last = next((k for k, _, _ in reversed(options) if k in ("processes", "workers")), None)
    named = from_env.get(last or "", "")
    return replace(
        app,
        missing_config=missing,
        config_file=config_file,
        workers_env=named,
        config_parts=tuple(parts),
    )


def asgi_server(
    file: Path,
    server: str,
    argvs: list[list[Word]],
    env: Mapping[str, str],
    env_at: Mapping[str, Location],
    start: Location,
    arms: Sequence[Location] = (),
) -> AppServer:
    """uvicorn or granian: each argument list as the server's click command reads it.

    Several lists (with `arms`, where each was written) are a per-worker script: one
    single-worker server per list, each on its own socket.
    """
    parsed = parse_command_lines(file, server, [[w.text for w in a] for a in argvs], child_env(env))
    args = argvs[0]
    prefix = "UVICORN_" if server == "uvicorn" else "GRANIAN_"

    def at(flag: str, words: Sequence[Word] = args) -> tuple[Location, bool]:
        for word in words:
            if word.text == flag or word.text.startswith(flag + "="):
                return word.at, False
        variable = prefix + flag.lstrip("-").replace("-", "_").upper()
        if variable in env_at and variable in env:
            return env_at[variable], False
        if flag == "--workers" and server == "uvicorn" and "WEB_CONCURRENCY" in env_at:
            return env_at["WEB_CONCURRENCY"], False
        return start, True

    def setting(flag: str, value: Any, kind: type[Any] = float) -> Setting[Any]:
        where, default = at(flag)
        return Setting(kind(value), where, default=default)

    values = parsed[0]
    sockets: list[Setting[str]] = []
    for index, one in enumerate(parsed):
        address = _address(one)
        if address is not None:
            where, _ = at("--uds" if one.get("uds") else "--port", argvs[index])
            if arms:
                where = arms[index]
            sockets.append(Setting(address, where, default=False))
    per_worker = len(argvs) > 1 or bool(arms)
    if per_worker:
        workers = Setting(len(parsed), arms[0] if arms else start, default=False)
    elif values.get("workers") is None:  # uvicorn: $WEB_CONCURRENCY, else 1 (its --help says so)
        concurrency = env.get("WEB_CONCURRENCY", "")
        where, default = at("--workers")
        workers = Setting(int(concurrency) if concurrency.isdigit() else 1, where, default)
    else:
        workers = setting("--workers", values["workers"], int)
    if server == "uvicorn":
        threads_at = at("--workers")[0]  # uvicorn has no threads: one, where workers is set
        return _uvicorn(file, values, workers, tuple(sockets), per_worker, setting, threads_at)
    return _granian(file, values, workers, tuple(sockets), per_worker, setting, start)


#: A setting as a flag sets it: (flag, value, type) -> the Setting, at the flag or variable
#: that set it, or at the command (a default) when neither did.
_Flagged = Callable[..., Setting[Any]]


def _uvicorn(
    file: Path,
    values: Mapping[str, Any],
    workers: Setting[int],
    sockets: tuple[Setting[str], ...],
    per_worker: bool,
    setting: _Flagged,
    threads_at: Location,
) -> AppServer:
    """uvicorn's settings as its CLI read them."""
    interface: Literal["wsgi", "asgi"] = "wsgi" if values.get("interface") == "wsgi" else "asgi"
    jitter = values.get("limit_max_requests_jitter") or 0
    graceful = values.get("timeout_graceful_shutdown")
    limit = values.get("limit_concurrency")
    return AppServer(
        kind="uvicorn",
        file=file,
        workers=workers,
        threads=Setting(1, threads_at, default=True),
        sockets=sockets,
        mapped_sockets=per_worker,
        keepalive=setting("--timeout-keep-alive", values["timeout_keep_alive"]),
        request_timeout=None,
        graceful_timeout=None
        if graceful is None
        else setting("--timeout-graceful-shutdown", graceful),
        max_requests=setting("--limit-max-requests", values.get("limit_max_requests") or 0, int),
        max_requests_jitter=setting("--limit-max-requests-jitter", jitter, int),
        backlog=setting("--backlog", values["backlog"], int),
        interface=interface,
        concurrency_limit=None if limit is None else setting("--limit-concurrency", limit, int),
        event_loop=setting("--loop", str(values.get("loop") or "auto"), str),
        reloads=setting("--reload", True, bool) if values.get("reload") else None,
    )


def _granian(
    file: Path,
    values: Mapping[str, Any],
    workers: Setting[int],
    sockets: tuple[Setting[str], ...],
    per_worker: bool,
    setting: _Flagged,
    start: Location,
) -> AppServer:
    """granian's settings as its CLI read them. RSGI, like ASGI, runs each worker's requests
    on an event loop."""
    kill = values.get("workers_kill_timeout")
    blocking = values.get("blocking_threads")
    # granian's own default: its backlog shared among one process's workers
    # (granian/server/common.py: `max(1, backpressure or backlog // workers)`).
    backpressure = values.get("backpressure") or max(
        1, int(values["backlog"]) // max(1, int(values.get("workers") or 1))
    )
    return AppServer(
        kind="granian",
        file=file,
        workers=workers,
        threads=setting("--blocking-threads", blocking if blocking is not None else 1, int),
        sockets=sockets,
        mapped_sockets=per_worker,
        keepalive=None,  # granian has no idle timeout to set: nothing to order against nginx
        request_timeout=None,
        graceful_timeout=None if kill is None else setting("--workers-kill-timeout", kill),
        max_requests=Setting(0, start, default=True),
        max_requests_jitter=Setting(0, start, default=True),
        backlog=setting("--backlog", values["backlog"], int),
        interface="wsgi" if values.get("interface") == "wsgi" else "asgi",
        concurrency_limit=setting("--backpressure", backpressure, int),
        reloads=setting("--reload", True, bool) if values.get("reload") else None,
    )


def _address(values: Mapping[str, Any]) -> str | None:
    """The socket as nginx writes it: `unix:/path`, `127.0.0.1:8001` or `[::1]:8001`."""
    if values.get("uds"):
        return f"unix:{values['uds']}"
    if values.get("fd") is not None:
        return None  # an inherited descriptor: its address is not in the command line
    host = str(values["host"])
    return f"[{host}]:{values['port']}" if ":" in host else f"{host}:{values['port']}"


def words_of(text: str, at: Location) -> list[Word]:
    """A command line written as one string, split as the shell splits it, all on `at`."""
    try:
        return [Word(w, at) for w in shlex.split(text, comments=True)]
    except ValueError:
        raise CheckInputError(f"{at}: cannot split as the shell does (an unclosed quote)") from None
