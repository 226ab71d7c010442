"""Hypercorn: its command line and its TOML config file -> the AppServer it runs.

Hypercorn reads `-c FILE` first (a TOML file; `python:module` and `file:path.py` name Python it
imports: check reads that file's top-level assignments without running it, as it reads
gunicorn's, and a value known only by running it is said unknown), then each option its command
line gives over it (hypercorn/__main__.py: `_load_config`, then `config.X = args.X` for each
option given). Every setting is placed at the word or the TOML line that set it, else at the
command as Hypercorn's default. The settings and defaults are the documented ones
(https://hypercorn.readthedocs.io/en/latest/how_to_guides/configuring.html, "Configuration
options"), checked against Hypercorn 0.18.0's `hypercorn/config.py` and `__main__.py`
(downloaded with `pip download hypercorn`: not a dependency of servertune).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.check.argparse_cli import Given, Option, last, parse_options
from servertune.check.model import AppServer, CheckInputError, Location, Setting, note

__all__ = [
    "HYPERCORN_DOCS",
    "HypercornConfig",
    "hypercorn_server",
    "looks_like_hypercorn",
    "read_hypercorn",
    "read_hypercorn_config",
    "read_hypercorn_python",
]

HYPERCORN_DOCS = "https://hypercorn.readthedocs.io/en/latest/how_to_guides/configuring.html"
#: Hypercorn's defaults (its docs' "Configuration options" table; `Config` in
#: hypercorn/config.py 0.18.0): `bind` 127.0.0.1:8000, one worker, `keep_alive_timeout` 5 s,
#: `graceful_timeout` 3 s, `backlog` 100; a bind without a port is port 8000
#: (`Config._create_sockets`).
DEFAULT_BIND = "127.0.0.1:8000"
DEFAULT_PORT = 8000
DEFAULT_WORKERS = 1
DEFAULT_KEEP_ALIVE_S = 5.0
DEFAULT_GRACEFUL_S = 3.0
DEFAULT_BACKLOG = 100

#: Hypercorn's command line (hypercorn/__main__.py's parser), every option, so one it does not
#: have is refused as Hypercorn refuses it; only the ones that reach the AppServer are read.
OPTIONS = (
    Option("access_log", ("--access-log",)),
    Option("access_logfile", ("--access-logfile",)),
    Option("access_logformat", ("--access-logformat",)),
    Option("backlog", ("--backlog",), convert=int),
    Option("binds", ("-b", "--bind")),
    Option("ca_certs", ("--ca-certs",)),
    Option("certfile", ("--certfile",)),
    Option("cert_reqs", ("--cert-reqs",), convert=int),
    Option("ciphers", ("--ciphers",)),
    Option("config", ("-c", "--config")),
    Option("daemon", ("-D", "--daemon"), takes=0),
    Option("debug", ("--debug",), takes=0),
    Option("error_log", ("--error-log",)),
    Option("error_logfile", ("--error-logfile", "--log-file")),
    Option("graceful_timeout", ("--graceful-timeout",), convert=int),
    Option("read_timeout", ("--read-timeout",), convert=int),
    Option("max_requests", ("--max-requests",), convert=int),
    Option("max_requests_jitter", ("--max-requests-jitter",), convert=int),
    Option("group", ("-g", "--group"), convert=int),
    Option("worker_class", ("-k", "--worker-class")),
    Option("keep_alive", ("--keep-alive",), convert=int),
    Option("keyfile", ("--keyfile",)),
    Option("keyfile_password", ("--keyfile-password",)),
    Option("insecure_binds", ("--insecure-bind",)),
    Option("log_config", ("--log-config",)),
    Option("log_level", ("--log-level",)),
    Option("pid", ("-p", "--pid")),
    Option("quic_binds", ("--quic-bind",)),
    Option("reload", ("--reload",), takes=0),
    Option("root_path", ("--root-path",)),
    Option("server_names", ("--server-name",)),
    Option("statsd_host", ("--statsd-host",)),
    Option("statsd_prefix", ("--statsd-prefix",)),
    Option("umask", ("-m", "--umask"), convert=int),
    Option("user", ("-u", "--user"), convert=int),
    Option("verify_mode", ("--verify-mode",)),
    Option("websocket_ping_interval", ("--websocket-ping-interval",), convert=int),
    Option("workers", ("-w", "--workers"), convert=int),
)

#: The TOML keys read, with the command-line option that sets the same attribute.
_KEYS = {
    "bind": "binds",
    "insecure_bind": "insecure_binds",
    "workers": "workers",
    "keep_alive_timeout": "keep_alive",
    "graceful_timeout": "graceful_timeout",
    "backlog": "backlog",
    "max_requests": "max_requests",
    "use_reloader": "reload",
}


@dataclass(frozen=True)
class HypercornConfig:
    """A Hypercorn TOML config: the values of the keys check reads, each with its line."""

    file: Path
    values: Mapping[str, Any]
    lines: Mapping[str, Location]
    #: Keys a Python config sets to a value known only by running it: unknown, never defaulted.
    unknown: frozenset[str] = frozenset()

    @property
    def at(self) -> Location:
        return Location(self.file, 1)


def looks_like_hypercorn(path: Path, text: str) -> bool:
    """A TOML or Python file named for Hypercorn (`hypercorn.toml`, `hypercorn-prod.toml`,
    `hypercorn_config.py`) that sets a key Hypercorn reads: never a gunicorn config, though a
    Python one assigns `bind` and `workers` as gunicorn's do (arquivo/memorial)."""
    name = path.name.lower()
    return (
        name.startswith("hypercorn")
        and path.suffix in (".toml", ".py")
        and any(re.search(rf"^\s*{key}\s*=", text, re.M) for key in _KEYS)
    )


