"""Launches check does not follow, told apart from launches of nothing.

A command that starts none of the servers check reads (gunicorn, uvicorn, granian, uWSGI) is
either a job (a worker, a migration) or a project's own launcher of a server built in its
code (`kinto start --port 8888`, `archivebox server 0.0.0.0:8000`, `manage.py runserver`).
The second is not "starts no server": it is a link check cannot follow. What tells them
apart is in the files: the command names an address or a listening option, runs a
server-like subcommand, or is a console script the project's own packaging declares.

While one file is read, a link not followed deeper down (a script the image runs, whose
last line is such a launcher) is remembered, so the file that would otherwise start "no
server" says where the chain stopped instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from servertune.check import resolve
from servertune.check.commands import (
    SERVERS,
    SHELLS,
    WRAPPERS,
    FindConfig,
    Word,
    program_name,
    shell_commands,
    wrapped,
)
from servertune.check.development_folders import development_folder
from servertune.check.examples import EXAMPLE_SUFFIXES
from servertune.check.model import (
    DEVELOPMENT_SERVER_DEPLOYED,
    SERVERS_READ,
    Location,
    NotFollowed,
    note,
    server_program,
)

__all__ = [
    "NOT_FOR_PRODUCTION",
    "base_entrypoint_arguments",
    "development_server",
    "development_server_at",
    "first_not_followed",
    "image_development_server",
    "met_since",
    "met_so_far",
    "not_followed_launcher",
    "nothing_started",
    "reading_one_file",
    "remember",
]

#: An address to listen on: `0.0.0.0:8000`, `[::]:8000`, `:8000`, `localhost:8000`. A host
#: name (`db:5432`) is where a dependency waits (`wait-for-it.sh db:5432`), not a listener.
_ADDRESS = re.compile(
    r"\A(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]*\]|localhost|\*)?"
    r":(?:\d{1,5}|\$\{?\w+\}?|\$\{\w+:?-\d{1,5}\})\Z"
)
#: Options a program listens by (`--port 8000`, `--bind=0.0.0.0:80`); `-p` and `-b` are left
#: out: other programs spell other things with them (`mkdir -p`, celery's `-b` broker).
_LISTEN_OPTIONS = frozenset({"--port", "--bind", "--host", "--listen", "--address", "--http"})
#: Subcommands that start a web server by their name (Django's `runserver`, `app server`).
_SERVER_SUBCOMMANDS = frozenset({"runserver", "runserver_plus", "server", "serve", "webserver"})
#: A subcommand named for a server as its last part: `run_api_server`, `run-server`, `api-serve`.
_SERVER_WORD = re.compile(r"[_-](?:server|serve|webserver)\Z")
#: Programs that are not an app server whatever their arguments: the fronts and stores check
#: reads apart (or has no need to), task queues' workers, and the shell's own tools.
_NOT_APP_SERVERS = frozenset(
    {
        *("nginx", "haproxy", "caddy", "traefik", "envoy", "apache2", "httpd"),
        *("redis-server", "postgres", "mysqld", "mongod", "memcached", "supervisord"),
        *("celery", "rq", "dramatiq", "huey", "cron", "crond", "sleep", "tail", "echo"),
        *("arq", "taskiq", "faust"),
        # Container and remote-copy tools: `IMAGE:TAG` and `HOST:PATH` are no app.
        *("docker", "podman", "kubectl", "helm", "ssh", "scp", "rsync"),
        *("cat", "cp", "mkdir", "chown", "chmod", "ln", "rm", "test", "true", "printf"),
        *("wait-for-it", "wait-for-it.sh", "dockerize", "nc", "curl", "wget"),
        # JavaScript's runners: what they serve is no Python app server.
        *("node", "npm", "npx", "yarn", "pnpm", "bun", "deno"),
    }
)
#: Python web frameworks' own commands that serve the app (each framework's CLI docs): the
#: server runs inside the framework's code, with settings check does not read.
_FRAMEWORK_SERVES = {
    "reflex": "run",
    "streamlit": "run",
    "chainlit": "run",
    "solara": "run",
    "panel": "serve",
    "bokeh": "serve",
    "datasette": "serve",
    "mkdocs": "serve",
}
#: Modules `python -m` runs as tools, not as the app: installers, test runners, migrations,
#: task queues.
_TOOL_MODULES = frozenset(
    {
        *("pip", "venv", "ensurepip", "compileall", "pytest", "unittest", "alembic"),
        *("django", "celery", "rq", "dramatiq", "huey", "manage", "playwright", "nltk"),
    }
)
#: The shell's keywords before a command on the same line (`if ...; then exec app; fi`).
_KEYWORDS = frozenset({"then", "else", "do", "{", "!"})
#: A program in a virtualenv's `bin/` (`/app/.venv/bin/monkey`, `/opt/venv/bin/app`): a
#: console script of a Python package.
_CONSOLE_SCRIPT = re.compile(r"(?:\A|/)\.?venv[\w.-]*/bin/[^/]+\Z")
#: A word that names a script which runs the words after it (`/app/entrypoint.sh cmd`).
_SCRIPT = re.compile(r"\A(/|\./)\S+\Z|\A\S+\.(sh|bash)\Z")


def _commands(words: Sequence[Word]) -> Iterator[list[Word]]:
    """The simple commands `words` run, past assignments, process wrappers, `sh -c` strings
    and thin launcher scripts that run their arguments (`entrypoint.sh cmd ...`)."""
    rest = list(words)
    while rest:
        name = program_name(rest[0].text)
        if re.match(r"\A[A-Za-z_]\w*=\(", rest[0].text):
            return  # a bash array's elements (`ARGS=(gunicorn ...)`): data, not a command
        if re.match(r"\A[A-Za-z_]\w*=", rest[0].text) or rest[0].text == "--":
            rest = rest[1:]
        elif name in SHELLS or name in ("su", "runuser"):
            texts = [w.text for w in rest]
            flag = next((i for i, t in enumerate(texts[1:], 1) if re.match(r"\A-\w*c\Z", t)), 0)
            if flag and flag + 1 < len(rest):
                for command in shell_commands(rest[flag + 1]):
                    yield from _commands(command)
                return
            rest = [w for w in rest[1:] if not w.text.startswith("-")]
        elif name in WRAPPERS:
            rest = wrapped(rest, name)
        elif rest[0].text in _KEYWORDS and len(rest) > 1:
            rest = rest[1:]  # `then exec python -m app` on an `if` line: the command after it
        elif _SCRIPT.match(rest[0].text) and len(rest) > 1 and not name.endswith(".py"):
            if _CONSOLE_SCRIPT.search(rest[0].text) or rest[1].text.startswith("-"):
                # `/venv/bin/monkey run_api_server`: a virtualenv's console script, a Python
                # program whose next word is its own subcommand, not a command it runs; a
                # path followed by an option (`/opt/duffy-virtualenv/bin/duffy -c FILE serve`)
                # is the program itself: no command starts with an option.
                yield rest
            rest = rest[1:]  # a launcher script running the command after it
        else:
            yield rest
            return


#: Words the shell reads itself, never a program it looks for on the PATH: its reserved
#: words (`if`, `then`, `done`, ...) and the builtins a script uses for its own state (POSIX's
#: special builtins, bash's `local`, `declare`). No console script of the project runs as
#: one, so the packaging files are not looked for them (bunkerity/bunkerweb's scripts asked
#: for `if`, `fi` and `local` 1,700 times along their chains).
_SHELL_OWN = frozenset(
    {
        *("if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while"),
        *("until", "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]"),
        *(".", ":", "break", "continue", "eval", "exec", "exit", "export", "readonly"),
        *("return", "set", "shift", "times", "trap", "unset", "local", "declare", "typeset"),
    }
)


#: An app named as servers name it, `module:attribute` (`main:app`, `app.wsgi:application`,
#: `app:create_app()`): what a wrapper of a server takes (a base image's `tna-wsgi main:app`).
#: A host's port (`db:5432`), an image's tag (`python:3.12`) and `user:group` are not, by
#: their digits, or by the programs they are given to (_NOT_APP_SERVERS).
_APP_OBJECT = re.compile(r"\A[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\(\))?\Z")


def base_entrypoint_arguments(cmd: Sequence[Word], base: str) -> NotFollowed | None:
    """Why an image's CMD that is only a server's arguments (its first word an app,
    `module:callable`) is not followed when the ENTRYPOINT that takes them is the base
    image's `base`, not built from these files: no program is named `pkg.wsgi:application`,
    so the base's entrypoint runs the server with them (praekeltfoundation/ndoh-hub on
    docker-django-bootstrap: `CMD ["ndoh_hub.wsgi:application", "--workers=2"]`, gunicorn's
    arguments). What it runs is not known here, which is not "starts no server". A CMD of
    options alone (`--config.file=...`) is left as it was: many programs' images take those."""
    if not cmd or not _APP_OBJECT.match(cmd[0].text):
        return None
    shown = " ".join(w.text for w in cmd)[:80]
    return NotFollowed(
        f"{cmd[0].at}: not followed: {shown!r} are arguments for the base image's entrypoint "
        f"({base}), which is not in these files, so the server it starts with them is not "
        "known"
    )


