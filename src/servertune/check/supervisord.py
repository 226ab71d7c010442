"""supervisord configs: each `[program:x]` section's `command=` is a command line.

supervisord's own grammar (supervisord.org/configuration.html): an ini file whose
`[program:name]` sections each start one process from `command`, which supervisord splits
with `shlex` (no shell, so no `$VAR` expansion except its own `%(ENV_NAME)s`, left out and
named here as any unknown word). `environment=K="v",K2="v2"` is the process's environment. A
command that starts gunicorn, uvicorn, granian or uWSGI is an app server, read by the same
command-line readers as a Procfile's; a file of other programs (nginx, Celery) starts none.
"""

from __future__ import annotations

import contextvars
import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath

from servertune.check import resolve
from servertune.check.checkout import in_checkout, in_named_checkout
from servertune.check.commands import (
    ConfigFile,
    FindConfig,
    FollowWords,
    Word,
    beside,
    config_argument,
    expand_shell,
    program_name,
    read_command,
    server_command,
    shell_commands,
)
from servertune.check.jinja import TEMPLATE_SUFFIXES
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Location,
    NginxConfig,
    NothingToCheck,
    Setting,
    collect_notes,
    note,
)
from servertune.check.unfollowed import nothing_started
from servertune.check.working_dirs import started_in

__all__ = [
    "NGINX_READER",
    "looks_like_supervisord",
    "nginx_configs",
    "read_programs",
    "read_supervisord",
]

_SECTION = re.compile(r"\A\[([^\]]+)\]\s*(?:[;#].*)?\Z")
_KEY = re.compile(r"\A([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*)\Z")
#: supervisord's `%(ENV_X)s` and `%(program_name)s` expansions. (Keys may hold dots and dashes:
#: `supervisor.rpcinterface_factory`, `stdout_logfile-maxbytes` in some forks.)
_EXPANSION = re.compile(r"%\(([^)]*)\)s")


def looks_like_supervisord(path: Path, text: str) -> bool:
    """An ini file with a `[program:x]`, `[fcgi-program:x]` or `[supervisord]` section,
    whatever its name; never a shell script (a `.sh` file or one with a `#!` line), whose
    here-document may write such a file (`cat > /etc/supervisor/conf.d/x.conf <<EOF`)."""
    if path.suffix in (".sh", ".bash") or text.startswith("#!"):
        return False
    for line in text.splitlines()[:400]:
        match = _SECTION.match(line.strip())
        if match and (
            match[1].startswith(("program:", "fcgi-program:")) or match[1] == "supervisord"
        ):
            return True
    return False


def _environment(value: str) -> dict[str, str]:
    """`K="v",K2=v2` as supervisord parses it (a comma-separated list of KEY=value)."""
    env: dict[str, str] = {}
    lexer = shlex.shlex(value, posix=True)
    lexer.whitespace = ","
    lexer.whitespace_split = True
    try:
        pairs = list(lexer)
    except ValueError:
        return env
    for pair in pairs:
        key, sep, val = pair.strip().partition("=")
        if sep:
            env[key.strip()] = val
    return env


#: The values supervisord's `boolean()` reads as false (its `datatypes.py`).
_FALSE = frozenset({"false", "no", "off", "0"})


def _autostarts(options: dict[str, tuple[str, int]], env: Mapping[str, str] | None) -> bool:
    """supervisord starts the program when it starts: `autostart` unset (true by default) or
    not false, its `%(ENV_X)s` read from `env` (one the files do not give is not known false)."""
    value = _EXPANSION.sub(
        lambda m: (
            (env or {}).get(m[1].removeprefix("ENV_"), m[0]) if m[1].startswith("ENV_") else m[0]
        ),
        options.get("autostart", ("true", 0))[0],
    )
    return value.strip().lower() not in _FALSE


#: supervisord's expansions with a format (`%(process_num)02d`, `%(program_name)s`).
_FORMATTED = re.compile(r"%\(([A-Za-z_][\w.-]*)\)([-#0 +]?\d*)([sd])")