def read_hypercorn_python(path: Path, text: str, first_line: int = 1) -> HypercornConfig:
    """The keys a Hypercorn Python config (`-c file:PATH`, `-c python:MODULE`; Hypercorn's
    `Config.from_pyfile` takes each top-level name as a setting) assigns, read from its syntax
    tree, never run (pystatic, as gunicorn configs are read). A value that needs running
    the file, or that follows the CPU count, is unknown: no default stands for it."""
    import ast

    from servertune.check._gunicorn_probe import PROBE_CPUS
    from servertune.check.pystatic import Refused, evaluate_config, imported_path

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise CheckInputError(f"{path}: not Python Hypercorn can load ({error})") from None
    try:
        # The CPU counts gunicorn's configs are probed with: a floor at a small count
        # (`max(2, os.cpu_count())`) is as equal on one and two CPUs as a constant.
        one, two = (evaluate_config(tree, {}, cpus, "hypercorn_config") for cpus in PROBE_CPUS)
    except Refused as refused:
        raise CheckInputError(f"{path}: Hypercorn cannot load it ({refused})") from None
    values: dict[str, Any] = {}
    lines: dict[str, Location] = {}
    unknown: set[str] = set()
    for key in _KEYS:
        varies = key in one.values and one.values[key] != two.values.get(key)
        if key in one.unresolved or varies or imported_path(one.values.get(key)) is not None:
            unknown.add(key)
            why = "follows the CPU count" if varies else "is known only when Hypercorn runs it"
            note(
                "unresolved-variable",
                Location(path, first_line + one.lines.get(key, 1) - 1),
                f"{key}: its value {why}; Hypercorn was read without it, so whatever it sets "
                "was not checked",
            )
        elif key in one.values:
            at = Location(path, first_line + one.lines.get(key, 1) - 1)
            value = one.values[key]
            values[key] = _checked(key, list(value) if isinstance(value, tuple) else value, at)
            lines[key] = at
    return HypercornConfig(path, values, lines, frozenset(unknown))


def read_hypercorn_config(path: Path, text: str, first_line: int = 1) -> HypercornConfig:
    """The keys of a Hypercorn TOML file (`Config.from_toml`: each top-level key an attribute
    of its Config), each at the line that sets it; a value Hypercorn would not run with is
    refused at its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CheckInputError(f"{path}: not TOML Hypercorn can load ({error})") from None
    lines: dict[str, Location] = {}
    values: dict[str, Any] = {}
    text_lines = text.splitlines()
    for key in _KEYS:
        if key not in data:
            continue
        number = next(
            (n for n, line in enumerate(text_lines, 1) if re.match(rf"\s*{key}\s*=", line)), 1
        )
        at = Location(path, first_line + number - 1)
        values[key] = _checked(key, data[key], at)
        lines[key] = at
    return HypercornConfig(path, values, lines)


def _checked(key: str, value: Any, at: Location) -> Any:
    """A TOML value of the type Hypercorn uses it as (a count or a time a number, a bind a
    string or a list of them)."""
    if key in ("bind", "insecure_bind"):
        binds = [value] if isinstance(value, str) else value
        if not isinstance(binds, list) or not all(isinstance(b, str) for b in binds):
            raise CheckInputError(f"{at}: {key} is not an address or a list of addresses")
        return binds
    if key == "use_reloader":
        return bool(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CheckInputError(f"{at}: {key} = {value!r} is not a number Hypercorn can use")
    return value


def address(bind: str) -> str | None:
    """A Hypercorn bind as nginx writes the address (`unix:/x.sock`, `0.0.0.0:8000`,
    `[::]:8000`); None for an inherited descriptor (`fd://3`), whose address is not written.
    Hypercorn's own reading (`Config._create_sockets`: brackets dropped, `bind.rsplit(":", 1)`,
    the port `int()` of the last part, else the whole bind is the host on port 8000): no port is
    port 8000, and an empty host (`-b :8080`) is `socket.bind(("", 8080))`, every interface."""
    if bind.startswith("unix:"):
        return bind
    if bind.startswith("fd://"):
        return None
    plain = bind.replace("[", "").replace("]", "")
    host, colon, port = plain.rpartition(":")
    if not colon or not port.isdigit():
        host, port = plain, str(DEFAULT_PORT)
    host = host or "0.0.0.0"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def hypercorn_server(
    file: Path,
    words: Sequence[tuple[str, Location]],
    start: Location,
    config: HypercornConfig | None = None,
) -> AppServer:
    """The Hypercorn a command line starts (its words after `hypercorn`), over `config` when
    its `-c` file was found. A config named but not read (not here, or Python Hypercorn
    imports) leaves the settings the command line does not give unknown: no rule judges
    Hypercorn's defaults for them."""
    given, _ = parse_options("hypercorn", words, OPTIONS)
    named = last(given, "config")
    unread = named is not None and config is None
    if named is not None and named.value.startswith(("python:", "file:")) and config is None:
        note(
            "not-followed",
            named.at,
            f"hypercorn -c {named.value}: Python Hypercorn imports for its settings, not "
            "found among the files read; the settings the command line does not give are "
            "not known",
        )
    return _server(file, given, start, config, unread, command_line=True)