#: A word that is one variable no file read set (`$DUFFY_OPTS`, `${OPTS}`): a unit's or script's
#: options as the host sets them, or nothing; before a subcommand it is options, not the
#: subcommand (CentOS/duffy's ansible unit: `duffy $DUFFY_OPTS serve $DUFFY_APP_OPTS`).
_OPTIONS_VARIABLE = re.compile(r"\A\$(?:[A-Za-z_]\w*|\{[A-Za-z_]\w*\})\Z")


def _first_positional(args: Sequence[Word], index: int) -> bool:
    """Whether `args[index]` is the command's first positional word: every word before it an
    option, the value right after an option (`duffy -c /etc/duffy.yaml serve`: the value of
    `-c`, then the subcommand) or a lone variable of options (`duffy $OPTS serve`); `tool
    serve` with a word before `serve` is not."""
    at = 0
    while at < index:
        if _OPTIONS_VARIABLE.match(args[at].text):
            at += 1  # `duffy $DUFFY_OPTS serve`: a variable of options, or nothing
            continue
        if not args[at].text.startswith("-"):
            return False
        valued = "=" not in args[at].text and at + 1 < index
        at += 2 if valued and not args[at + 1].text.startswith("-") else 1
    return True


def _why(command: list[Word], find_config: FindConfig | None) -> str | None:
    """What in `command` says it starts a server; None when nothing does."""
    program, args = command[0], command[1:]
    name = program_name(program.text)
    module = False
    if name.startswith("python"):
        while args and args[0].text.startswith("-") and args[0].text != "-m":
            args = args[1:]
        if args[:1] and args[0].text == "-m":
            args, module = args[1:], True
        if not args:
            return None
        program, args = args[0], args[1:]
        name = program_name(program.text).removesuffix(".py")
    if (
        name in _NOT_APP_SERVERS
        or name.split(".")[0] in SERVERS
        or server_program(name) is not None
        or "$" in name
    ):
        return None
    if name == "flask" and args[:1] and args[0].text == "run":
        return "`flask run` is Flask's development server"
    if args[:1] and _FRAMEWORK_SERVES.get(name) == args[0].text:
        return f"`{name} {args[0].text}` serves the app from the framework's own code"
    for index, word in enumerate(args):
        option = word.text.partition("=")[0]
        if option in _LISTEN_OPTIONS:
            return f"it takes {option}"
        if _ADDRESS.match(word.text):
            return f"it names the address {word.text}"
        subcommand = word.text in _SERVER_SUBCOMMANDS or _SERVER_WORD.search(word.text)
        if subcommand and _first_positional(args, index):
            return f"its subcommand {word.text!r} starts a server"
        if _APP_OBJECT.match(word.text) and _first_positional(args, index):
            return f"it is given the app {word.text}, as a server's command line names it"
    if module and name.split(".")[0] not in _TOOL_MODULES and all(a.text[:1] == "-" for a in args):
        # `python -m openslides_backend`: the project's package run as the program; what it
        # listens on is in its own code. Its own flags change nothing of that (`-m
        # renku_data_services.data_api.main --single-process`, SwissDataScienceCenter's image).
        return f"it runs the Python module {name}, whose own code decides what it serves"
    if find_config is not None and name not in _SHELL_OWN:
        from servertune.check.packaging import declared_script

        declared = declared_script(name, find_config, program.at)
        if declared is not None:
            return f"it is the project's own console script, declared at {declared}"
    return None