def _own_names(path: Path, section: str, options: dict[str, tuple[str, int]]) -> dict[str, str]:
    """What supervisord expands in a program's values from the section itself ("Section
    Settings" in supervisord's configuration docs: program_name, group_name, process_num,
    numprocs, here): the first process's (`numprocs_start`, 0 by default), in a group of its
    own name (a `[group:x]` listing it is not read)."""
    name = section.split(":", 1)[1] if ":" in section else section
    first = options.get("numprocs_start", ("0", 0))[0].strip()
    return {
        "program_name": name,
        "group_name": name,
        "process_num": first if first.isdigit() else "0",
        "numprocs": options.get("numprocs", ("1", 0))[0].strip() or "1",
        "here": str(path.parent),
        "host_node_name": "",
    }


def _own_expanded(value: str, names: Mapping[str, str]) -> str:
    """`value` with supervisord's own expansions done as Python's `%` formats them
    (`gunicorn--%(program_name)s.socket`, `daphne%(process_num)d.sock`); `ENV_` ones and
    unknown names kept as written."""

    def one(match: re.Match[str]) -> str:
        known = names.get(match[1])
        if known is None or (match[3] == "d" and not known.isdigit()):
            return match[0]
        return ("%" + match[2] + match[3]) % (int(known) if match[3] == "d" else known)

    return _FORMATTED.sub(one, value)


def _command(
    options: dict[str, tuple[str, int]], env: Mapping[str, str] | None, names: Mapping[str, str]
) -> tuple[str, int, dict[str, str]]:
    """A program's `command` (its line) as a shell would read it, and its environment."""
    command, number = options["command"]
    command = _own_expanded(command, names)
    process_env = dict(env or {})
    if "environment" in options:
        process_env.update(_environment(_own_expanded(options["environment"][0], names)))
    # `%(ENV_X)s` is supervisord's spelling of the shell's $X: read it as one.
    command = _EXPANSION.sub(
        lambda m: (
            "${" + m[1].removeprefix("ENV_") + "}" if m[1].startswith("ENV_") else "${" + m[1] + "}"
        ),
        command,
    )
    return command, number, process_env


#: supervisord's defaults: stop with SIGTERM, SIGKILL 10 s later (its configuration docs).
_STOPWAITSECS = 10.0


def _stopping(
    path: Path, app: AppServer, options: dict[str, tuple[str, int]], number: int
) -> AppServer:
    """The program's `stopwaitsecs` (or supervisord's 10 s, at the command's line) and its
    `stopsignal` when it names one."""
    wait = Setting(_STOPWAITSECS, Location(path, number), default=True)
    if "stopwaitsecs" in options:
        value, at = options["stopwaitsecs"]
        try:
            wait = Setting(float(int(value.strip())), Location(path, at))
        except ValueError:
            raise CheckInputError(
                f"{path}:{at}: stopwaitsecs {value.strip()!r} is not a whole number of seconds"
            ) from None
    signal = None
    if "stopsignal" in options:
        value, at = options["stopsignal"]
        signal = Setting(value.strip().upper().removeprefix("SIG"), Location(path, at))
    return replace(
        app,
        stop_wait=wait,
        stop_wait_name="stopwaitsecs",
        stop_signal=signal,
        stop_signal_fix="stopsignal = TERM",
    )


def _started(
    path: Path,
    words: list[Word],
    env: dict[str, str],
    find_config: FindConfig,
    follow: FollowWords | None,
) -> AppServer | None:
    """The server a program's command starts: a server command line, or a script of the
    project's it runs (`bash /app/serve.sh`), its line first in the chain."""
    found = server_command(words)
    if found is not None:
        return read_command(path, found, env, {}, shell=True, find_config=find_config)
    if follow is None:
        return None
    try:
        app = follow(path, words, env, find_config)
    except CheckInputError:  # a script here that is not one: said when it is read
        return None
    if app is None:
        return None
    return replace(app, launched_by=(words[0].at, *app.launched_by))


def _fcgi_socket(
    path: Path, section: str, options: dict[str, tuple[str, int]], app: AppServer
) -> AppServer:
    """An `[fcgi-program:x]`'s `socket=`: supervisord binds it and hands it to the program as
    fd 0 (`uvicorn --fd 0`), so it is where the server listens."""
    if not section.startswith("fcgi-program:") or "socket" not in options or app.sockets:
        return app
    value, number = options["socket"]
    address = _own_expanded(value, _own_names(path, section, options)).strip()
    if address.startswith("tcp://"):
        address = address.removeprefix("tcp://")
    elif address.startswith("unix://"):  # `unix:///tmp/x.sock`, as nginx writes `unix:/tmp/x.sock`
        address = "unix:/" + address.removeprefix("unix://").lstrip("/")
    return replace(app, sockets=(Setting(address, Location(path, number)),))


