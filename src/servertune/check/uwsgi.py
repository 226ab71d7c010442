"""uwsgi.ini, read the way uWSGI's own ini loader reads it.

uWSGI keeps every `key = value` line of the `[uwsgi]` section in order: options such as
`socket` and `map-socket` repeat, and a later scalar wins. Supported, as uWSGI documents them
(uwsgi-docs.readthedocs.io, "Configuration" and "Magic variables"):

* comments: lines starting with `;` or `#`; lines before the first section are ignored;
* a key without `=` is a boolean flag set to true;
* `%(option)`: the value of an option (or `set-placeholder` / `set-ph`) set earlier in the file;
* `$(VAR)`: an environment variable (empty when unset, as uWSGI does);
* magic variables: `%d` (directory of the file, with a trailing slash), `%p` (absolute path),
  `%s` (file name), `%n` (name without extension), `%e` (extension), `%c` (name of the directory),
  `%k` (CPU cores: `check` records that the count follows the host), `%h` (host name), `%%`.

Not supported (refused with a message rather than guessed): `@(file)` / `@(exec://...)`
includes, `[section]` selection other than `[uwsgi]`, and `ini = other.ini` chaining.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = ["UWSGI_DEFAULTS", "read_uwsgi", "uwsgi_app", "uwsgi_options"]

#: uWSGI's defaults for the options the rules read (uwsgi-docs "Options"): listen queue 100,
#: no harakiri, no recycling, one process, one thread.
UWSGI_DEFAULTS = {"listen": 100, "harakiri": 0, "max-requests": 0, "processes": 1, "threads": 1}
#: Option aliases as uWSGI declares them: the rules read the canonical name.
_ALIASES = {
    "workers": "processes",
    "p": "processes",
    "s": "socket",
    "uwsgi-socket": "socket",
    "l": "listen",
    "set-ph": "set-placeholder",
}
_SOCKET_OPTIONS = ("socket", "http-socket")
_PLACEHOLDER = re.compile(r"%\(([^)]*)\)|\$\(([^)]*)\)|@\(([^)]*)\)|%(.)")
_TRUE = {"true", "1", "yes", "on", "y", "t"}
#: uWSGI's configuration logic ("Configuration logic" in its docs): a block up to `endif` is
#: read only when its condition holds, with `%(_)` the tested value. Paths are tested on the
#: machine running check (uWSGI tests them where it starts).
_CONDITIONS: dict[str, Callable[[str, Mapping[str, str], Mapping[str, str]], bool]] = {
    "if-env": lambda v, env, opts: v in env,
    "if-not-env": lambda v, env, opts: v not in env,
    "if-exists": lambda v, env, opts: os.path.exists(v),
    "if-not-exists": lambda v, env, opts: not os.path.exists(v),
    "if-file": lambda v, env, opts: os.path.isfile(v),
    "if-not-file": lambda v, env, opts: not os.path.isfile(v),
    "if-dir": lambda v, env, opts: os.path.isdir(v),
    "if-not-dir": lambda v, env, opts: not os.path.isdir(v),
    "if-opt": lambda v, env, opts: v.partition("=")[0] in opts,
    "if-not-opt": lambda v, env, opts: v.partition("=")[0] not in opts,
}


def uwsgi_options(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> list[tuple[str, str, int]]:
    """Every (option, resolved value, line) of the [uwsgi] section, in file order."""
    environ = os.environ if env is None else env
    absolute = path.absolute()
    magic = {
        "d": f"{absolute.parent}/",
        "p": str(absolute),
        "s": absolute.name,
        "n": absolute.stem,
        "e": absolute.suffix,
        "c": absolute.parent.name,
        "k": str(os.cpu_count() or 1),
        "h": socket.gethostname(),
        "%": "%",
    }
    options: list[tuple[str, str, int]] = []
    placeholders: dict[str, str] = {}
    section: str | None = None
    seen_uwsgi = False
    #: The `if-*` blocks around this line, each True when its condition holds.
    blocks: list[bool] = []

    def expand(value: str, line: int) -> str:
        def one(match: re.Match[str]) -> str:
            option, variable, include, letter = match.groups()
            if option is not None:
                if option in placeholders:
                    return placeholders[option]
                raise CheckInputError(
                    f"{path}:{line}: %({option}) names no option set before this line"
                )
            if variable is not None:
                return environ.get(variable, "")
            if include is not None:
                raise CheckInputError(
                    f"{path}:{line}: @({include}) includes are not supported by servertune check"
                )
            return magic.get(letter, match.group(0))

        return _PLACEHOLDER.sub(one, value)

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise CheckInputError(f"{path}:{number}: unterminated section header {line[:40]!r}")
            section = line[1:-1].strip()
            seen_uwsgi = seen_uwsgi or section == "uwsgi"
            continue
        if section != "uwsgi":
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        key = _ALIASES.get(key, key)
        if key == "endif" or key.startswith("end-if"):
            if blocks:
                blocks.pop()
            continue
        if key in _CONDITIONS:
            tested = expand(value.strip(), number)
            active = all(blocks) and _CONDITIONS[key](tested, environ, placeholders)
            blocks.append(active)
            if active:
                # `%(_)` is the tested value: the variable's value, or the path that exists
                placeholders["_"] = environ.get(tested, "") if "env" in key else tested
            continue
        if not all(blocks):
            continue
        value = expand(value.strip(), number) if sep else "true"
        if key == "ini":
            raise CheckInputError(
                f"{path}:{number}: `ini = {value}` chains another file: check that file too"
            )
        if key == "set-placeholder":
            name, _, ph_value = value.partition("=")
            placeholders[name.strip()] = ph_value.strip()
            continue
        placeholders[key] = value
        options.append((key, value, number))
    if not seen_uwsgi:
        raise CheckInputError(f"{path}: no [uwsgi] section (is this a uWSGI ini file?)")
    return options


def _address(value: str) -> str:
    """As nginx would spell the socket: `:8000` binds every interface, a path is a unix socket."""
    if value.startswith(":"):
        return f"0.0.0.0{value}"
    if "/" in value and not value.startswith("["):
        return f"unix:{value}"
    return value


def read_uwsgi(path: Path, text: str, env: Mapping[str, str] | None = None) -> AppServer:
    """The settings uWSGI would run `path` with."""
    options = [(k, v, Location(path, line)) for k, v, line in uwsgi_options(path, text, env)]
    app = uwsgi_app(path, options, Location(path))
    processes = [at.line for k, _, at in options if k == "processes"]
    if processes and "%k" in _raw_value(text, processes[-1]):
        return replace(app, workers_follow_cpu_count=True)
    return app


def uwsgi_app(path: Path, options: list[tuple[str, str, Location]], start: Location) -> AppServer:
    """The AppServer of uWSGI options in the order uWSGI reads them (an ini file's lines, a
    command line's options, `UWSGI_*` variables), each with where it was written; a default
    points at `start`."""
    options = [(_ALIASES.get(k, k), v, at) for k, v, at in options]
    last: dict[str, tuple[str, Location]] = {}
    for key, value, at in options:
        last[key] = (value, at)

    def number(key: str) -> Setting[int]:
        if key not in last:
            return Setting(UWSGI_DEFAULTS[key], start, default=True)
        value, at = last[key]
        try:
            return Setting(int(value), at)
        except ValueError:
            raise CheckInputError(
                f"{at}: {key} must be a whole number; got {value[:40]!r}"
            ) from None

    def flag(key: str) -> Setting[bool] | None:
        if key not in last:
            return None
        value, at = last[key]
        return Setting(value.lower() in _TRUE, at)

    harakiri = number("harakiri")
    return AppServer(
        kind="uwsgi",
        file=path,
        workers=number("processes"),
        threads=number("threads"),
        sockets=tuple(Setting(_address(v), at) for k, v, at in options if k in _SOCKET_OPTIONS),
        mapped_sockets=any(k == "map-socket" for k, _, _ in options),
        keepalive=None,
        request_timeout=Setting(float(harakiri.value), harakiri.at, harakiri.default),
        graceful_timeout=None,
        max_requests=number("max-requests"),
        max_requests_jitter=number("max-requests-delta")
        if "max-requests-delta" in last
        else Setting(0, start, default=True),
        backlog=number("listen"),
        thunder_lock=flag("thunder-lock"),
    )


def _raw_value(text: str, line: int) -> str:
    return text.splitlines()[line - 1].partition("=")[2]