#: Frameworks' development servers, by the subcommand that starts one (each framework's docs:
#: `flask run`, Django's `runserver`, django-extensions' `runserver_plus`): one process that
#: reloads on code changes, never a deployment's server.
_DEVELOPMENT_SUBCOMMANDS = {
    "flask": {"run": "Flask's development server"},
    "manage": {
        "runserver": "Django's development server",
        "runserver_plus": "django-extensions' development server",
    },
    "django-admin": {"runserver": "Django's development server"},
}


def development_server(words: Sequence[Word]) -> str | None:
    """What development server `words` start (`flask run`, `python manage.py runserver`), as
    words for a message; None when they start none."""
    found = development_server_at(words)
    return None if found is None else found[0]


def development_server_at(words: Sequence[Word]) -> tuple[str, Location] | None:
    """`development_server`'s words and the line of the command that starts it."""
    for command in _commands(words):
        texts = [w.text for w in command]
        name = program_name(texts[0])
        if name.startswith("python"):
            rest = [t for t in texts[1:] if not t.startswith("-") or t == "-m"]
            if rest[:1] == ["-m"]:
                rest = rest[1:]
            if not rest:
                return None
            name, texts = program_name(rest[0]).removesuffix(".py"), rest
        subcommand = next((t for t in texts[1:] if not t.startswith("-")), "")
        what = _DEVELOPMENT_SUBCOMMANDS.get(name, {}).get(subcommand)
        if what is not None:
            return f"`{' '.join(texts)[:60]}`, {what}", command[0].at
    return None