def _included(path: Path, value: str, at: Location, find_config: FindConfig) -> list[Path]:
    """`[include] files = a/*.conf b.ini`: the files its globs match, relative to this file
    (supervisord's rule). An absolute glob names the image's files: the repository's files
    the image that runs this config holds there (`COPY conf/ /etc/app/` puts
    conf/conf.d/web.conf at /etc/app/conf.d/web.conf). A glob outside the tree check reads is
    said to be never read, at its line."""
    files: list[Path] = []
    for pattern in value.split():
        if pattern.startswith("/"):
            held = _in_image(path, pattern, at, find_config) or _made(pattern, at, find_config)
            if not held:
                resolve.admit(Path(resolve.glob_prefix(pattern)), pattern, at, "[include] files")
            files.extend(held)
            continue
        wanted = os.path.normpath(path.parent / pattern)
        found = resolve.glob_inside(wanted, pattern, at, "[include] files")
        files.extend(f for f in found if f.is_file() and f.resolve() != path.resolve())
    return files


def _made(pattern: str, at: Location, find_config: FindConfig) -> list[Path]:
    """The repository files the script that runs supervisord linked or copied where the
    absolute glob `pattern` looks, before starting it (`runtime_files`)."""
    from servertune.check.runtime_files import matching

    found = [find_config(inside, at) for inside in matching(pattern)]
    return list(dict.fromkeys(f.file for f in found if f is not None and f.first_line == 1))


def _in_image(path: Path, pattern: str, at: Location, find_config: FindConfig) -> list[Path]:
    """The repository files beside `path` that the image running it holds where the absolute
    glob `pattern` looks: each glob tail (`conf.d/*.conf`, ...) matched here, kept when the
    image's path for it is that very file."""
    parts = PurePosixPath(pattern).parts[1:]
    for cut in range(len(parts)):
        with collect_notes():  # trying tails: only the one that holds counts
            found = resolve.glob_inside(
                os.path.normpath(path.parent.joinpath(*parts[cut:])), pattern, at, "[include]"
            )
        held = []
        for file in found:
            inside = file.relative_to(path.parent).as_posix() if file.is_file() else ""
            image_path = "/" + "/".join((*parts[:cut], inside))
            config = find_config(image_path, at) if inside else None
            if config is not None and config.file.resolve() == file.resolve() != path.resolve():
                held.append(file)
        if held:
            return held
    return []


#: How the run reads the nginx config a program starts (`nginx.read_started_nginx`, set by the
#: run: nginx's reader reads compose files, which read images, whose scripts read this file).
NGINX_READER: contextvars.ContextVar[
    Callable[[ConfigFile, str, FindConfig], NginxConfig] | None
] = contextvars.ContextVar("servertune_check_supervisord_nginx_reader", default=None)

#: The supervisord configs being read, outermost first: an `[include]` of one of them again
#: is not read a second time.
_READING: contextvars.ContextVar[frozenset[Path]] = contextvars.ContextVar(
    "servertune_check_supervisord_reading", default=frozenset()
)


def _included_apps(
    path: Path,
    includes: list[tuple[Path, Location]],
    env: Mapping[str, str] | None,
    find_config: FindConfig | None,
    follow: FollowWords | None,
    started: bool,
) -> tuple[list[AppServer], list[NginxConfig]]:
    """The servers the programs of the included files start, each with the `[include]` line
    first in its chain (a file that is not a supervisord config, or starts none, adds none),
    and the fronts they start (`_nginx_front`)."""
    from servertune.check.source import read_text

    apps: list[AppServer] = []
    fronts: list[NginxConfig] = []
    reading = _READING.get() | {path.resolve()}
    for file, at in includes:
        if file.resolve() in reading:
            continue
        token = _READING.set(reading)
        try:
            found, nginx = read_programs(
                file, read_text(file), env, find_config, follow, started=started
            )
        except (CheckInputError, OSError):
            continue  # said when the file is read on its own
        finally:
            _READING.reset(token)
        apps.extend(replace(app, launched_by=(at, *app.launched_by)) for app in found)
        fronts.extend(nginx)
    return apps, fronts