def read_hypercorn(path: Path, text: str) -> AppServer:
    """A Hypercorn TOML config read on its own (found in a folder, or named on the command
    line): the server it configures, with Hypercorn's defaults for what it leaves out. The
    command line that names it, when read, is the longer reading of the same server."""
    read = read_hypercorn_python if path.suffix == ".py" else read_hypercorn_config
    config = read(path, text)
    return _server(path, {}, Location(path, 1), config, unread=False, command_line=False)


def _server(
    file: Path,
    given: Mapping[str, list[Given]],
    start: Location,
    config: HypercornConfig | None,
    unread: bool,
    *,
    command_line: bool,
) -> AppServer:
    values = config.values if config is not None else {}

    def setting(key: str, default: Any, kind: type[Any]) -> Setting[Any] | None:
        """The command line's value, else the config's, else the default (None when a
        config named but not read may set it)."""
        flag = last(given, _KEYS[key])
        if flag is not None:
            return Setting(kind(flag.value), flag.at)
        if key in values and config is not None:
            return Setting(kind(values[key]), config.lines[key])
        if unread or (config is not None and key in config.unknown):
            return None
        return Setting(kind(default), start, default=True)

    workers = setting("workers", DEFAULT_WORKERS, int) or Setting(
        DEFAULT_WORKERS, start, default=True
    )
    if workers.value == 0:
        # `workers = 0` serves in Hypercorn's own process (hypercorn/run.py): one all the same.
        workers = dataclasses.replace(workers, value=1)
    backlog = setting("backlog", DEFAULT_BACKLOG, int) or Setting(
        DEFAULT_BACKLOG, start, default=True
    )
    max_requests = setting("max_requests", 0, int) or Setting(0, start, default=True)
    reload = setting("use_reloader", False, bool)
    return AppServer(
        kind="hypercorn",
        file=file,
        workers=workers,
        # One event loop per worker (asyncio, uvloop or trio): no thread count to set.
        threads=Setting(1, workers.at, default=True),
        sockets=_sockets(given, values, config, start, unread),
        mapped_sockets=False,
        keepalive=setting("keep_alive_timeout", DEFAULT_KEEP_ALIVE_S, float),
        request_timeout=None,  # `read_timeout` bounds a socket read, not a request
        graceful_timeout=setting("graceful_timeout", DEFAULT_GRACEFUL_S, float),
        max_requests=max_requests,
        # `--max-requests-jitter` sets the jitter to --max-requests' value (hypercorn
        # 0.18.0's __main__.py), so no jitter is read from it: recycling is not judged here.
        max_requests_jitter=Setting(0, max_requests.at, default=True),
        backlog=backlog,
        interface="asgi",
        config_file=config.at if config is not None else None,
        command_line=command_line,
        reloads=reload if reload is not None and not reload.default else None,
    )


def _sockets(
    given: Mapping[str, list[Given]],
    values: Mapping[str, Any],
    config: HypercornConfig | None,
    start: Location,
    unread: bool,
) -> tuple[Setting[str], ...]:
    """Where it listens: the `--bind`s (each given adds one; any replaces the config's
    `bind`), else the config's `bind`, else 127.0.0.1:8000; and the `insecure_bind`s."""
    binds: list[tuple[str, Location]] = []
    for key, dest in (("bind", "binds"), ("insecure_bind", "insecure_binds")):
        if given.get(dest):
            binds += [(g.value, g.at) for g in given[dest]]
        elif key in values and config is not None:
            binds += [(b, config.lines[key]) for b in values[key]]
        elif key == "bind" and not unread and not (config and key in config.unknown):
            binds.append((DEFAULT_BIND, start))
    sockets = []
    for bind, at in binds:
        if "$" in bind and config is not None and at.file == config.file:
            # `bind = "0.0.0.0:$PORT"` in the file: Hypercorn expands no variable there (its
            # `_create_sockets` takes the whole bind for a host on port 8000 and fails to
            # bind it), so no address is known; never `[0.0.0.0:$PORT]:8000`.
            note(
                "unresolved-variable",
                at,
                f"bind {bind!r}: Hypercorn expands no variable in its config file, so it "
                "cannot bind this as written; the address it listens on is not known",
            )
            continue
        written = address(bind)
        if written is not None:
            sockets.append(Setting(written, at, default=at == start))
    return tuple(sockets)