#: What Flask and Django say of their development servers, for a message.
NOT_FOR_PRODUCTION = "a server its framework's docs say never to deploy"


def image_development_server(words: Sequence[Word]) -> None:
    """Record a `DEVELOPMENT_SERVER_DEPLOYED` note when `words`, the command of an image's
    final stage, run a framework's development server (hackforla/peopledepot's
    `Dockerfile-aws`: `CMD python manage.py runserver 0.0.0.0:8000`): `production_launch`'s
    image command, which the rule keeps while the image is named for no development and no
    container or other launch here serves instead (its folder's name, `.devcontainer/`, is
    decided here, while the tree read is known)."""
    found = development_server_at(words)
    if found is not None and development_folder(found[1].file) is None:
        note(
            DEVELOPMENT_SERVER_DEPLOYED,
            found[1],
            f"this image's own command runs {found[0]}, {NOT_FOR_PRODUCTION}: a container run "
            "from the image serves with it",
        )


def not_followed_launcher(
    words: Sequence[Word], find_config: FindConfig | None = None
) -> NotFollowed | None:
    """Why `words` (a command line that starts no server check reads) are a launcher check
    does not follow, at its program's line; None when nothing suggests a server."""
    for command in _commands(words):
        why = _why(command, find_config)
        if why is not None:
            shown = " ".join(w.text for w in command)[:80]
            return NotFollowed(
                f"{command[0].at}: not followed: {shown!r} looks like a launcher of a server "
                f"({why}); check reads the command lines of {SERVERS_READ}, "
                "not a server a program starts in its own code, so what it starts is not known"
            )
    return None