def _nginx_front(words: list[Word], env: Mapping[str, str], find: FindConfig) -> NginxConfig | None:
    """A program that starts nginx with a config the container renders from a Jinja template
    where it starts (`nginx -c /app/conf/nginx.conf`, the image holding nginx.conf.jnj beside
    that path): that config as it renders, its includes found the same way. None for any other
    program, and for a config that is a file of the repository (the walk reads it itself)."""
    if not words or program_name(words[0].text) != "nginx":
        return None
    named, _ = config_argument(words[1:], ("-c",))
    wanted = expand_shell(named.text, env) if named is not None else None
    if named is None or wanted is None or not wanted.startswith("/"):
        return None
    config = find(wanted, named.at)
    if config is None or not config.file.name.startswith(PurePosixPath(wanted).name + "."):
        return None
    if not config.file.name.endswith(TEMPLATE_SUFFIXES):
        return None
    reader = NGINX_READER.get()
    if reader is None:
        return None
    try:
        return reader(config, wanted, find)
    except CheckInputError as why:
        note("not-followed", named.at, f"{named.at}: not followed: nginx -c {wanted}: {why}")
        return None


def read_supervisord(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    find_config: FindConfig | None = None,
    follow: FollowWords | None = None,
) -> tuple[AppServer, ...]:
    """The app servers the file's programs start; `find_config` finds the files their command
    lines name (default: beside the file; an image's, through its COPYs, when an image's
    command runs supervisord)."""
    return read_programs(path, text, env, find_config, follow)[0]


def _sections(
    path: Path, text: str, find_config: FindConfig | None
) -> tuple[dict[str, dict[str, tuple[str, int]]], list[tuple[Path, Location]]]:
    """Each `[program:x]` section's options (value, line) and the files `[include]` names."""
    section = ""
    programs: dict[str, dict[str, tuple[str, int]]] = {}
    includes: list[tuple[Path, Location]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        match = _SECTION.match(line)
        if match:
            section = match[1]
            if section.startswith(("program:", "fcgi-program:")):
                programs[section] = {}
            continue
        key = _KEY.match(line)
        # An indented line continues the value before it (configparser's rule, which
        # supervisord uses), whatever it holds (`cvat.asgi:application` looks like a key).
        indented = raw[:1] in (" ", "\t")
        if indented and section in programs and programs[section]:
            last = list(programs[section])[-1]
            value, at = programs[section][last]
            programs[section][last] = (f"{value} {line}", at)
        elif indented:
            continue  # a continuation line of another section's value
        elif key and section == "include" and key[1].lower() == "files":
            written = Location(path, number)
            found = _included(path, key[2], written, find_config or beside(path))
            includes.extend((file, written) for file in found)
        elif key and section in programs:
            programs[section][key[1].lower()] = (key[2], number)
        elif not key and not match:
            raise CheckInputError(f"{path}:{number}: not an ini line: {line[:60]!r}")
    return programs, includes


def _program_files(path: Path, options: dict[str, tuple[str, int]]) -> FindConfig:
    """Where the files a program's command names are, for a config read on its own (not from
    an image): with `directory=`, in the checkout it is run from (`checkout.in_checkout`:
    DOAJ's `directory=/home/cloo/doaj` with `-c /home/cloo/doaj/deploy/x.py` is the
    repository's `deploy/x.py`), else beside the config."""
    directory = options.get("directory", ("", 0))[0].strip()
    plain = beside(path)
    checkout = in_checkout(path, directory) if directory else in_named_checkout(path)

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        # Beside the config (or in the image copying it) first: an image's `directory=/app`
        # is where its COPYs put the files, not a checkout.
        found = plain(wanted, at)
        return found if found is not None else checkout(wanted, at)

    return find


#: supervisord's `priority` when a program sets none (its configuration docs).
_PRIORITY = 999


def _priority(options: dict[str, tuple[str, int]]) -> int | None:
    """The program's `priority` (999 when unset); None when it is not a literal number."""
    try:
        return int(options.get("priority", (str(_PRIORITY), 0))[0].strip())
    except ValueError:
        return None


def _front_drains_first(
    path: Path,
    programs: dict[str, dict[str, tuple[str, int]]],
    section: str,
    env: Mapping[str, str] | None,
) -> Setting[str] | None:
    """The `stopsignal = QUIT` of an nginx program of the same config that supervisord stops
    before `section`'s: supervisord stops programs from the highest `priority` down ("higher
    priorities indicate programs that start last and shut down first", its configuration
    docs), and waits for each to be stopped before the next (`ordered_stop_groups_phase_2` in
    supervisord.py). nginx's QUIT is its graceful shutdown: it answers what is in flight, the
    server still running behind it, so the server's own stop cuts nothing. None otherwise
    (equal priorities: no order is promised; TERM: nginx's fast shutdown cuts them itself)."""
    own = _priority(programs[section])
    if own is None:
        return None
    for other, options in programs.items():
        if other == section or "command" not in options or not _autostarts(options, env):
            continue
        words = options["command"][0].split()
        if not words or program_name(words[0]) != "nginx" or "stopsignal" not in options:
            continue
        signal, at = options["stopsignal"]
        theirs = _priority(options)
        if signal.strip().upper().removeprefix("SIG") == "QUIT" and (theirs or 0) > own:
            return Setting(f"[{other}] priority {theirs}, stopsignal QUIT", Location(path, at))
    return None


def read_programs(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    find_config: FindConfig | None = None,
    follow: FollowWords | None = None,
    *,
    started: bool = False,
) -> tuple[tuple[AppServer, ...], tuple[NginxConfig, ...]]:
    """`read_supervisord`'s servers, and the nginx fronts its programs start from configs
    rendered where the container starts (`_nginx_front`); with `started`, only the programs
    supervisord starts when it starts (not those written `autostart = false`)."""
    programs, includes = _sections(path, text, find_config)
    apps: list[AppServer] = []
    fronts: list[NginxConfig] = []
    unstarted: list[list[Word]] = []
    for section, options in programs.items():
        if "command" not in options or (started and not _autostarts(options, env)):
            continue
        own = _own_names(path, section, options)
        command, number, process_env = _command(options, env, own)
        find = find_config or _program_files(path, options)
        for one in shell_commands(Word(command, Location(path, number))):
            unstarted.append(one)
            app = _started(path, one, process_env, find, follow)
            if app is not None:
                app = _fcgi_socket(path, section, options, app)
                app = started_in(app, options.get("directory", ("", 0))[0].strip())
                if app.without_exec is not None and app.without_exec.at.file != path:
                    # The program's script runs the server as a child of its shell.
                    app = replace(app, supervised=Setting(f"[{section}]", Location(path, number)))
                app = replace(
                    app, front_drains_first=_front_drains_first(path, programs, section, env)
                )
                apps.append(_stopping(path, app, options, number))
                break
            front = _nginx_front(one, process_env, find)
            if front is not None:
                fronts.append(front)
                break
    included, nginx = _included_apps(path, includes, env, find_config, follow, started)
    apps.extend(included)
    fronts.extend(nginx)
    if not apps:
        launched = nothing_started(unstarted, find_config or beside(path))
        if launched is not None:
            raise launched
        names = ", ".join(p.removeprefix("program:") for p in programs) or "none"
        raise NothingToCheck(
            f"{path}: supervisord programs ({names}) start no server check reads (gunicorn, "
            "uvicorn, granian, uWSGI)"
        )
    return tuple(apps), tuple(fronts)


def nginx_configs(path: Path, text: str) -> list[str]:
    """The configs the programs supervisord starts run nginx with: each `nginx -c PATH`
    written out (an absolute container path), `/etc/nginx/nginx.conf` (nginx's packaged
    default) for one with no `-c`; none for a value known only where it runs."""
    try:
        programs, _ = _sections(path, text, None)
    except CheckInputError:
        return []
    found: list[str] = []
    for section, options in programs.items():
        if "command" not in options or not _autostarts(options, None):
            continue
        command, number, _ = _command(options, None, _own_names(path, section, options))
        for words in shell_commands(Word(command, Location(path, number))):
            if not words or program_name(words[0].text) != "nginx":
                continue
            named, _ = config_argument(words[1:], ("-c",))
            wanted = "/etc/nginx/nginx.conf" if named is None else named.text
            if wanted.startswith("/") and "$" not in wanted:
                found.append(os.path.normpath(wanted))
    return found