#: The links not followed while the current file is read, first met first; None outside a
#: file's reading (nothing is remembered then).
_MET: contextvars.ContextVar[list[NotFollowed] | None] = contextvars.ContextVar(
    "servertune_check_not_followed", default=None
)


@contextlib.contextmanager
def reading_one_file() -> Iterator[None]:
    """A file's reading: the links not followed inside it are its own."""
    token = _MET.set([])
    try:
        yield
    finally:
        _MET.reset(token)


def remember(why: NotFollowed) -> None:
    """A link not followed while reading a launch that goes on without it (a script a
    compose service runs): said if the file it is read for ends up starting no server."""
    met = _MET.get()
    if met is not None:
        met.append(why)


def first_not_followed() -> NotFollowed | None:
    """The first link not followed in the file being read, if any."""
    return met_since(0)


def met_so_far() -> int:
    """How many links not followed the file being read has met: a mark for `met_since`."""
    met = _MET.get()
    return len(met) if met else 0


def met_since(mark: int) -> NotFollowed | None:
    """The first link not followed met after `mark` (`met_so_far`), if any: one met while
    reading a part of the file, not an earlier part's."""
    met = _MET.get()
    return met[mark] if met and len(met) > mark else None


def nothing_started(
    words: Sequence[Sequence[Word]], find_config: FindConfig | None = None
) -> NotFollowed | None:
    """The NotFollowed to raise for a file whose commands `words` start no server check
    reads: a launcher among them, else a link not followed deeper down, else a script of the
    project's that is not among the files read; None when none of these."""
    for command in words:
        found = not_followed_launcher(command, find_config)
        if found is not None:
            return found
    return (
        _paste_config_not_here(words, find_config)
        or _foreign_shell(words)
        or first_not_followed()
        or _script_not_here(words, find_config)
    )


def _paste_config_not_here(
    words: Sequence[Sequence[Word]], find_config: FindConfig | None
) -> NotFollowed | None:
    """`pserve FILE` with FILE not among the files read: pserve serves the server FILE's
    `[server:main]` names (`use = egg:gunicorn#main`, a server check reads), so the config is
    what is missing, not a server (crim-ca/weaver runs `pserve ${APP_CONFIG_DIR}/weaver.ini`,
    kept here only as config/weaver.ini.example)."""
    if find_config is None:
        return None
    for command in words:
        for simple in _commands(command):
            if not simple or program_name(simple[0].text) != "pserve":
                continue
            ini = next((w for w in simple[1:] if not w.text.startswith("-")), None)
            if ini is None or find_config(ini.text, ini.at) is not None:
                continue
            copy = _example_copy(PurePosixPath(ini.text).name)
            shown = f"; {copy} here is an example copy of it, read on its own" if copy else ""
            return NotFollowed(
                f"{ini.at}: config not found here: `pserve {ini.text}` serves the server its "
                f"[server:main] section names (gunicorn, waitress), and {ini.text} is not among "
                f"the files read, so that server is not known{shown}"
            )
    return None


#: Windows' shells (PowerShell, cmd.exe): a language check does not read (`$env:PORT`,
#: `;` and `&` mean other things there), so a command given to one is not known to start
#: nothing (microsoft/presidio's Dockerfile.windows: `powershell -Command "poetry run
#: waitress-serve --port=$env:PORT app:create_app"`).
_FOREIGN_SHELLS = {"powershell": "PowerShell", "pwsh": "PowerShell", "cmd": "cmd.exe"}


def _foreign_shell(words: Sequence[Sequence[Word]]) -> NotFollowed | None:
    """A command run by a Windows shell: not followed, with the shell's name as why."""
    for command in words:
        for simple in _commands(command):
            name = program_name(simple[0].text).lower().removesuffix(".exe")
            if name in _FOREIGN_SHELLS and len(simple) > 1:
                shown = " ".join(w.text for w in simple)[:80]
                return NotFollowed(
                    f"{simple[0].at}: not followed: {shown!r} runs in "
                    f"{_FOREIGN_SHELLS[name]}, whose language check does not read (it reads "
                    "POSIX sh), so what it starts is not known"
                )
    return None


def _example_copy(name: str) -> str | None:
    """A file of the tree named `name` plus an example suffix (`weaver.ini.example`), as a
    path from the tree's root; None when none is, or with no run in progress."""
    top = resolve.root()
    if top is None or "$" in name or not name:
        return None
    wanted = {name + suffix for suffix in EXAMPLE_SUFFIXES}
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = sorted(
            d for d in subfolders if not d.startswith(".") and d != "node_modules"
        )
        found = sorted(wanted.intersection(files))
        if found:
            return (Path(folder) / found[0]).relative_to(top).as_posix()
    return None


def _own_script(text: str) -> bool:
    """A script of the project's named by its path (`_SCRIPT`: `./bin/docker-entrypoint-api.sh`,
    `run.sh`); an absolute path without a script's suffix may name a system program
    (`/usr/local/bin/celery`)."""
    return bool(_SCRIPT.match(text)) and (
        not text.startswith("/") or text.endswith((".sh", ".bash"))
    )


def _script_not_here(
    words: Sequence[Sequence[Word]], find_config: FindConfig | None
) -> NotFollowed | None:
    """A command that runs a script of the project's which is not among the files read (a
    supervisord program's `./bin/docker-entrypoint-api.sh`, copied from another image): what
    it starts is not known, which is not "no server"."""
    if find_config is None:
        return None
    for command in words:
        for simple in _commands(command):
            script = _script_run(simple)
            if _own_script(script.text) and find_config(script.text, script.at) is None:
                return NotFollowed(
                    f"{script.at}: not followed: runs {script.text}, a script not among the "
                    "files read (copied from elsewhere, or made when the container starts), "
                    "so what it starts is not known"
                )
            program = _python_program(simple)
            if program is not None and find_config(program.text, program.at) is None:
                return NotFollowed(
                    f"{program.at}: not followed: runs python {program.text}, a Python program "
                    "not among the files read (the project's own, copied from elsewhere), so "
                    "what it starts is not known"
                )
    return None


def _script_run(simple: Sequence[Word]) -> Word:
    """The program of a simple command, or, when its first word is a launcher's own argument
    (`wrapper.sh BLUE BACKEND ./docker/docker-entrypoint.sh`, where `_commands` left the
    launcher behind), the project's script it runs after it."""
    first = simple[0]
    if _own_script(first.text) or program_name(first.text) in _NOT_APP_SERVERS:
        return first
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", first.text):
        return first  # a program's name, not a launcher's argument word
    later = (w for w in simple[1:] if w.text.endswith((".sh", ".bash")) and _own_script(w.text))
    return next(later, first)


#: A Python program named on the interpreter's command line (`jms`, `bin/serve.py`).
_PROGRAM = re.compile(r"\A[\w.][\w./-]*\Z")


def _python_program(simple: Sequence[Word]) -> Word | None:
    """The project's command-line program `python [options] PROGRAM ...` runs as a launcher
    (`python jms start all`: a program without a `.py` suffix, a project's own CLI, or one
    given a server's subcommand); None for `-m module`, `-c code`, and a `.py` script run for
    a job (`python manage.py migrate`, `python app/backend_pre_start.py`), which starts no
    server as far as anything here says."""
    if not simple or not program_name(simple[0].text).startswith("python"):
        return None
    for index, word in enumerate(simple[1:], 1):
        if word.text.startswith(("-m", "-c")):
            return None
        if word.text.startswith("-"):
            continue  # the interpreter's options (`-u`, `-OO`)
        if not _PROGRAM.match(word.text):
            return None
        serving = any(w.text in _SERVER_SUBCOMMANDS for w in simple[index + 1 :])
        return word if serving or not word.text.endswith(".py") else None
    return None
